// Square tiles of one 128-byte line per tile row in 128-thread blocks (64 x 64 for 2-byte
// elements; 128, 32 and 16 wide for 1-, 4- and 8-byte ones under the switch), shaped like
// Inductor's generated transposes: ncu on the H200
// (bench/NOTES.md v17) put torch.compile's kernel for (0, 2, 1) on 1024x1024x64 at 100%
// theoretical occupancy, one 4 KB tile per 128-thread block at 25 registers, where our 64 x 64
// fp32 tiles run 256 threads at 64 registers (50%). Each thread has kTile / 16 loads in flight;
// __launch_bounds__ asks for 16 blocks per SM (8 for 1- and 2-byte tiles, whose 4-8 loads need
// more registers: 2-byte takes 40). Whole tiles only: no edge paths.
//
// H200, same-call A/Bs, two calls of two rounds (NOTES v17): the rule's cases, bf16 with fast
// dims of whole 64- but not 128-element tiles, gained: NCHW->NHWC 64x128x56x56 (3136 = 24.5 x
// 128) 0.911-0.915 -> 0.948-0.955, NHWC->NCHW 0.912-0.913 -> 0.932-0.937. Everywhere else the
// usual tiles won: fp32 8192² 0.978 -> 0.937, (0, 2, 1) 0.973 -> 0.949, bf16 8192² 0.952-0.959
// -> 0.921-0.938, (2, 1, 0) 0.933 -> 0.860, int8 8192² level.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"
#include "tile_transpose.cuh"

namespace torch_transpose {

constexpr int kCompactThreads = 128;
template <int E> struct CompactTileShape {
  static constexpr int kTile = 128 / E;  // one 128-byte line per tile row
  static constexpr int kMinBlocks = E >= 4 ? 16 : 8;
};

// TORCH_TRANSPOSE_COMPACT_TILE: 0 = never, 1 = every full-vector plan whose fast dims are whole
// compact tiles (tests, A/B runs), unset = the rule above (2-byte plans that would otherwise
// have edge tiles).
inline Override compact_tile_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_COMPACT_TILE");
  return setting;
}

template <typename T, int V, bool kEvictLast>
__global__ void __launch_bounds__(kCompactThreads, CompactTileShape<sizeof(T)>::kMinBlocks)
compact_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const SquareTileArgs args) {
  constexpr int kTile = CompactTileShape<sizeof(T)>::kTile;
  __shared__ __align__(16) T tile[kTile * kTile];
  Vec<T, V>* chunks = reinterpret_cast<Vec<T, V>*>(tile);
  const int32_t in_sb = static_cast<int32_t>(args.in_sb), out_sa = static_cast<int32_t>(args.out_sa);
  for (int64_t t = blockIdx.x; t < args.order.total; t += gridDim.x) {
    const TileSpot spot = args.locate(t);
    const int32_t a0 = static_cast<int32_t>(spot.ta * kTile), b0 = static_cast<int32_t>(spot.tb * kTile);
    vector_tile<T, V, kTile, int32_t, SquareTileArgs, kCompactThreads, kEvictLast>(false, in + spot.in_off, out + spot.out_off, a0,
                                                                       b0, in_sb, out_sa, args, tile, chunks);
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

// Whether a full-vector plan (V = 16 / E) takes compact tiles: 32-bit offsets, both fast dims
// whole compact tiles, and the switch or the rule.
template <typename T>
bool wants_compact_tiles(const LayoutPlan& plan) {
  constexpr int kTile = CompactTileShape<sizeof(T)>::kTile, kUsual = TileShape<sizeof(T)>::kTile;
  const FastDims f = FastDims::from_plan(plan);
  if (plan.needs_64bit_index || f.size_a % kTile != 0 || f.size_b % kTile != 0) return false;
  const bool usual_tiles_have_edges = f.size_a % kUsual != 0 || f.size_b % kUsual != 0;
  return decide(compact_tile_override(), sizeof(T) == 2 && usual_tiles_have_edges);
}

}  // namespace torch_transpose
