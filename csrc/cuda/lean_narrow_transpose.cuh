// Narrow transposes of 16 four-byte lines (16x4194304 <-> 4194304x16) with the least index math
// around the tile: whole tiles only, at most one batch dim, 32-bit offsets, a 2-D grid (x: tile
// along the wide dim, y: batch item), so a block finds its tile with no division and runs no grid
// loop. The tile is the narrow block kernel's (narrow_block_tile) at 64 wide: 4 KB, 128 threads
// of two 16-byte vectors per side (Inductor's tile for 4194304x16, bench/NOTES.md v17), 27
// registers, 16 blocks per SM; about 100 SASS instructions (the narrow block kernel: 912).
//
// Why: torch.compile ran both directions at 0.99-1.01 of copy where ours reached 0.96-0.98 of it
// (bench/NOTES.md v28), and its kernels differ from ours mostly in the code around the tile; the
// same treatment of the square tiles (lean_tile_transpose.cuh) gained 0.004-0.02.
// H200, same-call A/Bs by GPU time (bench/NOTES.md v29), ratio to copy, old kernels (warp pairs
// for a dense input, the narrow block kernel for a dense output) -> lean, 64 wide, two calls of
// two rounds: 4194304x16 0.951-0.952 -> 0.964-0.965, 16x4194304 0.968-0.972 -> 0.973-0.976.
// What lost: 128 wide at 256 threads (4194304x16 0.945), capped at 4 blocks per SM (0.932-0.935
// both) or 64 wide capped at 8 (0.938-0.939), 32 wide at 64 threads (0.916-0.951), 64 wide at
// 256 threads of one vector each (0.952-0.960).
// The rest of the gap to torch.compile was its L2 evict_last policy on the loads (v30): with it
// (load_global), 4194304x16 0.962-0.978 -> 0.982-0.998 and 16x4194304 0.983 -> 1.006-1.008.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "narrow_block_transpose.cuh"

namespace torch_transpose {

// What a lean narrow tile needs besides the base pointers.
struct LeanNarrowArgs {
  int32_t line_stride = 0;            // lines side: elements between consecutive lines
  int32_t in_item = 0, out_item = 0;  // the batch dim's strides (blockIdx.y walks it)
};

// TORCH_TRANSPOSE_LEAN_NARROW: 0 = never (the narrow block or warp-pair kernel takes these plans),
// 1 or unset = whenever the plan fits.
inline Override lean_narrow_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_LEAN_NARROW");
  return setting;
}

constexpr int kLeanNarrowWide = 64, kLeanNarrowThreads = 128;

template <bool kDenseIn, bool kEvictLast>
__global__ void __launch_bounds__(kLeanNarrowThreads, 2048 / kLeanNarrowThreads)
lean_narrow_transpose_kernel(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, const LeanNarrowArgs args) {
  __shared__ __align__(16) uint32_t tile[kNarrowBlockN * kLeanNarrowWide];
  const int32_t w0 = static_cast<int32_t>(blockIdx.x) * kLeanNarrowWide;
  const int32_t in_off = static_cast<int32_t>(blockIdx.y) * args.in_item + (kDenseIn ? w0 * kNarrowBlockN : w0);
  const int32_t out_off = static_cast<int32_t>(blockIdx.y) * args.out_item + (kDenseIn ? w0 : w0 * kNarrowBlockN);
  narrow_block_tile<kDenseIn, kLeanNarrowWide, kLeanNarrowThreads, kEvictLast>(in + in_off, out + out_off, args.line_stride,
                                                                                tile);
}

// Whether a narrow plan (make_narrow_args) takes lean narrow tiles, and their arguments and grid:
// the switch, N = 16, whole tiles along the wide dim, at most one batch dim, every element offset
// of both tensors below 2^31, at most 65535 batch items (grid y).
inline bool make_lean_narrow_args(const LayoutPlan& plan, const NarrowArgs& narrow, LeanNarrowArgs& args, dim3& grid) {
  if (!decide(lean_narrow_override(), true) || narrow.n != kNarrowBlockN || narrow.wide % kLeanNarrowWide != 0) return false;
  const BatchIndexer& batch = narrow.batch.plain;
  if (batch.rank > 1 || batch.count() > 65535) return false;
  if (!plan.offsets_fit_32()) return false;
  args.line_stride = static_cast<int32_t>(narrow.line_stride);
  if (batch.rank == 1) {
    args.in_item = static_cast<int32_t>(batch.in_strides[0]);
    args.out_item = static_cast<int32_t>(batch.out_strides[0]);
  }
  grid = dim3{static_cast<unsigned int>(narrow.wide / kLeanNarrowWide), static_cast<unsigned int>(batch.count()), 1};
  return true;
}

}  // namespace torch_transpose
