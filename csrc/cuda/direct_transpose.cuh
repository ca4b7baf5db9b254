// Transposes of a few thousand elements (64 x 64, 8 x 64 x 64), where a call costs the kernel's
// latency, not bandwidth: one thread per output element, read straight from the input, with no
// shared memory and no barrier.
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"

namespace torch_transpose {

// Problems up to this many elements take the direct kernel (64 x 64 and 8 x 64 x 64 do;
// 256 x 256 keeps the tiles).
constexpr int64_t kDirectMaxElements = 32768;

inline bool direct_transpose_enabled() {
  const bool enabled = !switch_off("direct");
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
