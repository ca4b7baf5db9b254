// The order in which the square-tile kernels (tile_transpose, window_tile_transpose) walk
// their tiles.
//
// Blocks that run at the same time take consecutive tile indices. Walking dim b fastest (the
// first order), the ~500 resident blocks of a 16384 x 16384 fp32 transpose covered 2 strips
// of 64 columns of the input: 512 contiguous bytes per input row, rows 64 KB apart. The H200
// reached 0.966 of copy on 8192^2 (1 KB per row), 0.945 on 16384^2 (512 B) and 0.986 on
// 256 batches of 512^2 (whole 2 KB rows per matrix): the longer the contiguous pieces, the
// faster. So tiles are walked in bands of `band` tile rows along a (the input's fast dim):
// within a band, a fastest, then b; bands one after another; batch items last. Blocks that
// run together then read `band` adjacent tiles of each input row (about 2 KB) and write runs
// of many tiles along each output row.
#pragma once

#include <algorithm>

#include "../env_switch.h"
#include "cuda_common.cuh"

namespace torch_transpose {

// Bytes of each input row that one band covers: TORCH_TRANSPOSE_TILE_BAND_BYTES (0 to 65536;
// anything below one tile row gives bands of one tile, the first order), 2048 by default.
inline int64_t tile_band_bytes() {
  static const int64_t bytes = env_int_in_range("TORCH_TRANSPOSE_TILE_BAND_BYTES", 0, 65536, 2048);
  return bytes;
}

struct TileOrder {
  int64_t tiles_a = 1, tiles_b = 1, total = 0;
  int64_t band = 1;          // tile rows along a per band (the last band may have fewer)
  bool fits_32 = true;       // every index below 2^31: magic-number division
  FastDivmod by_item;        // tiles_a * tiles_b
  FastDivmod by_band_tiles;  // band * tiles_b
  FastDivmod by_band;        // band
  FastDivmod by_last_band;   // the last band's rows

  // tile_row_bytes: the bytes of one input row inside one tile.
  static TileOrder make(int64_t tiles_a, int64_t tiles_b, int64_t items, int64_t tile_row_bytes) {
    TileOrder order;
    order.tiles_a = tiles_a;
    order.tiles_b = tiles_b;
    order.total = items * tiles_a * tiles_b;
    order.band = std::max<int64_t>(1, std::min<int64_t>(tiles_a, tile_band_bytes() / tile_row_bytes));
    order.fits_32 = order.total < (int64_t{1} << 31);
    if (order.fits_32 && order.total > 0) {
      const int64_t last_rows = tiles_a - (ceil_div(tiles_a, order.band) - 1) * order.band;
      order.by_item = FastDivmod(static_cast<uint32_t>(tiles_a * tiles_b));
      order.by_band_tiles = FastDivmod(static_cast<uint32_t>(order.band * tiles_b));
      order.by_band = FastDivmod(static_cast<uint32_t>(order.band));
      order.by_last_band = FastDivmod(static_cast<uint32_t>(last_rows));
    }
    return order;
  }

  // Tile t -> batch item, tile row ta (along a) and tile column tb (along b).
  __device__ __forceinline__ void locate(int64_t t, int64_t& item, int64_t& ta, int64_t& tb) const {
    if (fits_32) {
      uint32_t it, local, band_index, within, q, r;
      by_item.divmod(static_cast<uint32_t>(t), it, local);
      by_band_tiles.divmod(local, band_index, within);
      const int64_t first = static_cast<int64_t>(band_index) * band;
      (first + band <= tiles_a ? by_band : by_last_band).divmod(within, q, r);
      item = it;
      ta = first + r;
      tb = q;
      return;
    }
    const int64_t per_item = tiles_a * tiles_b;
    item = t / per_item;
    const int64_t local = t % per_item;
    const int64_t first = local / (band * tiles_b) * band;
    const int64_t within = local % (band * tiles_b);
    const int64_t rows = min(band, tiles_a - first);
    ta = first + within % rows;
    tb = within / rows;
  }
};

}  // namespace torch_transpose
