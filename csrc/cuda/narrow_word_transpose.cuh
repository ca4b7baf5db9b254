// Narrow transposes of 16 lines of 1- or 2-byte elements against dense rows of 16 or 32 bytes
// (int8 16x16777216 <-> 16777216x16, bf16 NCHW <-> NHWC with C = 16 as in a 16-channel latent).
//
// Why: the narrow kernel (narrow_transpose.cuh) serves these with one shared-memory access per
// element on the dense side (16 byte loads and 16 byte inserts for every 16-byte vector) and ran
// int8 16x16777216 at 0.44 of copy (bench/NOTES.md v52's sweep); the interleave kernel, which
// permutes bytes in registers, stops at 8 lines for these widths because a lane holding all 16
// lines' vectors spilled (interleave_transpose.cuh).
//
// How: a group of R = 4 / element bytes lines, read at the same 16-byte chunk, holds R x R
// blocks of elements; transposing each block in registers (4x4 bytes: 8 byte permutes; 2x2
// halves: 2) turns the group into "words": one 4-byte word per position, holding the group's R
// elements of that position. A dense row is G = 16 * element bytes / 4 such words, one per
// group (4 for int8, 8 for 2-byte), so the dense side then moves whole words and vectors:
//   * a tile is 256 bytes of each line (256 int8 or 128 2-byte positions), 4 KB, for a block
//     of 64 threads; thread t owns chunk c = t / 4 of groups g = t % 4 (+ 4 for 2-byte);
//   * lines in: each thread loads its groups' R lines at chunk c (four 16-byte loads), permutes,
//     and stores each word into the dense tile in shared memory (4-byte stores); after the
//     barrier the tile leaves as 16-byte vectors, 512 bytes per warp instruction;
//   * dense in: the mirror (16-byte loads and shared stores, 4-byte shared loads, the same
//     permutes, which are their own inverse, 16-byte line stores).
// The dense tile's 16-byte chunks are swizzled (chunk q sits at q ^ ((q / 16) % 8)): a warp's
// word accesses, 8 chunks c x 4 groups at the same position in each, would otherwise all fall in
// 4 banks; swizzled they cover 32, and the vector accesses (8 consecutive chunks a phase) still
// cover all banks.
// H200, same-call A/Bs by GPU time (bench/NOTES.md v56), ratio to copy, narrow kernel -> these
// tiles (512-byte lines, evict_last loads): int8 16x16777216 0.44 -> 0.98, 16777216x16 0.74 ->
// 0.96, bf16 16x8388608 0.70 -> 0.98, 8388608x16 0.96 level, bf16 NCHW -> NHWC 32x16x256x256
// 0.65 -> 0.99, back 0.93 -> 0.98. Plain loads lost 0.01-0.03 everywhere. Tiles of 256-byte
// lines gained up to 0.01 over 512 (more blocks: int8 4x16x65536 0.81 -> 0.84), 1024 lost.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "narrow_transpose.cuh"  // NarrowArgs: this kernel takes the narrow kernel's plans

namespace torch_transpose {

constexpr int kNarrowWordLines = 16;  // lines of a plan this kernel takes

constexpr int kNarrowWordLineBytes = 256;  // bytes of each line in a tile: 16 chunks
constexpr int kNarrowWordThreads = kNarrowWordLineBytes / 4;  // four a chunk

template <int kElementBytes> struct NarrowWordShape {
  static_assert(kElementBytes == 1 || kElementBytes == 2, "1- and 2-byte elements");
  static constexpr int kR = 4 / kElementBytes;                        // lines per group (elements per word)
  static constexpr int kV = 16 / kElementBytes;                       // positions per 16-byte chunk
  static constexpr int kWide = kNarrowWordLineBytes / kElementBytes;  // positions per tile
  static constexpr int kGroups = kNarrowWordLines / kR;               // words per dense row
  static constexpr int kGroupsPerThread = kGroups / 4;
  static constexpr int kChunksPerThread = kNarrowWordLines * kNarrowWordLineBytes / 16 / kNarrowWordThreads;  // 4
};

// Whether the loads ask L2 for 256-byte fills (load_global's kFetch256), by direction: lines in
// gained 0.003-0.005 with them (these tiles: int8 16x16777216 0.993-0.994 -> 0.997, bf16
// 16x8388608 0.994-0.995 -> 0.999; tiles of 512-byte lines likewise), dense in lost up to 0.008
// here and up to 0.05 with 512-byte lines (bf16 64x128x128x16 1.02-1.03 -> 0.98-1.00).
// TORCH_TRANSPOSE_NARROW_WORD_FETCH_256: 0 = never, 1 = both directions (tests), unset = this rule.
inline bool narrow_word_fetch_256(bool dense_in) {
  static const Override setting = env_override("TORCH_TRANSPOSE_NARROW_WORD_FETCH_256");
  return decide(setting, !dense_in);
}

// TORCH_TRANSPOSE_NARROW_WORDS: 0 = never (the narrow kernel takes these plans), 1 or unset =
// whenever the plan fits.
inline Override narrow_word_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_NARROW_WORDS");
  return setting;
}

// Where dense-tile chunk q sits, in chunks (the swizzle above).
__device__ __forceinline__ uint32_t narrow_word_chunk(uint32_t q) { return q ^ ((q >> 4) & 7); }

// The words of one group's R chunks (x[i]: line R * g + i, the same positions), in place:
// afterwards x[j].v[m] is the group's word for position m * R + j of the chunk (its R elements in
// line order, the first in the low bytes). Each block transpose is its own inverse, so the
// dense-in direction calls this on such words to get the lines' chunks back.
template <int kElementBytes>
__device__ __forceinline__ void narrow_word_permute(Vec<uint32_t, 4> (&x)[4 / kElementBytes]) {
  if constexpr (kElementBytes == 1) {
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      uint32_t y[4];
      transpose_4x4_bytes(x[0].v[m], x[1].v[m], x[2].v[m], x[3].v[m], y);
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j].v[m] = y[j];
    }
  } else {
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      uint32_t lo, hi;
      transpose_2x2_halves(x[0].v[m], x[1].v[m], lo, hi);
      x[0].v[m] = lo;
      x[1].v[m] = hi;
    }
  }
}

// After narrow_word_permute, x[j].v[m] is the group's word for position m * R + j of the chunk.
// Its index among the dense tile's words: position p's row starts at word p * G, and the group
// is word g of that row.
template <int kElementBytes>
__device__ __forceinline__ uint32_t narrow_word_index(uint32_t chunk, int m, int j, uint32_t group) {
  using S = NarrowWordShape<kElementBytes>;
  const uint32_t p = chunk * S::kV + m * S::kR + j;
  const uint32_t q = (p * S::kGroups + group) / 4;  // G is a multiple of 4: the row's group / 4-th chunk
  return narrow_word_chunk(q) * 4 + group % 4;
}

// kDenseIn: the input is the dense side (16777216 x 16 -> 16 x 16777216, NHWC -> NCHW).
// Grid: x walks tiles along the wide dim, y the batch items; `valid` positions of the last tile
// (the wide dim is whole chunks: make_narrow_word_grid) are moved, the rest of it masked.
template <typename T, bool kDenseIn, bool kEvictLast, bool kFetch256>
__global__ void __launch_bounds__(kNarrowWordThreads)
narrow_word_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const NarrowArgs args) {
  using S = NarrowWordShape<sizeof(T)>;
  using Chunk = Vec<uint32_t, 4>;
  __shared__ __align__(16) uint32_t words[kNarrowWordLines * kNarrowWordLineBytes / 4];
  Chunk* chunks = reinterpret_cast<Chunk*>(words);

  int64_t in_off, out_off;
  args.batch.offsets(blockIdx.y, in_off, out_off);
  const int64_t w0 = static_cast<int64_t>(blockIdx.x) * S::kWide;
  const int valid = static_cast<int>(min(static_cast<int64_t>(S::kWide), args.wide - w0));
  const T* src = in + in_off + (kDenseIn ? w0 * kNarrowWordLines : w0);
  T* dst = out + out_off + (kDenseIn ? w0 : w0 * kNarrowWordLines);
  const int32_t stride = static_cast<int32_t>(args.line_stride);

  // This thread's groups on the lines side: chunk c of lines R*g .. R*g + R - 1.
  const uint32_t c = threadIdx.x / 4, g0 = threadIdx.x % 4;
  const bool unit_live = static_cast<int>(c) * S::kV < valid;
  // Dense side: chunk q = u * threads + t covers bytes [16q, 16q + 16) of rows of 16 * e bytes.
  auto dense_live = [&](uint32_t q) { return static_cast<int>(q * 16 / (kNarrowWordLines * sizeof(T))) < valid; };

  if constexpr (!kDenseIn) {
    Chunk x[S::kGroupsPerThread][S::kR];
#pragma unroll
    for (int h = 0; h < S::kGroupsPerThread; ++h)
#pragma unroll
      for (int i = 0; i < S::kR; ++i) {
        const uint32_t line = (g0 + 4 * h) * S::kR + i;
        // One expression (as built and timed); naming the chunk's pointer first changed the SASS.
        x[h][i] = unit_live ? load_global<kEvictLast, kFetch256>(
                                  reinterpret_cast<const Chunk*>(src + static_cast<int32_t>(line) * stride +
                                                                 static_cast<int32_t>(c) * S::kV))
                            : Chunk{};
      }
#pragma unroll
    for (int h = 0; h < S::kGroupsPerThread; ++h) {
      narrow_word_permute<sizeof(T)>(x[h]);
#pragma unroll
      for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int j = 0; j < S::kR; ++j) words[narrow_word_index<sizeof(T)>(c, m, j, g0 + 4 * h)] = x[h][j].v[m];
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < S::kChunksPerThread; ++u) {
      const uint32_t q = u * kNarrowWordThreads + threadIdx.x;
      if (dense_live(q)) reinterpret_cast<Chunk*>(dst)[q] = chunks[narrow_word_chunk(q)];
    }
  } else {
    Chunk v[S::kChunksPerThread];
#pragma unroll
    for (int u = 0; u < S::kChunksPerThread; ++u) {
      const uint32_t q = u * kNarrowWordThreads + threadIdx.x;
      if (dense_live(q)) v[u] = load_global<kEvictLast, kFetch256>(reinterpret_cast<const Chunk*>(src) + q);
    }
#pragma unroll
    for (int u = 0; u < S::kChunksPerThread; ++u) {
      const uint32_t q = u * kNarrowWordThreads + threadIdx.x;
      if (dense_live(q)) chunks[narrow_word_chunk(q)] = v[u];
    }
    __syncthreads();
    if (unit_live) {
#pragma unroll
      for (int h = 0; h < S::kGroupsPerThread; ++h) {
        Chunk x[S::kR];
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int j = 0; j < S::kR; ++j) x[j].v[m] = words[narrow_word_index<sizeof(T)>(c, m, j, g0 + 4 * h)];
        narrow_word_permute<sizeof(T)>(x);
#pragma unroll
        for (int i = 0; i < S::kR; ++i) {
          const uint32_t line = (g0 + 4 * h) * S::kR + i;
          // Through __stwb: stored as a Vec or a uint4, the 2-byte instances' chunks went out as
          // four 4-byte stores (NVVM split them; the 1-byte ones kept 16-byte stores).
          __stwb(reinterpret_cast<uint4*>(dst + static_cast<int32_t>(line) * stride + static_cast<int32_t>(c) * S::kV),
                 make_uint4(x[i].v[0], x[i].v[1], x[i].v[2], x[i].v[3]));
        }
      }
    }
  }
}

// Whether a narrow plan (make_narrow_args) takes narrow word tiles, and their grid: the switch,
// 1- or 2-byte elements, N = 16 lines, a wide dim of whole 16-byte chunks (the lines' ends
// then fall on chunk ends), at most 65535 batch items (grid y).
inline bool make_narrow_word_grid(const NarrowArgs& narrow, int element_bytes, dim3& grid) {
  if (!decide(narrow_word_override(), true) || (element_bytes != 1 && element_bytes != 2) ||
      narrow.n != kNarrowWordLines || narrow.wide % (16 / element_bytes) != 0 || narrow.batch.count() > 65535)
    return false;
  const int64_t wide_per_tile = kNarrowWordLineBytes / element_bytes;
  grid = dim3{static_cast<unsigned int>(ceil_div(narrow.wide, wide_per_tile)),
              static_cast<unsigned int>(narrow.batch.count()), 1};
  return true;
}

}  // namespace torch_transpose
