// Square tiles with the least index math around them: whole tiles only, up to two batch dims,
// 32-bit offsets, a 3-D grid (x: tile along b, y: tile along a, z: batch item; launch order is
// the square kernel's tile walk, tile_order.cuh; x and z swap where lean_tiles_items_first
// says) so that a block finds its tile with no division (one for two batch dims), and no grid
// loop. The tile itself is the square kernel's vector_tile.

#pragma once

#include "../kernel_switches.h"
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

// lean_tile: 0 = never (the square tile kernel takes these plans), 1 or unset =
// whenever the plan fits.
inline Override lean_tile_override() {
  const Override setting = switch_override("lean_tile");
  return setting;
}

constexpr int kLeanTileBlocksPerSm = 4;

// lean_items_first: 0 = never, 1 = whenever the grid allows, unset = the rule in
// lean_tiles_items_first.
inline Override lean_items_first_override() {
  const Override setting = switch_override("lean_items_first");
  return setting;
}

// Whether the lean grid walks batch items before tiles along b: where one tile spans a and the
// next batch item lies nearer in the input than the next tile along b (its inner batch dim's
// input stride below kTile input rows), so that the blocks resident at once read neighbouring
// pieces of the same kTile input rows rather than kTile rows each of their own.
// Why: (2, 1, 0) of 1024x1024x64 fp32 (a = k, b = i, items j 256 bytes apart in the input, tiles
// along b 16 MB apart) reads 64 input rows 256 KB apart per tile; walked along b first, the
// resident blocks read all 1024 such rows at once, items first only their tile's 64.
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
