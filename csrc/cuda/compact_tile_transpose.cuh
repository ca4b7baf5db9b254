#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"
#include "tile_transpose.cuh"

namespace torch_transpose {

constexpr int kCompactThreads = 128;
template <int E> struct CompactTileShape {
  static constexpr int kTile = 128 / E;  // one 128-byte line per tile row
  static constexpr int kMinBlocks = E >= 4 ? 16 : 8;
};

inline Override compact_tile_override() {
  const Override setting = switch_override("compact_tile");
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
