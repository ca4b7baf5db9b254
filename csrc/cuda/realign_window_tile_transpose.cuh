// Window tiles for 1- and 2-byte elements whose rows cannot all take 16-byte vectors (odd
// shapes such as fp16 8191 x 8193, rows of 8190 halves or bytes, `x[1:, 1:]` of a byte
// matrix) when both fast dims have unit stride (in_sa == out_sb == 1).
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"
#include "window_tile_transpose.cuh"

namespace torch_transpose {

inline Override realign_window_override() {
  const Override setting = switch_override("realign_window");
  return setting;
}

constexpr int64_t kRealignHalfVectorTilesPerSm = 4;
// The kernel's launch bounds, for tiles of either size.
constexpr int kRealignBlocksPerSm = 4;
inline bool realign_window_by_default(int element_bytes, int vector, bool only_output_off_grid, int64_t tiles,
                                      int sm_count) {
  if (!(element_bytes == 2 && vector == 4)) return true;
  return only_output_off_grid && tiles >= kRealignHalfVectorTilesPerSm * sm_count;
}

// Whether a plan whose tiles of kRealignTileA rows number `tiles` takes tiles of
// kSmallRealignTileA rows instead. On small grids a block's load and store phases follow each
// other with little else on the SM to overlap them, and twice the blocks of half the size fill
// that gap; on large ones the extra rows each small tile loads for its window's shift cost more.
constexpr int64_t kRealignSmallTilesBelowOneByte = 7, kRealignSmallTilesBelowTwoByte = 40;  // tiles per SM
constexpr int64_t kRealignTallFromTiles = 10, kRealignTallBelowBands = 6;  // tiles per SM; bands in flight
inline bool realign_small_tiles_by_default(int element_bytes, int64_t tiles, int64_t tiles_b, bool aligned_input,
                                           int sm_count) {
  if (element_bytes == 1) return tiles < kRealignSmallTilesBelowOneByte * sm_count;
  const bool tall = aligned_input && tiles >= kRealignTallFromTiles * sm_count &&
                    int64_t{kRealignBlocksPerSm} * sm_count < kRealignTallBelowBands * tiles_b;
  return !tall && tiles < kRealignSmallTilesBelowTwoByte * sm_count;
}
inline Override realign_small_tiles_override() {
  const Override setting = switch_override("realign_small_tiles");
  return setting;
}

// 128 output rows per tile; each output row's window is 256 bytes (two lines), each input row's
// share 128 (1-byte) or 256 (2-byte) bytes. Shared memory: 36 KB of rows plus the staging slots.
// Small tiles (kSmallRealignTileA output rows, half the shares and the shared memory) give grids
// too small to fill the SMs twice as many blocks (realign_small_tiles_by_default).
constexpr int kRealignTileA = 128, kSmallRealignTileA = 64;
template <int E, int TileA = kRealignTileA> struct RealignWindowShape {
  static_assert(E == 1 || E == 2, "realign window tiles are built for 1- and 2-byte elements");
  static_assert(TileA == kRealignTileA || TileA == kSmallRealignTileA, "the store lanes cover 16 rows a pass");
  static constexpr int kTileA = TileA;             // elements along a: output rows per tile
  static constexpr int kTileB = 256 / E;           // elements along b: one output row's window
  static constexpr int kV = 16 / E;                // elements per 16-byte chunk
  static constexpr int kShift = 32 / E;            // window alignment: one 32-byte sector
  static constexpr int kChunks = kTileA * E / 16;  // aligned chunks per input row's share
};

// The realign window kernel's arguments: the tile walk, and the input's byte span.
struct RealignWindowArgs : SquareTileArgs {
  uintptr_t in_lo = 0, in_hi = 0;  // the input's first element and one past its last byte
};

// Which vector (sx) of which output row (sy, within a pass of 16 rows) store thread t writes in
// 1-byte tiles, whose store_window_rows gathers each output byte with a shared load of its own.
// Byte k of every vector sits in tile row j = kShift + 16 sx - shift + k at chunk
// (r / 16) ^ key(j) of a 128-byte row, so the 16 lanes of one row, as `t % 16` has them, meet
// each bank group twice, and the two rows of a warp (different shifts, the same 4-byte word)
// twice more: 4 wavefronts per shared load (scripts/realign_store_banks.py).
struct StoreLane {
  int sx, sy;
};
__device__ __forceinline__ StoreLane byte_store_lane(unsigned t) {
  static_assert(kThreads == 256, "8 warps: 2 halves of a row's 16 vectors x 4 row sets");
  const int lane = t % 32, warp = t / 32;
  return {8 * (warp % 2) + lane % 8, warp / 2 + 4 * (lane / 8)};  // rows warp / 2 + {0, 4, 8, 12}
}

// The same for 2-byte tiles, which keep 16 lanes (one 256-byte window) per output row so that a
// warp's store writes two whole windows: which two rows share a warp.
__device__ __forceinline__ StoreLane half_store_lane(unsigned t) {
  static_assert(kThreads == 256, "8 warps of 2 rows x 16 vectors");
  const unsigned warp = t / 32, h = t / 16 % 2;
  return {int(t % 16), int(4 * (warp / 2) + warp % 2 + 2 * h)};
}

// The 16-byte chunk at `chunk` (16-byte aligned), with the bytes outside [lo, hi) read as zero.
// Only tiles whose cover crosses the input's span take it (at most the first and the last),
// so it stays out of line.
inline __device__ __noinline__ uint4 load_chunk_inside(const uint4* chunk, uintptr_t lo, uintptr_t hi) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(chunk);
  if (at >= lo && at + 16 <= hi) return *chunk;
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(chunk);
  auto word = [&](int first) {  // bytes first .. first + 3, little-endian
    unsigned int w = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (at + first + i >= lo && at + first + i < hi) w |= static_cast<unsigned int>(bytes[first + i]) << (8 * i);
    return w;
  };
  return make_uint4(word(0), word(4), word(8), word(12));
}

// How the kernel's chunk loads (those inside the input's span) ask the caches: the policies of
// load_global. realign_load_rule picks one by plan.
enum class RealignLoads : int { kPlain = 0, kEvictLast = 1, kEvictLastFetch256 = 2 };

// Host tests (cuda_on_host.h) check, on every read of a chunk that a tile's span check let
// through (here and in output span tiles' realigned loads), that it lies inside the input's
// byte span [lo, hi); on the GPU this is nothing.
__device__ __forceinline__ void expect_chunk_inside_span(const uint4* chunk, uintptr_t lo, uintptr_t hi) {
#if defined(TT_CUDA_ON_HOST)
  const uintptr_t at = reinterpret_cast<uintptr_t>(chunk);
  if (at < lo || at + 16 > hi) host_emulation::fail("a chunk read outside the input's span past a tile's span check");
#else
  (void)chunk, (void)lo, (void)hi;
#endif
}

// A chunk that the tile's span check let through.
template <RealignLoads kPolicy>
__device__ __forceinline__ uint4 load_chunk_unchecked(const uint4* chunk, uintptr_t lo, uintptr_t hi) {
  expect_chunk_inside_span(chunk, lo, hi);
  return load_global<kPolicy != RealignLoads::kPlain, kPolicy == RealignLoads::kEvictLastFetch256>(chunk);
}

// The chunk of the next lane within segments of `width` lanes (the segment's last lane gets its
// own back). On the host, one emulated exchange of the whole chunk rather than four.
__device__ __forceinline__ uint4 chunk_of_next_lane(uint4 v, int width) {
#if defined(TT_CUDA_ON_HOST)
  return __shfl_down_sync(0xffffffffu, v, 1, width);
#else
  return make_uint4(__shfl_down_sync(0xffffffffu, v.x, 1, width), __shfl_down_sync(0xffffffffu, v.y, 1, width),
                    __shfl_down_sync(0xffffffffu, v.z, 1, width), __shfl_down_sync(0xffffffffu, v.w, 1, width));
#endif
}

// The cover chunk index past which a row's share holds no element of the tensor (edge tiles
// along a): loads clamp to it, so that every chunk read holds at least one of the row's elements.
__device__ __forceinline__ int last_cover_chunk(int m, int a_here, int element_bytes) {
  return (m + a_here * element_bytes - 1) >> 4;
}

inline Override realign_byte_quads_override() {
  const Override setting = switch_override("realign_byte_quads");
  return setting;
}

// The store phase of 1-byte tiles whose output rows all lie on the sector grid (no window
// shift).
template <int kTileA, int kTileB, int kChunks, typename Index, typename Key>
__device__ __forceinline__ void store_byte_quads(const uint4* rows, unsigned char* dst, int64_t a0, int64_t b0,
                                                 Index out_sa, const WindowTileBounds w, Key key) {
  constexpr int kSx = kTileB / 16;       // vectors per output row
  constexpr int kQy = kThreads / kSx;    // quads per pass
  static_assert(kTileA % (4 * kQy) == 0 && kChunks * 16 == kTileA, "quads must split evenly over the block");
  const uint32_t* words = reinterpret_cast<const uint32_t*>(rows);
  const int sx = threadIdx.x % kSx;
  const int o = 16 * sx;  // the vector's first element, relative to b0
#pragma unroll
  for (int i = 0; i < kTileA / (4 * kQy); ++i) {
    const int r4 = 4 * (threadIdx.x / kSx + i * kQy);
    if (r4 >= w.a_here) continue;
    // Word (r4 % 16) / 4 of chunk r4 / 16 of tile rows o .. o + 15, whose swizzle key is key(o).
    const int slot = (((r4 / 16) ^ key(o)) * 16 + r4 % 16) / 4;
    uint32_t v[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) v[k] = words[(o + k) * kChunks * 4 + slot];
    uint32_t quad[4][4];  // quad[q][m]: bytes 4m .. 4m + 3 of output row r4 + q's vector
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      uint32_t y[4];
      transpose_4x4_bytes(v[4 * m], v[4 * m + 1], v[4 * m + 2], v[4 * m + 3], y);
#pragma unroll
      for (int q = 0; q < 4; ++q) quad[q][m] = y[q];
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      if (r4 + q >= w.a_here) break;
      unsigned char* row = dst + static_cast<Index>(a0 + r4 + q) * out_sa + static_cast<Index>(b0);
      if (o + 16 <= w.o_hi) {
        __stwb(reinterpret_cast<uint4*>(row + o), make_uint4(quad[q][0], quad[q][1], quad[q][2], quad[q][3]));
      } else {  // the row's ragged end
#pragma unroll
        for (int k = 0; k < 16; ++k)
          if (o + k < w.o_hi) row[o + k] = static_cast<unsigned char>(quad[q][k / 4] >> (8 * (k % 4)));
      }
    }
  }
}

// Four blocks per SM (64 registers): all of a thread's loads stay in flight before the first
// shared store (9 chunks, 36 registers).
// kByteQuads: the store phase of store_byte_quads (1-byte elements, unshifted windows only).
// kAlignedInput: the plan proves every input row's share on the 16-byte grid (offset 0), so the
// loaded chunks are the aligned chunks themselves: no exchange, realignment or staging loads
// (input_rows_on_chunk_grid).
// kLoadPolicy: the cache policy of the chunk loads (realign_load_rule says which plans take which).
// kTileA: kRealignTileA, or kSmallRealignTileA for small grids (realign_small_tiles_by_default),
// under the same launch bound (64-row tiles: 48-64 registers, no stack).
template <typename T, bool kShifted, typename Index, bool kByteQuads = false, bool kAlignedInput = false,
          RealignLoads kLoadPolicy = RealignLoads::kPlain, int kTileA = kRealignTileA>
__global__ void __launch_bounds__(kThreads, kRealignBlocksPerSm)
realign_window_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const RealignWindowArgs args) {
  static_assert(!kByteQuads || (sizeof(T) == 1 && !kShifted), "byte quads serve unshifted 1-byte tiles");
  using Shape = RealignWindowShape<sizeof(T), kTileA>;
  constexpr int kE = sizeof(T);
  constexpr int kTileB = Shape::kTileB, kV = Shape::kV, kChunks = Shape::kChunks;
  constexpr int kShift = kShifted ? Shape::kShift : 0;
  constexpr int kRows = kTileB + kShift;  // input rows (b) per tile
  constexpr int kLy = kThreads / kChunks;  // load: kChunks lanes per row, kLy rows per pass
  // Small tiles' shifted windows end in a part pass (kRows = 9 * 16 or 9 * 32 rows, kLy = 32 or 64).
  constexpr int kLoads = (kRows + kLy - 1) / kLy;
  constexpr bool kPartPass = kRows % kLy != 0;
  constexpr int kStaging = (kRows + kThreads - 1) / kThreads;  // staging loads per thread
  constexpr int kSx = kTileB / kV;         // store: lanes (vectors) per output row
  constexpr int kSy = kThreads / kSx;      // output rows per pass
  static_assert(kTileA % kSy == 0 && 32 % kChunks == 0, "tile must split evenly over the block");
  static_assert(kLy * kE % 16 == 0, "a thread's rows must share their offset from the 16-byte grid (park)");
  // rows[j * kChunks + (c ^ key(j))]: aligned chunk c of input row b0 - kShift + j.
  __shared__ uint4 rows[kRows * kChunks];
  __shared__ uint4 staging[kRows];  // cover chunk kChunks of each row, where it holds elements
  const T* tile = reinterpret_cast<const T*>(rows);
  // Distinct for the rows a store lane group reads. Unsigned: j is never negative, and signed
  // division cost the store phase a few instructions per row.
  auto key = [](int j) { return static_cast<int>(static_cast<unsigned>(j) / kV % kChunks); };

  const Index in_sb = static_cast<Index>(args.in_sb), out_sa = static_cast<Index>(args.out_sa);
  const int lx = threadIdx.x % kChunks, ly = threadIdx.x / kChunks;
  // Whether this thread's row of load pass i (ly + i kLy) lies in the tile: only a part pass
  // (small tiles' shifted windows) has rows past kRows, in whole warps (kLy is a multiple of 32).
  auto row_in_tile = [&](int i) { return !kPartPass || i < kLoads - 1 || ly + i * kLy < kRows; };

  for (int64_t t = blockIdx.x; t < args.order.total; t += gridDim.x) {
    const TileSpot spot = args.locate(t);
    const T* src = in + spot.in_off;
    T* dst = out + spot.out_off;
    const int64_t a0 = spot.ta * kTileA, b0 = spot.tb * kTileB;
    const WindowTileBounds w = WindowTileBounds::at<kTileA, kTileB, kShift>(a0, b0, args.size_a, args.size_b);
    const bool interior = w.interior<kTileA, kRows>();
    // Row j's share: its element a0 (rows outside the tensor clamped to its last row; their
    // cells are never read) and the share's offset from the 16-byte grid.
    auto share = [&](int j) {
      const int jc = interior ? j : min(max(j, w.j_lo), w.j_hi - 1);
      return reinterpret_cast<const unsigned char*>(src + static_cast<Index>(b0 - kShift + jc) * in_sb + static_cast<Index>(a0));
    };
    auto cover = [](const unsigned char* p) { return reinterpret_cast<const uint4*>(p - (reinterpret_cast<uintptr_t>(p) & 15)); };
    auto offset = [](const unsigned char* p) { return static_cast<int>(reinterpret_cast<uintptr_t>(p) & 15); };
    auto last_chunk = [&](int m) { return interior ? (m == 0 ? kChunks - 1 : kChunks) : last_cover_chunk(m, w.a_here, kE); };

    // Whether every chunk the tile reads lies inside the input's span: rows lie at increasing
    // addresses (strides are non-negative), so the first row's first chunk and the end of the
    // last row's cover bound them.
    const unsigned char* first = share(w.j_lo);
    const uintptr_t cover_end = reinterpret_cast<uintptr_t>(share(w.j_hi - 1)) + w.a_here * kE + 15;
    const bool inside = reinterpret_cast<uintptr_t>(cover(first)) >= args.in_lo && (cover_end & ~uintptr_t{15}) <= args.in_hi;
    // Chunk lx of each row this thread loads, all issued before any use, then the chunk past
    // each row's kChunks for the rows whose share needs it. The checked loads run as a loop of
    // their own: calls amid the plain loads would make ptxas spill around them.
    uint4 raw[kLoads];
    auto load_all = [&](auto&& load) {
#pragma unroll
      for (int i = 0; i < kLoads; ++i) {
        if (!row_in_tile(i)) {
          raw[i] = make_uint4(0, 0, 0, 0);  // exchanged in the park below, never stored
          continue;
        }
        const unsigned char* p = share(ly + i * kLy);
        raw[i] = load(cover(p) + min(lx, last_chunk(offset(p))));
      }
#pragma unroll
      for (int i = 0; i < kStaging; ++i) {
        const int j = threadIdx.x + i * kThreads;
        if (j >= kRows) continue;
        const unsigned char* p = share(j);
        if (!kAlignedInput && last_chunk(offset(p)) >= kChunks) staging[j] = load(cover(p) + kChunks);
      }
    };
    if (inside) {
      load_all([&](const uint4* chunk) { return load_chunk_unchecked<kLoadPolicy>(chunk, args.in_lo, args.in_hi); });
    } else {
      load_all([&](const uint4* chunk) { return load_chunk_inside(chunk, args.in_lo, args.in_hi); });
    }
    __syncthreads();

    // Realign and park: lane lx of row j writes aligned chunk lx (bytes [m + 16 lx, + 16) of
    // the cover) to its swizzled slot. A thread's rows lie kLy apart, and kLy rows span a
    // multiple of 16 bytes (kLy * in_sb * kE, kLy = 16 for 2-byte tiles and 32 for 1-byte ones),
    // so in interior tiles (no clamped rows) they share the first one's offset.
    // The two cases run as separate loops: a select between the offsets kept every row's address
    // computation in the interior tiles' code.
    auto park = [&](auto&& offset_of_row) {
#pragma unroll
      for (int i = 0; i < kLoads; ++i) {
        const int j = ly + i * kLy;
        // A part pass's idle rows still take part in the exchange, which the host emulation
        // runs block-wide.
        const bool row_on = row_in_tile(i);
        if constexpr (kAlignedInput) {
          if (row_on) rows[j * kChunks + (lx ^ key(j))] = raw[i];
        } else {
          const int m = offset_of_row(j);
          uint4 next = chunk_of_next_lane(raw[i], kChunks);
          if (row_on) {
            if (lx == kChunks - 1 && last_chunk(m) >= kChunks) next = staging[j];
            rows[j * kChunks + (lx ^ key(j))] = realign_chunk(raw[i], next, m);
          }
        }
      }
    };
    if (kAlignedInput || !interior) {
      park([&](int j) { return offset(share(j)); });
    } else {
      const int m = offset(share(ly));
      park([m](int) { return m; });
    }
    __syncthreads();

    // Store (store_window_rows). Element k of a vector at window offset o (b = b0 + o + k) sits in
    // tile row j0 + k = kShift + o + k, column r: at chunk (r / kV) ^ key(row). The vector's rows
    // span at most two swizzle keys, the second from row j0 + split on, so each element costs a
    // compare, a select and a load with a constant offset.
    if constexpr (kByteQuads) {
      store_byte_quads<kTileA, kTileB, kChunks, Index>(rows, reinterpret_cast<unsigned char*>(dst), a0, b0, out_sa, w, key);
    } else {
      static_assert(kSx == 16 && kSy == 16, "byte_store_lane covers 16 vectors of 16 rows");
      // Unsigned: with a signed thread index the % and / cost the shifted kernels 16 bytes of spills.
      const unsigned t = threadIdx.x;
      const StoreLane lane = kE == 1 ? byte_store_lane(t) : half_store_lane(t);
      const int sx = lane.sx, sy = lane.sy;  // store lane: vector sx of rows sy, sy + kSy, ..
      // One window shift per lane where its rows allow it (2-byte tiles).
      store_window_rows<T, kTileA, kSy, kV, kShift, Index, true>(dst, a0, b0, out_sa, w, sx, sy, [&](int r, int o) {
        const unsigned j0 = kShift + o, ur = r;  // j0 at least 0: o >= -shift
        const int split = kV - j0 % kV;
        const T* low = tile + (j0 * kChunks + ((ur / kV) ^ key(j0))) * kV + ur % kV;
        const T* high = tile + (j0 * kChunks + ((ur / kV) ^ key(j0 + kV))) * kV + ur % kV;
        return [=](int k) { return (k < split ? low : high)[k * kChunks * kV]; };
      });
    }
    // No barrier here: the next tile's first shared writes (staging) follow this tile's last
    // staging reads by the barrier above, and its row writes follow every thread's stores by
    // the next tile's first barrier.
  }
}

// ---- host side ----------------------------------------------------------------------------------

// The input's byte span [lo, hi): the plan's strides are non-negative, so its first element is
// the lowest.
inline void input_byte_span(const LayoutPlan& plan, uintptr_t in_address, uintptr_t& lo, uintptr_t& hi) {
  lo = in_address;
  hi = in_address + static_cast<uintptr_t>((plan.max_offset(plan.in_strides) + 1) * plan.element_bytes);
}

constexpr RealignLoads realign_load_rule(int element_bytes, bool shifted, bool aligned_input) {
  const bool fetch_256 = !aligned_input && (element_bytes == 2 ? !shifted : shifted);
  return fetch_256 ? RealignLoads::kEvictLastFetch256 : RealignLoads::kEvictLast;
}

inline RealignLoads realign_load_policy(int element_bytes, bool shifted, bool aligned_input) {
  const long long setting = switch_int_in_range("realign_loads", 0, 2, -1);
  if (!l2_evict_last_loads(true)) return RealignLoads::kPlain;
  return setting >= 0 ? static_cast<RealignLoads>(setting) : realign_load_rule(element_bytes, shifted, aligned_input);
}

inline bool realign_aligned_input_enabled() {
  const bool enabled = !switch_off("realign_aligned_input");
  return enabled;
}

// Whether every input row's share of every tile starts on the 16-byte grid: the input's address
// and every input stride but the fast one (a, unit stride; tiles start at multiples of 128
// elements along it) multiples of 16 bytes.
inline bool input_rows_on_chunk_grid(const LayoutPlan& plan, uintptr_t in_address) {
  if (in_address % 16 != 0) return false;
  for (int d = 0; d < plan.rank; ++d)
    if (d != plan.in_fast_dim && plan.sizes[d] != 1 && plan.in_strides[d] * plan.element_bytes % 16 != 0) return false;
  return true;
}

// Whether the plan fits the kernel: unit-stride fast dims on both sides, 32-bit offsets with the
// window margin along b (window_offsets_fit_32).
inline bool realign_window_fits(const LayoutPlan& plan, int tile_b, int shift_elems) {
  const FastDims f = FastDims::from_plan(plan);
  return f.in_sa == 1 && f.out_sb == 1 && window_offsets_fit_32(plan, tile_b, shift_elems);
}

}  // namespace torch_transpose
