#pragma once

#include <limits>

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "interleave_transpose.cuh"
#include "lean_batch.cuh"

namespace torch_transpose {

// What a lean interleave launch needs besides the base pointers.
struct LeanInterleaveArgs {
  int32_t long_size = 0;     // L, a multiple of the vector
  int32_t plane_stride = 0;  // planar side: elements between lines
  LeanBatch batch;           // blockIdx.z's batch item
  bool two_batch_dims = false;
};

constexpr bool lean_interleave_takes(int element_bytes, int c) {
  return (element_bytes >= 4 && c <= 3) || (element_bytes == 2 && c == 3);
}

// lean_interleave: 0 = never (the looping interleave kernel takes these plans),
// 1 or unset = whenever the plan fits (lean_interleave_takes and the limits below).
inline Override lean_interleave_override() {
  const Override setting = switch_override("lean_interleave");
  return setting;
}

template <typename T, int C, bool kPlanarIn, bool kEvictLast, bool kDirectLoads, bool kTwoBatchDims>
__global__ void __launch_bounds__(kThreads)
lean_interleave_kernel(const T* __restrict__ in, T* __restrict__ out, const LeanInterleaveArgs args) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  using Chunk = Vec<T, V>;
  __shared__ Chunk stage[kInterleaveWarps][kInterleaveSlots<C>];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int32_t in_off, out_off;
  args.batch.offsets<kTwoBatchDims>(blockIdx.z, in_off, out_off);
  // make_lean_interleave_args bounds (L + a block's chunks) * C below 2^31, so p0 and p0 * C fit.
  const int32_t p0 = static_cast<int32_t>(blockIdx.x * kInterleaveWarps + warp) * 32 * V;
  const int32_t left = args.long_size - p0;
  // A warp past the long dim's end moves nothing but still meets its __syncwarp calls (block-wide
  // under host emulation).
  const int vectors = left <= 0 ? 0 : left >= 32 * V ? 32 : left / V;
  const T* src = in + in_off + (kPlanarIn ? p0 : p0 * C);
  T* dst = out + out_off + (kPlanarIn ? p0 * C : p0);
  if (vectors == 0) {
    src = in;
    dst = out;
  }
  interleave_chunk<T, C, kPlanarIn, kEvictLast, kDirectLoads>(src, dst, vectors, args.plane_stride, stage[warp], lane);
}

// Whether an interleave plan (the caller has checked wants_interleave) takes lean interleave
// launches, and their arguments and grid: the switch, lean_interleave_takes, at most two
// batch dims of at most 65535 items (grid z), every element offset of both tensors below 2^31,
// and the long dim's last block of chunks within 32-bit positions on the dense side.
inline bool make_lean_interleave_args(const LayoutPlan& plan, const NarrowArgs& narrow, int element_bytes,
                                      LeanInterleaveArgs& args, dim3& grid) {
  if (!decide(lean_interleave_override(), true) || !lean_interleave_takes(element_bytes, narrow.n) || !plan.offsets_fit_32())
    return false;
  const BatchIndexer& batch = narrow.batch.plain;
  if (batch.count() > 65535 || !LeanBatch::from(batch, args.batch)) return false;
  const int64_t v = 16 / element_bytes, chunk_positions = 32 * v;
  const int64_t blocks = ceil_div(ceil_div(narrow.wide, chunk_positions), kInterleaveWarps);
  if ((blocks * kInterleaveWarps * chunk_positions) * narrow.n > std::numeric_limits<int32_t>::max()) return false;
  args.long_size = static_cast<int32_t>(narrow.wide);
  args.plane_stride = static_cast<int32_t>(narrow.line_stride);
  args.two_batch_dims = batch.rank == 2;
  grid = dim3{static_cast<unsigned int>(blocks), 1u, static_cast<unsigned int>(batch.count())};
  return true;
}

}  // namespace torch_transpose
