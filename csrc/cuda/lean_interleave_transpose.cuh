// The interleave kernel's chunks (interleave_transpose.cuh: C = 2..15 against lines of whole
// 16-byte vectors, as in NCHW <-> NHWC with C = 3) with the least index math around them, for the
// C and element sizes where that won (lean_interleave_takes: C = 2 and 3): up to two batch dims,
// 32-bit offsets, a 3-D grid (x: runs of kInterleaveWarps chunks along the long dim, z: batch
// item) and no grid loop, so a warp finds its chunk with no division (one for two
// batch dims) and its kernel arguments are 40 bytes where InterleaveArgs carries a 16-dim batch
// indexer (640 bytes in all).
//
// Why: the C = 3 layouts are small (9.6-19 MB) and their grid is one or two waves, so whatever
// a warp does before its first load, and the launch itself, add straight to the kernel's time:
// by GPU time bf16 NCHW->NHWC 32x3x224x224 took 7.23 us against copy's 6.59, while the fp32 case
// (twice the bytes, two waves) was level with copy (bench/NOTES.md v33). The same treatment of the
// square tiles, narrow tiles and row copies (lean_tile_transpose.cuh, lean_narrow_transpose.cuh,
// lean_row_copy.cuh) gained 0.004-0.02 of copy.
#pragma once

#include <limits>

#include "../env_switch.h"
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

// Which plans take lean launches, by element size and C. H200, same-call A/Bs by GPU time, three
// rounds each, ratio to copy, looping -> lean (bench/NOTES.md v37):
//   * 4- and 8-byte elements, C = 2 and 3 won or held: fp32 batched 64x1024x3 0.90-0.92 ->
//     1.05-1.08, NCHW->NHWC 32x3x224x224 0.99-1.03 -> 1.05-1.07, 2x4194304 1.016-1.021 ->
//     1.047-1.050, fp64 3x2097152 0.999-1.003 -> 1.009-1.014; fp32 4194304x3 and NHWC->NCHW level;
//   * 2-byte elements, C = 3: NCHW->NHWC 0.852-0.871 -> 0.892-0.904, NHWC->NCHW level; C = 2 split
//     (8388608x2 +0.008, 2x8388608 -0.009), so it stays looping;
//   * 1-byte elements lost at every C (int8 2x16777216 1.00 -> 0.89, 16777216x3 0.99 -> 0.90);
//   * C = 4 and wider lost where ptxas gave the lean instantiation more registers or spills than
//     the looping one: int8 16777216x4 0.98 -> 0.86 (74 registers against 44-56), fp32 8x2097152
//     0.98 -> 0.89 (28 bytes spilled).
constexpr bool lean_interleave_takes(int element_bytes, int c) {
  return (element_bytes >= 4 && c <= 3) || (element_bytes == 2 && c == 3);
}

// TORCH_TRANSPOSE_LEAN_INTERLEAVE: 0 = never (the looping interleave kernel takes these plans),
// 1 or unset = whenever the plan fits (lean_interleave_takes and the limits below).
inline Override lean_interleave_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_LEAN_INTERLEAVE");
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
