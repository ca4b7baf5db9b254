// Transposes of a few thousand elements (64 x 64, 8 x 64 x 64), where a call costs the kernel's
// latency, not bandwidth: one thread per output element, read straight from the input, with no
// shared memory and no barrier. Consecutive threads take consecutive positions along the
// output's fast dim (b), so stores coalesce and loads gather, as PyTorch's own strided copy
// does; at these sizes the data sits in L2 and the gather costs less than a tile's shared-memory
// round trip and barrier. H200, 2026-11-30, same-build A/B over three rounds (20 calls per CUDA
// graph, bench/results/h200-ab-session10.md): fp32 64x64 22 -> 27 GB/s (eager 24-25), so 1.13x
// eager's time per call -> 0.92x; 8x64x64 137 -> 155 GB/s (eager 158-160), 1.16x -> 1.03x. GPU
// time per call by CUDA events outside graphs: 64x64 4.38 -> 4.19 us, 8x64x64 4.56 -> 4.51.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"

namespace torch_transpose {

// Problems up to this many elements take the direct kernel (64 x 64 and 8 x 64 x 64 do;
// 256 x 256 keeps the tiles).
constexpr int64_t kDirectMaxElements = 32768;

// TORCH_TRANSPOSE_DIRECT=0 keeps small problems on the tile kernels (read once; for A/B timing
// runs and for tests of the tile kernels on small problems).
inline bool direct_transpose_enabled() {
  static const bool enabled = !env_switched_off("TORCH_TRANSPOSE_DIRECT");
  return enabled;
}

struct DirectArgs {
  uint32_t total = 0;        // elements
  FastDivmod by_b, by_a;     // element -> b position, then a position and batch item
  int64_t in_sa = 0, in_sb = 0, out_sa = 0, out_sb = 0;
  DeviceBatchIndexer batch;  // batch item -> its offsets on both sides
};

inline bool wants_direct_transpose(const LayoutPlan& plan) {
  return direct_transpose_enabled() && plan.kind == PlanKind::Transpose && plan.numel <= kDirectMaxElements;
}

inline DirectArgs make_direct_args(const LayoutPlan& plan) {
  const FastDims f = FastDims::from_plan(plan);
  DirectArgs args;
  args.total = static_cast<uint32_t>(plan.numel);
  args.by_b = FastDivmod(static_cast<uint32_t>(f.size_b));
  args.by_a = FastDivmod(static_cast<uint32_t>(f.size_a));
  args.in_sa = f.in_sa;
  args.in_sb = f.in_sb;
  args.out_sa = f.out_sa;
  args.out_sb = f.out_sb;
  args.batch.assign(plan);
  return args;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
direct_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const DirectArgs args) {
  const uint32_t k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= args.total) return;
  uint32_t rest, j, item, i;
  args.by_b.divmod(k, rest, j);
  args.by_a.divmod(rest, item, i);
  int64_t in_off, out_off;
  args.batch.offsets(item, in_off, out_off);
  out[out_off + i * args.out_sa + j * args.out_sb] = in[in_off + i * args.in_sa + j * args.in_sb];
}

}  // namespace torch_transpose
