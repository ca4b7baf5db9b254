// Window tiles for 1- and 2-byte elements whose rows cannot all take 16-byte vectors (odd
// shapes such as fp16 8191 x 8193, rows of 8190 halves or bytes, `x[1:, 1:]` of a byte
// matrix) when both fast dims have unit stride (in_sa == out_sb == 1).
//
// Such plans otherwise take the square tile kernel with 2- to 8-byte vectors or none: H200,
// 2026-11-30 (bench/NOTES.md v23), fp16 8192x8190 0.65 of copy, int8 8192x8190 0.45, int8
// 8192x8184 0.63. The window kernel for 4- and 8-byte elements (window_tile_transpose.cuh)
// loads element by element, which for these widths would need 64-128 loads per thread per
// tile. This kernel keeps 16-byte accesses on both sides:
// * Loads: each input row's share of the tile (kTileA elements from a0, 128 or 256 bytes) is
//   read as the 16-byte-aligned chunks that cover it: kChunks of them, and one more when the
//   share starts off the 16-byte grid. Lane g of a row's group holds chunk g, takes chunk g + 1
//   from its neighbour by a warp shuffle (the group's last lane from a staging slot in shared
//   memory, which a separate load filled) and funnel-shifts the pair by the row's offset from the
//   grid. Shared memory then holds aligned rows of 16-byte chunks, XOR swizzled as in the vector
//   tile kernel, written with one 16-byte store per chunk. Where the plan proves every share on
//   the grid (input_rows_on_chunk_grid), the chunks go to shared memory as loaded.
// * Stores: as in the window kernel, each output row's window is shifted back to the row's
//   32-byte sector grid, so that every store is an aligned 16-byte vector (the two ragged ends of
//   a row go element by element) and no sector is split between blocks; a block therefore loads
//   kShift input rows more than it writes. 1-byte tiles map store lanes so that the gather's
//   shared loads meet no bank twice (byte_store_lane), 2-byte tiles so that they meet none more
//   than twice (half_store_lane).
// The cover of a row may reach up to 15 bytes outside the row's share. Those bytes are read
// only where they lie inside the input's byte span (its first element to its last byte: the
// span lies inside the input's allocation, whatever the view); a chunk that crosses the span's
// ends (at most the first and the last of the tensor) is read element by element.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"
#include "window_tile_transpose.cuh"

namespace torch_transpose {

// TORCH_TRANSPOSE_REALIGN_WINDOW: 1 = every plan the kernel fits (tests, A/B runs), 0 = none
// (the square tile kernel with partial vectors or none), unset = realign_window_by_default.
inline Override realign_window_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_REALIGN_WINDOW");
  return setting;
}

// Which plans take the kernel unless the switch says otherwise, by element width and vector
// (elements per vector on both sides, below 16 bytes). H200, same call, two rounds, ours / copy
// by GPU time, square tiles -> realign windows (bench/NOTES.md v25): fp16 8192x8190 (V = 2)
// 0.65 -> 0.91, int8 8192x8190 (V = 2) 0.45 -> 0.77, int8 8192x8184 (V = 8) 0.63 -> 0.78, fp16
// 8191x8193 (V = 1) 0.60 -> 0.76, int8 8191x8193 0.47-0.48 -> 0.53, fp16 8190x8192 0.65 ->
// 0.84, int8 8190x8192 0.44-0.45 -> 0.59.
// 2-byte rows of 8-byte vectors (V = 4) take it only where the output side alone is off the
// 16-byte grid (square tiles then split the output's sectors between blocks) and the grid holds
// at least kRealignHalfVectorTilesPerSm tiles of 128 rows per SM. Until session 65 its tiles had
// 128 rows and grids under 8 waves of 4 blocks per SM (32 tiles per SM) stayed on square tiles:
// a short last wave of those large tiles cost more than the sectors saved. Small grids now take
// tiles of 64 rows (realign_small_tiles_by_default), which win from about 3 tiles per SM on:
// H100, session 67 (bench/NOTES.md v70, results/h100-ab-session67.md), square tiles -> realign
// windows, same call, three rounds: bf16 8196x768 (2.95 tiles per SM) 1.07-1.09 -> 1.08-1.11,
// fp16 4100x2048 (4.0) 0.76 -> 0.82-0.83, fp16 2052x4096 (4.1) 0.76-0.78 -> 0.78-0.80, bf16
// 12292x768 (4.4) 1.02-1.03 -> 1.07-1.09, bf16 8x1500x768 (4.4) 0.80 -> 0.81-0.82, bf16 16388x768
// (5.9) 1.01-1.03 -> 1.05-1.07, fp16 6148x2048 (5.9) 0.92 -> 0.94; two rounds: bf16 20004x768
// (7.1) 1.00-1.01 -> 1.04-1.05, fp16 4100x4096 (8.0) 0.92 -> 0.95, fp16 12292x2048 (11.8)
// 0.89-0.90 -> 0.95, bf16 32x1500x768 (17.5) 0.88 -> 0.98, bf16 50252x768 (17.9) 0.90 -> 0.99;
// one round below: bf16 4100x768 (1.5) 1.05-1.07 -> 1.02, fp16 1028x1024 (0.55) 0.55 -> 0.53,
// fp16 2052x2048 (2.1) and bf16 4x1500x768 (2.2) level. The threshold sits at 4, where three
// rounds show gains on every shape; 2.95 gained 0.02 as well. Before, with 128-row tiles only:
// H200, same call, two rounds (bench/NOTES.md v51),
// square tiles -> realign windows, output rows off the grid: fp16 16x4100x4096 (32 waves)
// 0.872-0.889 -> 0.987-0.997, 8x4100x4096 (16) 0.890 -> 0.964-0.965, bf16 128x1500x768 (17)
// 0.878-0.885 -> 0.971, 64x1500x768 (8.7) 0.915 -> 0.939-0.942, 32x1500x768 (4.4) 0.897 ->
// 0.887-0.890, fp16 4100x4096 (2) 0.865-0.867 -> 0.834-0.835. Input rows off the grid stay on
// square tiles, which reach as much or more: fp16 Whisper conv out 32x768x1500 0.925-0.927 ->
// 0.902-0.907, 128x768x1500 0.980-0.982 -> 0.963-0.964, 16x4096x4100 0.978-0.984 -> 0.975,
// 8192x8188 0.947 -> 0.948, 4x8192x8188 0.961-0.966 -> 0.965-0.971.
constexpr int64_t kRealignHalfVectorTilesPerSm = 4;
// The kernel's launch bounds, for tiles of either size. Small tiles at 5 blocks per SM (a stack
// of up to 16 bytes) read less than at 4 where they matter most: H100, same call, two rounds
// (bench/NOTES.md v66), 4 -> 5 blocks: fp16 2049x2051 0.70 -> 0.62-0.67, int8 2049x2051 0.58 ->
// 0.52-0.55, bf16 4097x768 0.98-0.99 -> 0.96-0.97.
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
// 2-byte plans gain up to 35 tiles of 128 rows per SM, are level at 48 and lose 0.005-0.01 at
// 64 and more. Among them, plans whose input rows are whole 16-byte vectors and whose blocks in
// flight (kRealignBlocksPerSm per SM) cover fewer than 6 bands of tiles (a band: the tiles_b tiles
// of one row of tiles) keep 128 rows from 10 tiles per SM: such tall matrices lose up to 0.015
// with 64, while batched ones, whose short bands put many bands in flight, gain. H100, same call,
// two rounds, 128 -> 64 rows (session 67, bench/NOTES.md v70, results/h100-ab-session67.md; tiles
// of 128 rows per SM, bands in flight): bf16 50257x768, the GPT-2 embedding (17.9, 1.3)
// 0.989-0.991 -> 0.980-0.981, 50257x1024 (23.8, 1.3) 0.983-0.984 -> 0.963-0.967, 40001x1024
// (19.0, 1.7) 0.988-0.990 -> 0.976, 30001x1536 (21.4, 2.2) 0.983-0.985 -> 0.966-0.972, 24577x2048
// (23.4, 2.7) 0.952-0.956 -> 0.940-0.941; level: 16385x1536 (11.7, 4.1), 12001x2048 (11.4,
// 5.6), 8193x4096 (15.8, 8.1); gains: 4x8001x768 (11.5, 8.4) 0.998-1.007 -> 1.021-1.022,
// 16x2001x768 (11.6, 33) 0.932-0.937 -> 0.960-0.962, 64x1501x768 (34.9, 44) 0.965-0.967 ->
// 0.983-0.986; under 10 tiles per SM: 10001x2048 (9.6, 6.7) 0.931-0.939 -> 0.947-0.948, 20001x768
// (7.1, 3.4) 1.018-1.021 -> 1.050-1.052. 1-byte plans gain up to about 4, are level to 6.5 and
// from 7 on are level or lose 0.02-0.03. H100 (132 SMs), same call, two rounds, ours / copy by GPU time, 128 -> 64 rows
// (bench/NOTES.md v66, results/h100-ab-session65.md), tiles of 128 rows per SM in brackets: fp16
// 2049x2051 (2.2) 0.50 -> 0.70, bf16 4097x768 (1.0) 0.78 -> 0.98-0.99, bf16 1025x8193 (2.0) 0.64 ->
// 0.73-0.74, fp16 4097x4099 (8.3) 0.86-0.87 -> 0.95, fp16 8191x8193 (32) 0.91 -> 0.94, bf16
// 64x1500x768 (35) 0.97 -> 0.99, fp16 12289x8193 (48) 0.92 -> 0.93, fp16 8x4100x4096 (64) 0.97 ->
// 0.96, fp16 16383x16385 (125) 0.92 -> 0.91-0.92; int8 2049x2051 (1.2) 0.41-0.47 -> 0.53-0.63, int8
// 4097x4095 (4.1) 0.49-0.50 -> 0.55-0.57, int8 3000x5000 (3.6) 0.59-0.63 -> 0.61-0.64,
// int8 8191x2049 (4.1) 0.55-0.56 -> 0.56-0.57, int8 8191x8193 (16) 0.80-0.81 -> 0.76,
// int8 8192x8190 (16) 0.91 -> 0.89. The 1-byte threshold, session 66 (H100, three calls of 2-3
// rounds, results/h100-ab-session66.md; 128 -> 64 rows): int8 5000x4097 (5.0) 0.61-0.64 ->
// 0.59-0.63, 6000x4500 (6.5) 0.74-0.77 -> 0.76-0.77, 6500x4500 (7.1) 0.79-0.80 -> 0.76-0.78,
// 6000x5000 (7.3) 0.78-0.80 -> 0.77-0.79, 4500x7000 (7.5) 0.79-0.80 -> 0.76-0.78, 7000x4500
// (7.6) 0.81-0.82 -> 0.78-0.80.
// TORCH_TRANSPOSE_REALIGN_SMALL_TILES: 0 = never, 1 = always (tests, A/B runs), unset = this rule.
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
  static const Override setting = env_override("TORCH_TRANSPOSE_REALIGN_SMALL_TILES");
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
// twice more: 4 wavefronts per shared load (scripts/realign_store_banks.py). Here a warp takes 8
// consecutive vectors (8 consecutive keys: the 8 bank groups) of 4 rows 4 apart inside one group
// of 16 rows (the same chunk, its 4 words: the 4 banks of a group), so every load meets each
// bank once, whatever the rows' shifts. H200, same call, ours / copy by GPU time, 16 lanes per
// row -> these (v49): int8 8190x8192 0.66 -> 0.80, 8191x8193 0.53 -> 0.57, 16385x16383 0.55 ->
// 0.60. 2-byte tiles keep 16 lanes per row: there (8 loads per vector) the same mapping lost up
// to 0.035 on large grids (8191x8193) and won only on grids of under 2 tiles per SM.
struct StoreLane {
  int sx, sy;
};
__device__ __forceinline__ StoreLane byte_store_lane(unsigned t) {
  static_assert(kThreads == 256, "8 warps: 2 halves of a row's 16 vectors x 4 row sets");
  const int lane = t % 32, warp = t / 32;
  return {8 * (warp % 2) + lane % 8, warp / 2 + 4 * (lane / 8)};  // rows warp / 2 + {0, 4, 8, 12}
}

// The same for 2-byte tiles, which keep 16 lanes (one 256-byte window) per output row so that a
// warp's store writes two whole windows: which two rows share a warp. Element k of a vector in
// row r sits in column r, word (r % 8) / 2 of its 16-byte chunk, so rows r and r + 1 (the plain
// t / 16) read the same word position, and their 32 lanes meet each bank up to four times (16
// chunks per row, 8 bank groups); ncu: 9.5 M shared load wavefronts for 2.1 M loads on fp16
// 8191x8193 (call 1 of session 47), where the gather's 2.1 M loads (one per 32 elements) would
// need 2.1 M without conflicts. Rows 2 apart read different words, so no bank serves both rows:
// pairs {0, 2}, {1, 3}, {4, 6}, .. of each 16 rows (at most two lanes per bank; the bank model,
// scripts/realign_store_banks.py: 4.00 -> 2.00 wavefronts per load for shifted rows, 2.00 either
// way unshifted). Timed only together with v50's other changes (bench/NOTES.md v50), not on its own.
__device__ __forceinline__ StoreLane half_store_lane(unsigned t) {
  static_assert(kThreads == 256, "8 warps of 2 rows x 16 vectors");
  const unsigned warp = t / 32, h = t / 16 % 2;
  return {int(t % 16), int(4 * (warp / 2) + warp % 2 + 2 * h)};
}

// The 16-byte chunk at `chunk` (16-byte aligned), with the bytes outside [lo, hi) read as zero.
// Only tiles whose cover crosses the input's span take it (at most the first and the last),
// so it stays out of line.
__device__ __noinline__ uint4 load_chunk_inside(const uint4* chunk, uintptr_t lo, uintptr_t hi) {
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
#if defined(TORCH_TRANSPOSE_CUDA_ON_HOST)
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
#if defined(TORCH_TRANSPOSE_CUDA_ON_HOST)
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

// Whether 1-byte tiles whose output rows lie on the sector grid store through store_byte_quads
// (the default: H200, same call, two rounds, store_window_rows -> byte quads, bench/NOTES.md
// v26: int8 8192x8190 0.76 -> 0.83, 8192x8184 0.78 -> 0.85-0.86, 4096x4094 0.57 -> 0.67-0.74,
// 16x1024x1022 0.55-0.56 -> 0.68-0.71, 2048x2046 0.53 -> 0.60). TORCH_TRANSPOSE_REALIGN_BYTE_QUADS=0
// keeps store_window_rows for them (read once; tests of that path and A/B runs).
inline Override realign_byte_quads_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_REALIGN_BYTE_QUADS");
  return setting;
}

// The store phase of 1-byte tiles whose output rows all lie on the sector grid (no window
// shift). store_window_rows reads each output byte from shared memory on its own: 16 loads per
// 16-byte vector, which ncu found holding the kernel on the L1/shared path (bench/NOTES.md v25:
// L1/TEX 76-87% busy, DRAM 40-55%). Here a thread takes 4 output rows (a quad: r4 .. r4 + 3)
// by 16 columns (b = b0 + 16 sx ..): 16 aligned 4-byte words, one per tile row, each holding
// the quad's 4 bytes of that row, then 4 x 4 byte transposes give the 4 rows' vectors. A warp
// takes 2 quads by 16 vectors: each of its 4 stores writes 2 whole 256-byte rows, and its loads
// meet each bank at most twice (the swizzle key of rows 16 sx.. is sx % 8).
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

// The chunk loads' cache policy by plan. H200, same call, ours / copy by GPU time (bench/NOTES.md
// v50): plain -> evict_last gained 0.01-0.03 on every plan measured (fp16 8191x8193 0.805 ->
// 0.825, int8 8190x8192 0.82 -> 0.85, GPT-2's embedding 0.94 -> 0.96), as it had in the other
// kernels (load_global). 256-byte fills on top won on two kinds of plan, input rows off the
// 16-byte grid with 2-byte unshifted windows (fp16 8192x8190 0.925 -> 0.933) or 1-byte shifted
// ones (int8 8191x8193 0.631 -> 0.652), and lost or tied on the others (int8 8192x8190 0.872 ->
// 0.847, fp16 16385x2051 0.778 -> 0.767, fp16 8190x8192 0.943 -> 0.935, fp16 8191x8193 level).
constexpr RealignLoads realign_load_rule(int element_bytes, bool shifted, bool aligned_input) {
  const bool fetch_256 = !aligned_input && (element_bytes == 2 ? !shifted : shifted);
  return fetch_256 ? RealignLoads::kEvictLastFetch256 : RealignLoads::kEvictLast;
}

// TORCH_TRANSPOSE_REALIGN_LOADS: 0 = plain, 1 = evict_last, 2 = evict_last with 256-byte fills,
// unset = realign_load_rule; TORCH_TRANSPOSE_L2_EVICT_LAST=0 makes them plain as it does every
// kernel's loads (both read once; A/B runs and tests of each path).
inline RealignLoads realign_load_policy(int element_bytes, bool shifted, bool aligned_input) {
  static const long long setting = env_int_in_range("TORCH_TRANSPOSE_REALIGN_LOADS", 0, 2, -1);
  if (!l2_evict_last_loads(true)) return RealignLoads::kPlain;
  return setting >= 0 ? static_cast<RealignLoads>(setting) : realign_load_rule(element_bytes, shifted, aligned_input);
}

// TORCH_TRANSPOSE_REALIGN_ALIGNED_INPUT=0 realigns inputs that input_rows_on_chunk_grid finds on
// the grid anyway (read once; for A/B runs and tests of that path).
inline bool realign_aligned_input_enabled() {
  static const bool enabled = !env_switched_off("TORCH_TRANSPOSE_REALIGN_ALIGNED_INPUT");
  return enabled;
}

// Whether every input row's share of every tile starts on the 16-byte grid: the input's address
// and every input stride but the fast one (a, unit stride; tiles start at multiples of 128
// elements along it) multiples of 16 bytes. Such plans (a matrix with odd output rows: GPT-2's
// embedding 50257x768) take the kernel's aligned-input form. H200, same call, ours / copy by GPU
// time, realigned -> aligned input (bench/NOTES.md v49): GPT-2's embedding 0.862 -> 0.932, fp16
// 8190x8192 0.836 -> 0.916, bf16 4097x768 0.59 -> 0.69, int8 8190x8192 0.58 -> 0.66.
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
