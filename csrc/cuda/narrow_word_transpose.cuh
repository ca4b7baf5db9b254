#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "narrow_transpose.cuh"  // NarrowArgs: this kernel takes the narrow kernel's plans

namespace torch_transpose {

constexpr int kNarrowWordLineBytes = 256;  // bytes of each line in a tile
constexpr int kNarrowWordColumns = kNarrowWordLineBytes / 16;  // 16-byte chunk columns of a tile
// Dense rows taken, in bytes: 12 (3 int8 words; 8 and fewer are the interleave kernel's) to 64
// (above it the square and TMA byte tiles keep whole 128-byte lines on both sides).
constexpr int kNarrowWordMinRowBytes = 12, kNarrowWordMaxRowBytes = 64;
constexpr int kNarrowWordMaxThreads = 4 * kNarrowWordMaxRowBytes;  // 4N: 64 int8 lines
// 32 registers a thread: 8 blocks of the largest, 32 of the smallest fill an SM.
constexpr int kNarrowWordMinBlocks = 2048 / kNarrowWordMaxThreads;

template <int kElementBytes> struct NarrowWordShape {
  static_assert(kElementBytes == 1 || kElementBytes == 2, "1- and 2-byte elements");
  static constexpr int kR = 4 / kElementBytes;                        // lines per group (elements per word)
  static constexpr int kV = 16 / kElementBytes;                       // positions per 16-byte chunk
  static constexpr int kWide = kNarrowWordLineBytes / kElementBytes;  // positions per tile
  static constexpr int kUnits = kElementBytes;  // (column, group) units a thread moves: 4 chunks either way
  static constexpr int kDenseChunksPerThread = 4;
};

constexpr int kNarrowWordFixedLines = 16;
inline bool narrow_word_fixed_lines() {
  const bool enabled = !switch_off("narrow_word_fixed_lines");
  return enabled;
}

// Chunks a column of the dense tile spans in shared memory (NarrowWordLayout): N where its
// chunks are swizzled (N a multiple of 8), else N + 1 (constexpr: device code calls it too).
constexpr uint32_t narrow_word_pitch(uint32_t n) { return n % 8 == 0 ? n : n + 1; }

// Threads a tile takes (four chunks each way per thread) and its shared memory (16 columns).
inline int narrow_word_threads(int n) { return 4 * n; }
inline size_t narrow_word_smem_bytes(int n) {
  return static_cast<size_t>(kNarrowWordColumns) * narrow_word_pitch(static_cast<uint32_t>(n)) * 16;
}

inline bool narrow_word_fetch_256(bool dense_in) {
  const Override setting = switch_override("narrow_word_fetch_256");
  return decide(setting, !dense_in);
}

// narrow_words: 0 = never (the narrow kernel takes the plans of up to 16 lines,
// the flat, square and TMA byte tiles longer ones), 1 or unset = whenever the plan fits.
inline Override narrow_word_override() {
  const Override setting = switch_override("narrow_words");
  return setting;
}

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

// Where the tile's words and chunks sit in shared memory (the layout above): column c starts at
// chunk c * pitch; in it, position p's row starts at word p * G and group g is its word g; where
// N is a multiple of 8 the column's chunks are XOR-swizzled by c % 8 instead of padded.
struct NarrowWordLayout {
  uint32_t groups, pitch, swizzle;  // G; chunks a column spans (N or N + 1); 7 or 0
  __device__ __forceinline__ static NarrowWordLayout of(uint32_t n, uint32_t groups) {
    return NarrowWordLayout{groups, narrow_word_pitch(n), n % 8 == 0 ? 7u : 0u};
  }
  __device__ __forceinline__ uint32_t word(uint32_t column, uint32_t position, uint32_t group) const {
    return column * pitch * 4 + ((position * groups + group) ^ ((column & swizzle) << 2));
  }
  // Dense chunk q of the tile (16 bytes of consecutive rows) lies in column q / N, chunk q % N.
  __device__ __forceinline__ uint32_t chunk(uint32_t column, uint32_t row_chunk) const {
    return column * pitch + (row_chunk ^ (column & swizzle));
  }
};

template <typename T, bool kDenseIn, bool kEvictLast, bool kFetch256, int kLines>
__global__ void __launch_bounds__(kNarrowWordMaxThreads, kNarrowWordMinBlocks)
narrow_word_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const NarrowArgs args) {
  using S = NarrowWordShape<sizeof(T)>;
  using Chunk = Vec<uint32_t, 4>;
  uint32_t* words = reinterpret_cast<uint32_t*>(dynamic_smem());
  Chunk* chunks = reinterpret_cast<Chunk*>(words);
  const uint32_t n = kLines != 0 ? kLines : static_cast<uint32_t>(args.n);
  const NarrowWordLayout at = NarrowWordLayout::of(n, n / S::kR);

  int64_t in_off, out_off;
  args.batch.offsets(blockIdx.y, in_off, out_off);
  const int64_t w0 = static_cast<int64_t>(blockIdx.x) * S::kWide;
  const int valid = static_cast<int>(min(static_cast<int64_t>(S::kWide), args.wide - w0));
  const T* src = in + in_off + (kDenseIn ? w0 * n : w0);
  T* dst = out + out_off + (kDenseIn ? w0 : w0 * n);
  const int32_t stride = static_cast<int32_t>(args.line_stride);

  // Lines side: group g of column c (and, for 2-byte elements, of column c + 8).
  const uint32_t quad = threadIdx.x / 8, c_hi = quad / at.groups, g = quad - c_hi * at.groups;
  const uint32_t c0 = c_hi * 8 + threadIdx.x % 8;
  auto column = [&](int k) { return c0 + 8 * k; };
  auto unit_live = [&](int k) { return static_cast<int>(column(k)) * S::kV < valid; };
  auto line_chunk = [&](auto* base, int k, int i) {  // line R g + i at column(k)
    return base + static_cast<int32_t>(g * S::kR + i) * stride + static_cast<int32_t>(column(k)) * S::kV;
  };
  // Dense side: chunk q = u * 4N + t, in column 4u + t / N; the tile's first `dense_chunks` are
  // live (valid is whole chunks, so its rows end on a chunk's end).
  const uint32_t first_column = threadIdx.x / n, row_chunk = threadIdx.x - first_column * n;
  const uint32_t dense_chunks = static_cast<uint32_t>(valid / S::kV) * n;
  auto dense_q = [&](int u) { return u * 4 * n + threadIdx.x; };
  auto dense_slot = [&](int u) { return at.chunk(first_column + 4 * u, row_chunk); };

  if constexpr (!kDenseIn) {
    Chunk x[S::kUnits][S::kR];
#pragma unroll
    for (int k = 0; k < S::kUnits; ++k)
#pragma unroll
      for (int i = 0; i < S::kR; ++i)
        x[k][i] = unit_live(k) ? load_global<kEvictLast, kFetch256>(reinterpret_cast<const Chunk*>(line_chunk(src, k, i)))
                               : Chunk{};
#pragma unroll
    for (int k = 0; k < S::kUnits; ++k) {
      narrow_word_permute<sizeof(T)>(x[k]);
#pragma unroll
      for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int j = 0; j < S::kR; ++j) words[at.word(column(k), m * S::kR + j, g)] = x[k][j].v[m];
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < S::kDenseChunksPerThread; ++u)
      if (dense_q(u) < dense_chunks) reinterpret_cast<Chunk*>(dst)[dense_q(u)] = chunks[dense_slot(u)];
  } else {
    Chunk v[S::kDenseChunksPerThread];
#pragma unroll
    for (int u = 0; u < S::kDenseChunksPerThread; ++u)
      if (dense_q(u) < dense_chunks) v[u] = load_global<kEvictLast, kFetch256>(reinterpret_cast<const Chunk*>(src) + dense_q(u));
#pragma unroll
    for (int u = 0; u < S::kDenseChunksPerThread; ++u)
      if (dense_q(u) < dense_chunks) chunks[dense_slot(u)] = v[u];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < S::kUnits; ++k) {
      if (!unit_live(k)) continue;
      Chunk x[S::kR];
#pragma unroll
      for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int j = 0; j < S::kR; ++j) x[j].v[m] = words[at.word(column(k), m * S::kR + j, g)];
      narrow_word_permute<sizeof(T)>(x);
#pragma unroll
      for (int i = 0; i < S::kR; ++i)
        // Through __stwb: stored as a Vec or a uint4, the 2-byte instances' chunks went out as
        // four 4-byte stores (NVVM split them; the 1-byte ones kept 16-byte stores).
        __stwb(reinterpret_cast<uint4*>(line_chunk(dst, k, i)), make_uint4(x[i].v[0], x[i].v[1], x[i].v[2], x[i].v[3]));
    }
  }
}

// Whether a narrow plan (make_narrow_args with narrow_word_max_lines) takes narrow word tiles,
// and their grid: the switch, 1- or 2-byte elements, dense rows of whole words from 12 to 64
// bytes, a wide dim of whole 16-byte chunks (the lines' ends then fall on chunk ends), at most
// 65535 batch items (grid y). Plans of more lines than the narrow kernel's 16 also need a whole
// tile along the wide dim: shorter items leave most of a tile idle, and the square and TMA byte
// tiles serve them.
inline bool make_narrow_word_grid(const NarrowArgs& narrow, int element_bytes, dim3& grid) {
  const int64_t row_bytes = int64_t{narrow.n} * element_bytes, wide_per_tile = kNarrowWordLineBytes / element_bytes;
  if (!decide(narrow_word_override(), true) || (element_bytes != 1 && element_bytes != 2) || row_bytes % 4 != 0 ||
      row_bytes < kNarrowWordMinRowBytes || row_bytes > kNarrowWordMaxRowBytes || narrow.wide % (16 / element_bytes) != 0 ||
      narrow.batch.count() > 65535 || (narrow.n > kNarrowMax && narrow.wide < wide_per_tile))
    return false;
  grid = dim3{static_cast<unsigned int>(ceil_div(narrow.wide, wide_per_tile)),
              static_cast<unsigned int>(narrow.batch.count()), 1};
  return true;
}

// The most lines make_narrow_args may give a plan of this element size: narrow word tiles' for 1-
// and 2-byte elements, the narrow kernel's otherwise.
inline int narrow_word_max_lines(int element_bytes) {
  return element_bytes <= 2 ? kNarrowWordMaxRowBytes / element_bytes : kNarrowMax;
}

}  // namespace torch_transpose
