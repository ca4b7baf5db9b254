// Square tiles with the least index math around them: whole tiles only, up to two batch dims,
// 32-bit offsets, a 3-D grid (x: tile along b, y: tile along a, z: batch item; launch order is
// the square kernel's tile walk, tile_order.cuh; x and z swap where lean_tiles_items_first
// says) so that a block finds its tile with no division (one for two batch dims), and no grid
// loop. The tile itself is the square kernel's vector_tile.
//
// Why: torch.compile's kernels beat ours on (0, 2, 1), 256x512x512 and the 16-wide narrow
// transposes, and their one difference left untested was the code around the tile (bench/NOTES.md
// v17: about 110 SASS instructions with the shapes as constants, against the square kernel's
// 1600 for fp32: grid loop, tile walk by magic-number division, a batch indexer over up to 16
// dims, 64-bit batch offsets). This kernel is 128 instructions for fp32, all 4 loads before the
// first shared store, at 32 registers.
//
// Blocks per SM: at 32 registers 8 blocks fit, and they lost on every case (as more resident
// blocks did in v14 and v15); capped at 4, the square kernel's own residency by its 64
// registers, by asking each block for shared memory that leaves room for 4 (smem_for_at_most),
// they won. H200, same-call A/Bs, two calls of two rounds each (bench/NOTES.md v28), ratio to
// copy, square -> lean: fp32 NCHW->NHWC 64x128x56x56 0.979-0.985 -> 0.996-1.005, NHWC->NCHW
// 0.970-0.986 -> 0.989-0.994, 4096x64x64 0.961-0.967 -> 0.975-0.979, 256x512x512 0.985-0.992 ->
// 0.997-0.998, bf16 8192² 0.954-0.955 -> 0.961-0.964, fp64 8192² 0.974-0.985 -> 0.977-0.987,
// (0, 2, 1) 0.968-0.977 -> 0.976-0.980, fp32 8192² 0.971-0.973 -> 0.974-0.976; 16384², complex64
// 8192² and the reversal level; (2, 1, 0) lower in the first call (0.913-0.930 -> 0.901-0.919)
// and level in the second (0.914-0.918 -> 0.912-0.920). The square kernel given the same
// shared-memory request (so the same smaller L1) gained nothing: the gain is the index math.

#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "lean_batch.cuh"
#include "tile_transpose.cuh"

namespace torch_transpose {

// What a lean tile needs besides the base pointers: 32-bit strides, up to two batch dims.
struct LeanTileArgs {
  int32_t in_sb = 0, out_sa = 0;          // the fast dims' row strides (in_sa = out_sb = 1)
  LeanBatch batch;
  int64_t size_a = 0, size_b = 0;         // vector_tile reads these for edge tiles only: never here
  bool two_batch_dims = false;
  bool items_first = false;               // the grid walks batch items first (lean_tiles_items_first)
};

// TORCH_TRANSPOSE_LEAN_TILE: 0 = never (the square tile kernel takes these plans), 1 or unset =
// whenever the plan fits.
inline Override lean_tile_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_LEAN_TILE");
  return setting;
}

constexpr int kLeanTileBlocksPerSm = 4;

// TORCH_TRANSPOSE_LEAN_ITEMS_FIRST: 0 = never, 1 = whenever the grid allows, unset = the rule in
// lean_tiles_items_first.
inline Override lean_items_first_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_LEAN_ITEMS_FIRST");
  return setting;
}

// Whether the lean grid walks batch items before tiles along b: where one tile spans a and the
// next batch item lies nearer in the input than the next tile along b (its inner batch dim's
// input stride below kTile input rows), so that the blocks resident at once read neighbouring
// pieces of the same kTile input rows rather than kTile rows each of their own.
// Why: (2, 1, 0) of 1024x1024x64 fp32 (a = k, b = i, items j 256 bytes apart in the input, tiles
// along b 16 MB apart) reads 64 input rows 256 KB apart per tile; walked along b first, the
// resident blocks read all 1024 such rows at once, items first only their tile's 64. Its output
// rows then take 256-byte pieces 4 KB apart rather than whole 4 KB runs, and yet it gained. H200,
// same-call A/B by GPU time, three rounds (bench/NOTES.md v39): 0.946-0.949 -> 0.961-0.970 of
// copy, 1024x1200x64 0.955-0.957 -> 0.964-0.970, fp64 1024x512x64 0.950-0.962 -> 0.960-0.962,
// bf16 1024x1024x128 level (0.931-0.932 -> 0.931-0.936). Items first everywhere
// (TORCH_TRANSPOSE_LEAN_ITEMS_FIRST=1) lost where a spans several tiles or the next item is far
// in the input: 256x512x512 1.011 -> 0.953, (0, 2, 1) 1.008 -> 0.956, NCHW->NHWC 64x128x56x56
// 1.015-1.023 -> 0.965-0.968; the 4-D reversal (b one tile) and 4096x64x64 level.
inline bool lean_tiles_items_first(int64_t tiles_a, int64_t tiles_b, int64_t inner_item_in_stride, int64_t b_tile_in_step) {
  return decide(lean_items_first_override(), tiles_a == 1 && tiles_b > 1 && inner_item_in_stride < b_tile_in_step);
}

template <typename T, int V, int kTile, bool kTwoBatchDims, bool kEvictLast>
__global__ void __launch_bounds__(kThreads)
lean_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const LeanTileArgs args) {
  __shared__ __align__(16) T tile[kTile * kTile];
  Vec<T, V>* chunks = reinterpret_cast<Vec<T, V>*>(tile);
  const LeanBlock at = locate_lean_block<kTile, kTwoBatchDims>(args.batch, args.items_first);
  vector_tile<T, V, kTile, int32_t, LeanTileArgs, kThreads, kEvictLast>(false, in + at.in_off, out + at.out_off, at.a0, at.b0,
                                                                        args.in_sb, args.out_sa, args, tile, chunks);
}

// Whether a full-vector plan takes lean tiles, and their arguments and grid: the switch, 32-bit
// offsets (every element offset of both tensors below 2^31), both fast dims whole tiles, at most
// two batch dims, a grid within CUDA's limits (y and z below 2^16).
template <int kTile>
bool make_lean_tile_args(const LayoutPlan& plan, LeanTileArgs& args, dim3& grid) {
  if (!decide(lean_tile_override(), true) || plan.needs_64bit_index) return false;
  const FastDims f = FastDims::from_plan(plan);
  if (f.size_a % kTile != 0 || f.size_b % kTile != 0) return false;
  const BatchIndexer batch = BatchIndexer::from_plan(plan);
  if (!plan.offsets_fit_32() || !LeanBatch::from(batch, args.batch)) return false;
  const int64_t tiles_a = f.size_a / kTile, tiles_b = f.size_b / kTile, items = batch.count();
  const int64_t inner_item_in_stride = batch.rank == 0 ? 0 : batch.in_strides[batch.rank - 1];
  // Items first puts the tiles along b on z, whose limit (65535) they must then fit.
  args.items_first = items > 1 && tiles_b <= 65535 &&
                     lean_tiles_items_first(tiles_a, tiles_b, inner_item_in_stride, kTile * f.in_sb);
  const int64_t along_x = args.items_first ? items : tiles_b, along_z = args.items_first ? tiles_b : items;
  if (along_x > 0x7fffffff || tiles_a > 65535 || along_z > 65535) return false;
  args.in_sb = static_cast<int32_t>(f.in_sb);
  args.out_sa = static_cast<int32_t>(f.out_sa);
  args.size_a = f.size_a;
  args.size_b = f.size_b;
  args.two_batch_dims = batch.rank == 2;
  grid = dim3{static_cast<unsigned int>(along_x), static_cast<unsigned int>(tiles_a), static_cast<unsigned int>(along_z)};
  return true;
}

// Dynamic shared memory for a lean tile block of `static_bytes` of its own, so that at most
// kLeanTileBlocksPerSm blocks share an SM.
inline size_t lean_tile_smem_bytes(size_t static_bytes) {
  const size_t per_block = smem_for_at_most(kLeanTileBlocksPerSm);
  return per_block > static_bytes ? per_block - static_bytes : 0;
}

}  // namespace torch_transpose
