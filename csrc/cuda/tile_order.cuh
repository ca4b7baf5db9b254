// What the tile kernels (tile_transpose, window_tile_transpose, realign_window_tile_transpose)
// share: their arguments and the order in which they walk their tiles: dim b fastest, then dim
// a, then batch items;
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"

namespace torch_transpose {

// Tile streams: consecutive blocks take their tiles from K streams, each a contiguous 1/K of the
// walk, so that the tiles resident at once lie in K bands of the tensors instead of one.
constexpr int kWideTileStreamShift = 2;           // 4 streams
constexpr int64_t kWideTileStreamsMinTiles = 32768;  // 64 x 64 tiles of 8 bytes: 1 GiB

inline int tile_stream_shift(int64_t tiles, int element_bytes) {
  const long long forced = switch_int_in_range("tile_streams", 0, 64, 0);
  if (forced > 0) {
    int log2 = 0;
    while ((1LL << (log2 + 1)) <= forced) ++log2;
    return log2;
  }
  return element_bytes == 8 && tiles >= kWideTileStreamsMinTiles ? kWideTileStreamShift : 0;
}

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

// Tile streams (tile_stream_shift): slot s takes tile (s % K) * stream_len + s / K, which may
// lie past the last tile (slots is K * stream_len; the kernel skips those slots).
struct TileStreams {
  int shift = 0;  // log2 K; 0: one stream, slot s is tile s
  int64_t stream_len = 0, slots = 0;

  static TileStreams make(int64_t total, int shift) {
    TileStreams streams;
    streams.slots = total;
    if (shift > 0 && total >= (int64_t{1} << shift)) {
      streams.shift = shift;
      streams.stream_len = ceil_div(total, int64_t{1} << shift);
      streams.slots = streams.stream_len << shift;
    }
    return streams;
  }

  __device__ __forceinline__ int64_t tile_of_slot(int64_t s) const {
    return (s & ((int64_t{1} << shift) - 1)) * stream_len + (s >> shift);
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
  TileStreams streams;  // one stream unless the launcher sets it (the square tile kernel only)

  // Tiles of `tile` x `tile` elements; extra_b more elements along b are covered (the window
  // kernel's shifted windows start up to that many elements before their tile).
  static SquareTileArgs make(const LayoutPlan& plan, int64_t tile, int64_t extra_b = 0) {
    return make_rect(plan, tile, tile, extra_b);
  }

  // Tiles of tile_a elements along a by tile_b along b (the realign window kernel's).
  static SquareTileArgs make_rect(const LayoutPlan& plan, int64_t tile_a, int64_t tile_b, int64_t extra_b) {
    SquareTileArgs args;
    static_cast<FastDims&>(args) = FastDims::from_plan(plan);
    args.batch.assign(plan);
    args.order = TileOrder::make(ceil_div(args.size_a, tile_a), ceil_div(args.size_b + extra_b, tile_b), args.batch.count());
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
