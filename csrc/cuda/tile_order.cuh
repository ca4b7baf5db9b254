// What the square-tile kernels (tile_transpose, window_tile_transpose) share: their arguments
// and the order in which they walk their tiles: dim b fastest, then dim a, then batch items;
// one tile index -> (item, ta, tb) with 32-bit magic-number division (fast_divmod.cuh) when
// every index is below 2^31.
//
// The 64-bit `%` and `/` this replaced cost ~100 instructions each, per tile and thread. With
// this walk the 14 large squares ran 0.4-1.8% of copy higher than in the previous full suite
// (H200, 2026-11-30; different runs, so partly noise).
// Walking bands of tile rows along a instead, so that blocks that run together read ~2 KB of
// each input row rather than 256-512 bytes, lost 1-2% of copy on every square in a same-run
// A/B (bench/results/h200-ab-tile-band-*.md); not kept.
#pragma once

#include "cuda_common.cuh"

namespace torch_transpose {

struct TileOrder {
  int64_t tiles_a = 1, tiles_b = 1, total = 0;
  bool fits_32 = true;  // every tile index below 2^31: magic-number division
  FastDivmod by_tiles_b, by_tiles_a;

  static TileOrder make(int64_t tiles_a, int64_t tiles_b, int64_t items) {
    TileOrder order;
    order.tiles_a = tiles_a;
    order.tiles_b = tiles_b;
    order.total = items * tiles_a * tiles_b;
    order.fits_32 = order.total < (int64_t{1} << 31);
    if (order.fits_32 && order.total > 0) {
      order.by_tiles_b = FastDivmod(static_cast<uint32_t>(tiles_b));
      order.by_tiles_a = FastDivmod(static_cast<uint32_t>(tiles_a));
    }
    return order;
  }

  // Tile t -> batch item, tile row ta (along a) and tile column tb (along b).
  __device__ __forceinline__ void locate(int64_t t, int64_t& item, int64_t& ta, int64_t& tb) const {
    if (fits_32) {
      uint32_t rest, q, r;
      by_tiles_b.divmod(static_cast<uint32_t>(t), rest, r);
      tb = r;
      by_tiles_a.divmod(rest, q, r);
      ta = r;
      item = q;
      return;
    }
    tb = t % tiles_b;
    const int64_t rest = t / tiles_b;
    ta = rest % tiles_a;
    item = rest / tiles_a;
  }
};

// Where one tile lies: its tile row and column, and its batch item's offsets on both sides.
struct TileSpot {
  int64_t ta, tb, in_off, out_off;
};

// Both square-tile kernels' arguments: the fast dims, the tile walk and the batch.
struct SquareTileArgs : FastDims {
  TileOrder order;
  DeviceBatchIndexer batch;

  // Tiles of `tile` x `tile` elements; extra_b more elements along b are covered (the window
  // kernel's shifted windows start up to that many elements before their tile).
  static SquareTileArgs make(const LayoutPlan& plan, int64_t tile, int64_t extra_b = 0) {
    SquareTileArgs args;
    static_cast<FastDims&>(args) = FastDims::from_plan(plan);
    args.batch = DeviceBatchIndexer::from_plan(plan);
    args.order = TileOrder::make(ceil_div(args.size_a, tile), ceil_div(args.size_b + extra_b, tile), args.batch.count());
    return args;
  }

  __device__ __forceinline__ TileSpot locate(int64_t t) const {
    TileSpot spot;
    int64_t item;
    order.locate(t, item, spot.ta, spot.tb);
    batch.offsets(item, spot.in_off, spot.out_off);
    return spot;
  }
};

}  // namespace torch_transpose
