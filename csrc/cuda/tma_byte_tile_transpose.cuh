// 1-byte transposes through the copy engine (TMA, tma.cuh): 128 x 128 byte tiles, loaded into
// shared memory by bulk tensor copies several tiles ahead, transposed by the block's threads
// from one shared buffer into another, and stored by bulk tensor copies.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"
#include "tma.cuh"

namespace torch_transpose {

constexpr int kTmaTile = 128;  // bytes along each side: one 128-byte swizzle row
constexpr int kTmaTileBytes = kTmaTile * kTmaTile;

// A block's pipeline: kLoads tile loads in flight, kStores output buffers (a store may still
// read kStores - 1 of them while the next fills), kBlocks blocks per SM; a persistent grid of
// kBlocks per SM whose blocks walk tiles a grid apart, or one block per tile.
template <int kLoadStages, int kStoreStages, int kBlocksPerSm, bool kPersistentGrid>
struct TmaPipeline {
  static constexpr int kLoads = kLoadStages, kStores = kStoreStages, kBlocks = kBlocksPerSm;
  static constexpr bool kPersistent = kPersistentGrid;
  // 1 KB of slack to align the buffers to 1024 bytes (the swizzle's period), the buffers, and
  // one barrier per load stage.
  static constexpr size_t kSmemNeeded = 1024 + size_t{kLoads + kStores} * kTmaTileBytes + kLoads * sizeof(uint64_t);
  // What a launch asks for: at least kSmemNeeded, and enough that at most kBlocks blocks share
  // an SM (the one-tile grid would otherwise run as many as fit, 6).
  static constexpr size_t kSmemBytes = std::max(kSmemNeeded, smem_for_at_most(kBlocks));
};

using TmaPersistentTiles = TmaPipeline<3, 3, 2, true>;
using TmaOneTilePerBlock = TmaPipeline<1, 1, 4, false>;
static_assert(4 * (TmaOneTilePerBlock::kSmemBytes + kSmemReservedPerBlock) <= kSmemPerSm &&
                  5 * (TmaOneTilePerBlock::kSmemBytes + kSmemReservedPerBlock) > kSmemPerSm,
              "four one-tile blocks fit an SM, five do not");
constexpr int64_t kTmaPersistentMaxBytes = int64_t{48} << 20;  // bytes read + written

// tma_persistent: 0 = one tile per block, 1 = the persistent grid, unset = by size.
inline Override tma_persistent_override() {
  const Override setting = switch_override("tma_persistent");
  return setting;
}

inline bool wants_tma_persistent(int64_t numel) {
  return decide(tma_persistent_override(), 2 * numel <= kTmaPersistentMaxBytes);
}

// tma_tile: 0 = never, 1 = whenever a plan fits (tests), unset = the rule
// (every 1-byte plan that fits: each pipeline beat the square tile kernels wherever it is used).
inline Override tma_tile_override() {
  const Override setting = switch_override("tma_tile");
  return setting;
}

struct TmaTileArgs {
  TileOrder order;  // dim b fastest, then a, then the batch item, as the square tile kernels walk
};

// Byte offset of 16-byte chunk `chunk` of row `row` in a 128-byte swizzled tile.
__device__ __forceinline__ int swizzled_chunk(int row, int chunk) { return row * kTmaTile + ((chunk ^ (row & 7)) << 4); }

template <typename Pipe, bool kEvictLast = false>
__global__ void __launch_bounds__(kThreads, Pipe::kBlocks)
tma_byte_tile_transpose_kernel(const __grid_constant__ TmaMap in_map, const __grid_constant__ TmaMap out_map,
                               const TmaTileArgs args) {
  constexpr int kLoads = Pipe::kLoads, kStores = Pipe::kStores;
  unsigned char* loads = align_shared_1024(dynamic_smem());
  unsigned char* stores = loads + kLoads * kTmaTileBytes;
  uint64_t* loaded = reinterpret_cast<uint64_t*>(stores + kStores * kTmaTileBytes);  // one per load stage

  // This block's tiles: first, first + step, ... (a persistent grid, Pipe::kBlocks per SM), or
  // just its own (one block per tile). make_tma_byte_tile_args keeps the tile count below 2^31.
  const uint32_t total = static_cast<uint32_t>(args.order.total), first = blockIdx.x, step = gridDim.x;
  const uint32_t mine = first < total ? (total - first + step - 1) / step : 0;
  auto corner = [&](uint32_t i, int& a0, int& b0, int& item) {
    int64_t it, ta, tb;
    args.order.locate(first + i * step, it, ta, tb);
    a0 = static_cast<int>(ta * kTmaTile);
    b0 = static_cast<int>(tb * kTmaTile);
    item = static_cast<int>(it);
  };
  auto load = [&](uint32_t i, int stage) {  // thread 0
    int a0, b0, item;
    corner(i, a0, b0, item);
    if constexpr (kEvictLast) {
      tma_load_box_evict_last(loads + stage * kTmaTileBytes, &in_map, &loaded[stage], kTmaTileBytes, a0, b0, item);
    } else {
      tma_load_box(loads + stage * kTmaTileBytes, &in_map, &loaded[stage], kTmaTileBytes, a0, b0, item);
    }
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kLoads; ++s) mbarrier_init(&loaded[s], 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < kLoads && static_cast<uint32_t>(s) < mine; ++s) load(s, s);

  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int k = lane >> 2, q = lane & 3, c = (k + warp) & 7;
  int stage = 0, store_stage = 0;  // tile i sits in load stage i % kLoads, goes out of i % kStores
  uint32_t parity = 0;             // (i / kLoads) % 2: which phase of the stage's barrier
  for (uint32_t i = 0; i < mine; ++i) {
    if constexpr (kStores == 1) {  // the one output buffer must be read out before it fills again
      if (i > 0) {
        if (threadIdx.x == 0) tma_wait_stores_read<0>();
        __syncthreads();
      }
    }
    const unsigned char* tile_in = loads + stage * kTmaTileBytes;  // [b][a], swizzled
    unsigned char* tile_out = stores + store_stage * kTmaTileBytes;  // [a][b], swizzled
    mbarrier_wait(&loaded[stage], parity);

    uint32_t words[16];  // rows b = 16k + j, columns a = 16c + 4q .. + 3
#pragma unroll
    for (int j = 0; j < 16; ++j)
      words[j] = *reinterpret_cast<const uint32_t*>(tile_in + swizzled_chunk(16 * k + j, c) + 4 * q);
    uint32_t columns[4][4];  // columns[m][i]: rows b = 16k + 4m .. + 3 of column a = 16c + 4q + i
#pragma unroll
    for (int m = 0; m < 4; ++m)
      transpose_4x4_bytes(words[4 * m], words[4 * m + 1], words[4 * m + 2], words[4 * m + 3], columns[m]);
#pragma unroll
    for (int col = 0; col < 4; ++col) {
      const int a = 16 * c + 4 * q + col;
      *reinterpret_cast<uint4*>(tile_out + swizzled_chunk(a, k)) =
          make_uint4(columns[0][col], columns[1][col], columns[2][col], columns[3][col]);
    }
    tma_fence_shared_writes();
    // Store i + 1 will fill the buffer of store i + 1 - kStores: it must be read out.
    if constexpr (kStores >= 2) {
      if (threadIdx.x == 0) tma_wait_stores_read<kStores - 2>();
    }
    __syncthreads();  // tile_out written, tile_in read by every thread
    if (threadIdx.x == 0) {
      int a0, b0, item;
      corner(i, a0, b0, item);
      tma_store_box(&out_map, tile_out, b0, a0, item);
      if (i + kLoads < mine) load(i + kLoads, stage);
    }
    if (++stage == kLoads) {
      stage = 0;
      parity ^= 1;
    }
    if (++store_stage == kStores) store_stage = 0;
  }
  if (threadIdx.x == 0) tma_wait_stores_done();  // shared memory must outlive the stores' reads
}

// ---- host side ----------------------------------------------------------------------------------

// The maps and walk for a 1-byte plan with 16-byte vectors (unit-stride fast dims, every other
// stride and both bases 16-byte aligned), at most one batch dim, and every coordinate below
// 2^31 (tiles too); false when the plan does not fit (the caller takes another kernel).
// wide_fills: the L2 fills misses in 256-byte pieces (one tile per block), else 128.
inline bool make_tma_byte_tile_args(const LayoutPlan& plan, const void* in, void* out, bool wide_fills, TmaMap& in_map,
                                    TmaMap& out_map, TmaTileArgs& args) {
  const FastDims f = FastDims::from_plan(plan);
  const BatchIndexer batch = BatchIndexer::from_plan(plan);
  if (plan.element_bytes != 1 || plan.vector_elems < 16 || batch.rank > 1 || f.in_sa != 1 || f.out_sb != 1) return false;
  // A bulk store clips output rows at the 16-byte boundary after size_b, not at size_b
  // (tma_on_host.h's tma_store_box): rows ending off that grid (an `out=` view into wider rows;
  // a fresh output's rows are then never 16-byte vectors) would get bytes past their end written.
  if (f.size_b % 16 != 0) return false;
  const int64_t items = batch.rank == 1 ? batch.sizes[0] : 1;
  const int64_t coordinate_limit = int64_t{1} << 31;
  if (f.size_a >= coordinate_limit || f.size_b >= coordinate_limit || items >= coordinate_limit) return false;
  const TileOrder order = TileOrder::make(ceil_div(f.size_a, kTmaTile), ceil_div(f.size_b, kTmaTile), items);
  if (!order.fits_32) return false;  // the kernel counts tiles in 32 bits
  // A single item still needs a valid stride for the map's third dim: one past its last row.
  const int64_t in_item = batch.rank == 1 ? batch.in_strides[0] : f.in_sb * f.size_b;
  const int64_t out_item = batch.rank == 1 ? batch.out_strides[0] : f.out_sa * f.size_a;
  if (f.in_sb <= 0 || f.out_sa <= 0 || in_item <= 0 || out_item <= 0) return false;

  TmaTensorSpec in_spec, out_spec;
  in_spec.base = const_cast<void*>(in);
  in_spec.sizes[0] = static_cast<uint64_t>(f.size_a);
  in_spec.sizes[1] = static_cast<uint64_t>(f.size_b);
  in_spec.sizes[2] = static_cast<uint64_t>(items);
  in_spec.byte_strides[0] = static_cast<uint64_t>(f.in_sb);
  in_spec.byte_strides[1] = static_cast<uint64_t>(in_item);
  out_spec.base = out;
  out_spec.sizes[0] = static_cast<uint64_t>(f.size_b);
  out_spec.sizes[1] = static_cast<uint64_t>(f.size_a);
  out_spec.sizes[2] = static_cast<uint64_t>(items);
  out_spec.byte_strides[0] = static_cast<uint64_t>(f.out_sa);
  out_spec.byte_strides[1] = static_cast<uint64_t>(out_item);
  for (TmaTensorSpec* s : {&in_spec, &out_spec}) {
    s->box[0] = kTmaTile;
    s->box[1] = kTmaTile;
    s->box[2] = 1;
    s->l2_fill_bytes = wide_fills ? 256 : 128;
  }
  if (!encode_tma_map(in_spec, in_map) || !encode_tma_map(out_spec, out_map)) return false;
  args.order = order;
  return true;
}

}  // namespace torch_transpose
