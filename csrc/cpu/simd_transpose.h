// In-register block transposes for the CPU tile kernel: 4x4 blocks of 4-byte elements, 8x8
// blocks of 2-byte elements and 16x16 blocks of bytes, by SSE2 integer unpacks (pure bit moves,
// so NaN payloads and -0.0 survive). SSE2 is part of every x86-64 CPU; elsewhere
// SimdBlock<T>::kSize is 1 and the caller keeps its scalar loop.
//
// Each call moves one block: `src` points at element (b0, a0) of the input, whose rows walk b
// with stride src_stride and hold consecutive a; `dst` points at element (a0, b0) of the
// output, whose rows walk a with stride dst_stride and hold consecutive b. `rows` (at most
// kSize) output rows are stored, for a block cut short along a: its loads still read kSize
// elements of each input row, so the caller must know those bytes are readable. `cols` (at
// most kSize) input rows are loaded and as many elements of each output row stored, for a
// block cut short along b: it reads and writes nothing past them.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace torch_transpose {

#if defined(__SSE2__)
// Output row `dst` of a block: the low `bytes` (1-16) bytes of v, in at most four stores.
inline void store_row(void* dst, __m128i v, int bytes) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  if (bytes == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), v);
    return;
  }
  if (bytes & 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d), v);
    v = _mm_srli_si128(v, 8);
    d += 8;
  }
  // Fixed-size pieces only: a memcpy of a run-time size is a library call per row.
  uint32_t word = static_cast<uint32_t>(_mm_cvtsi128_si32(v));
  if (bytes & 4) {
    std::memcpy(d, &word, 4);
    word = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(v, 4)));
    d += 4;
  }
  if (bytes & 2) {
    const uint16_t half = static_cast<uint16_t>(word);
    std::memcpy(d, &half, 2);
    word >>= 16;
    d += 2;
  }
  if (bytes & 1) *d = static_cast<unsigned char>(word);
}

// Input row k of a block, or zeros past the `cols` rows the block loads.
inline __m128i load_row(const void* row, int k, int cols) {
  return k < cols ? _mm_loadu_si128(static_cast<const __m128i*>(row)) : _mm_setzero_si128();
}

#endif

template <typename T> struct SimdBlock { static constexpr int kSize = 1; };

#if defined(__SSE2__)
template <> struct SimdBlock<uint32_t> {
  static constexpr int kSize = 4;
  static inline void transpose(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride,
                               int rows = kSize, int cols = kSize) {
    const __m128i r0 = load_row(src, 0, cols), r1 = load_row(src + src_stride, 1, cols);
    const __m128i r2 = load_row(src + 2 * src_stride, 2, cols), r3 = load_row(src + 3 * src_stride, 3, cols);
    const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);  // columns 0, 1
    const __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);  // columns 2, 3
    const __m128i columns[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), _mm_unpacklo_epi64(t2, t3),
                                _mm_unpackhi_epi64(t2, t3)};
    for (int k = 0; k < rows; ++k) store_row(dst + k * dst_stride, columns[k], cols * 4);
  }
};

template <> struct SimdBlock<uint16_t> {
  static constexpr int kSize = 8;
  static inline void transpose(const uint16_t* src, int64_t src_stride, uint16_t* dst, int64_t dst_stride,
                               int rows = kSize, int cols = kSize) {
    __m128i r[8];
    for (int k = 0; k < 8; ++k) r[k] = load_row(src + k * src_stride, k, cols);
    // Stage 1 pairs rows (16-bit lanes), stage 2 pairs of pairs (32-bit), stage 3 halves (64-bit).
    const __m128i t0 = _mm_unpacklo_epi16(r[0], r[1]), t1 = _mm_unpackhi_epi16(r[0], r[1]);
    const __m128i t2 = _mm_unpacklo_epi16(r[2], r[3]), t3 = _mm_unpackhi_epi16(r[2], r[3]);
    const __m128i t4 = _mm_unpacklo_epi16(r[4], r[5]), t5 = _mm_unpackhi_epi16(r[4], r[5]);
    const __m128i t6 = _mm_unpacklo_epi16(r[6], r[7]), t7 = _mm_unpackhi_epi16(r[6], r[7]);
    const __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);  // rows 0-3: cols 0-1, 2-3
    const __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);  // rows 0-3: cols 4-5, 6-7
    const __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);  // rows 4-7: cols 0-1, 2-3
    const __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);  // rows 4-7: cols 4-5, 6-7
    const __m128i columns[8] = {_mm_unpacklo_epi64(u0, u4), _mm_unpackhi_epi64(u0, u4), _mm_unpacklo_epi64(u1, u5),
                                _mm_unpackhi_epi64(u1, u5), _mm_unpacklo_epi64(u2, u6), _mm_unpackhi_epi64(u2, u6),
                                _mm_unpacklo_epi64(u3, u7), _mm_unpackhi_epi64(u3, u7)};
    for (int k = 0; k < rows; ++k) store_row(dst + k * dst_stride, columns[k], cols * 2);
  }
};

template <> struct SimdBlock<uint8_t> {
  static constexpr int kSize = 16;
  static inline void transpose(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride,
                               int rows = kSize, int cols = kSize) {
    __m128i r[16];
    for (int k = 0; k < 16; ++k) r[k] = load_row(src + k * src_stride, k, cols);
    // Stage 1 (8-bit): row pairs (2p, 2p+1); lo holds columns 0-7, hi columns 8-15.
    __m128i lo[8], hi[8];
    for (int p = 0; p < 8; ++p) {
      lo[p] = _mm_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
      hi[p] = _mm_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
    }
    // Stage 2 (16-bit): row quads q; m[q][g] holds column group g (4 columns) of rows 4q..4q+3.
    __m128i m[4][4];
    for (int q = 0; q < 4; ++q) {
      m[q][0] = _mm_unpacklo_epi16(lo[2 * q], lo[2 * q + 1]);
      m[q][1] = _mm_unpackhi_epi16(lo[2 * q], lo[2 * q + 1]);
      m[q][2] = _mm_unpacklo_epi16(hi[2 * q], hi[2 * q + 1]);
      m[q][3] = _mm_unpackhi_epi16(hi[2 * q], hi[2 * q + 1]);
    }
    // Stage 3 (32-bit): row octets s; n[s][c] holds columns 2c, 2c+1 of rows 8s..8s+7.
    __m128i n[2][8];
    for (int s = 0; s < 2; ++s) {
      for (int g = 0; g < 4; ++g) {
        n[s][2 * g] = _mm_unpacklo_epi32(m[2 * s][g], m[2 * s + 1][g]);
        n[s][2 * g + 1] = _mm_unpackhi_epi32(m[2 * s][g], m[2 * s + 1][g]);
      }
    }
    // Stage 4 (64-bit): whole columns.
    for (int c = 0; c < 8; ++c) {
      if (2 * c < rows) store_row(dst + (2 * c) * dst_stride, _mm_unpacklo_epi64(n[0][c], n[1][c]), cols);
      if (2 * c + 1 < rows) store_row(dst + (2 * c + 1) * dst_stride, _mm_unpackhi_epi64(n[0][c], n[1][c]), cols);
    }
  }
};
#endif

#if defined(__SSE2__)
template <int kBytes, bool kHigh>
inline __m128i unpack(__m128i a, __m128i b) {
  if constexpr (kBytes == 1) return kHigh ? _mm_unpackhi_epi8(a, b) : _mm_unpacklo_epi8(a, b);
  if constexpr (kBytes == 2) return kHigh ? _mm_unpackhi_epi16(a, b) : _mm_unpacklo_epi16(a, b);
  if constexpr (kBytes == 4) return kHigh ? _mm_unpackhi_epi32(a, b) : _mm_unpacklo_epi32(a, b);
  if constexpr (kBytes == 8) return kHigh ? _mm_unpackhi_epi64(a, b) : _mm_unpacklo_epi64(a, b);
}

// out[0..kC) = the kC rows r[0..kC) of kElementBytes-wide elements, interleaved element by
// element: the first half's interleave and the second half's, merged at kC / 2 elements.
template <int kElementBytes, int kC>
inline void interleave_vectors(const __m128i* r, __m128i* out) {
  if constexpr (kC == 1) {
    out[0] = r[0];
  } else {
    __m128i left[kC / 2], right[kC / 2];
    interleave_vectors<kElementBytes, kC / 2>(r, left);
    interleave_vectors<kElementBytes, kC / 2>(r + kC / 2, right);
    for (int i = 0; i < kC / 2; ++i) {
      out[2 * i] = unpack<kElementBytes * kC / 2, false>(left[i], right[i]);
      out[2 * i + 1] = unpack<kElementBytes * kC / 2, true>(left[i], right[i]);
    }
  }
}

// dst[a * kC + j] = src[j * src_stride + a] for j < kC and a in [0, n), n a multiple of the
// elements of a 16-byte vector (kC * sizeof(T) <= 16).
template <typename T, int kC>
inline void interleave_rows(const T* src, int64_t src_stride, T* dst, int64_t n) {
  static_assert(kC * sizeof(T) <= 16, "an output vector holds whole groups of kC elements");
  constexpr int64_t v = 16 / sizeof(T);
  for (int64_t a = 0; a < n; a += v) {
    __m128i r[kC], out[kC];
    for (int j = 0; j < kC; ++j) r[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j * src_stride + a));
    interleave_vectors<static_cast<int>(sizeof(T)), kC>(r, out);
    for (int j = 0; j < kC; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + a * kC + j * v), out[j]);
  }
}

// Whether interleave_rows takes output rows of c elements: 2, 4 or 8 that fit one vector.
template <typename T>
constexpr bool interleaves(int64_t c) {
  return (c == 2 || c == 4 || c == 8) && c * static_cast<int64_t>(sizeof(T)) <= 16;
}

// interleave_rows for a run-time c (interleaves<T>(c) must hold).
template <typename T>
inline void interleave_rows(const T* src, int64_t src_stride, int c, T* dst, int64_t n) {
  if (c == 2) return interleave_rows<T, 2>(src, src_stride, dst, n);
  if constexpr (4 * sizeof(T) <= 16) {
    if (c == 4) return interleave_rows<T, 4>(src, src_stride, dst, n);
  }
  if constexpr (8 * sizeof(T) <= 16) {
    if (c == 8) return interleave_rows<T, 8>(src, src_stride, dst, n);
  }
}
#endif

enum class BlockOrder { kOutputRowsFirst, kInputRowsFirst, kInputRowsFirstStreamed };

// Wide blocks: squares of 64 bytes a side (64x64 1-byte, 32x32 2-byte, 16x16 4-byte and 8x8
// 8-byte elements), for CPUs that have AVX-512F and BW (one 64-byte register per row) or else
// AVX2 (two 32-byte halves per row), both checked at run time; the library is built for baseline
// x86-64.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TT_HAVE_AVX512_BLOCKS 1

// True when the CPU runs AVX-512F and BW and cpu_avx512 is not 0 (the switch lets
// the tests cover the other blocks on a machine that has AVX-512).
bool cpu_avx512_blocks_enabled();

// True when the CPU runs AVX2 and cpu_avx2 is not 0 (which, with the AVX-512
// switch, lets the tests cover what a CPU without either runs: SSE2's blocks, SSSE3's shuffles
// one register at a time, memcpy row copies). Asked by the AVX2 blocks, the packed-row shuffles
// and the row copies alike.
bool cpu_avx2_enabled();

// Transposes the [0, na) x [0, nb) part of a tile, na and nb multiples of the block side
// (64 / element size), in wide blocks: dst[ia * dst_stride + ib] = src[ib * src_stride + ia].
// Only call each when its check (cpu_avx512_blocks_enabled, cpu_avx2_enabled) holds.
// Instantiated for uint8_t, uint16_t, uint32_t and uint64_t (simd_transpose_avx512.cpp,
// simd_transpose_avx2.cpp).
template <typename T>
void transpose_blocks_avx512(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t na, int64_t nb,
                             BlockOrder order);
template <typename T>
void transpose_blocks_avx2(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t na, int64_t nb,
                           BlockOrder order);

// Whether this CPU moves tiles in wide blocks (AVX-512, else AVX2).
inline bool cpu_wide_blocks_enabled() { return cpu_avx512_blocks_enabled() || cpu_avx2_enabled(); }

// transpose_blocks_avx512 where AVX-512 runs, else transpose_blocks_avx2 (cpu_wide_blocks_enabled
// must hold).
template <typename T>
inline void transpose_wide_blocks(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t na, int64_t nb,
                                  BlockOrder order) {
  if (cpu_avx512_blocks_enabled()) return transpose_blocks_avx512(src, src_stride, dst, dst_stride, na, nb, order);
  transpose_blocks_avx2(src, src_stride, dst, dst_stride, na, nb, order);
}

// The walk of [0, na) x [0, nb) in wide blocks in one of the orders of BlockOrder, for either
// instruction set: block(src, src_stride, dst, dst_stride, streamed) moves one block (streamed a
// std::bool_constant). The block functions carry their own targets (and are not inlined), so
// the walk needs none.
template <typename T, typename Block>
inline void walk_wide_blocks(const T* src, int64_t ss, T* dst, int64_t ds, int64_t na, int64_t nb, BlockOrder order,
                             Block&& block) {
  constexpr int64_t k = 64 / sizeof(T);
  auto input_rows_first = [&](auto streamed) {
    for (int64_t ib = 0; ib < nb; ib += k) {
      for (int64_t ia = 0; ia < na; ia += k) block(src + ib * ss + ia, ss, dst + ia * ds + ib, ds, streamed);
    }
  };
  switch (order) {
    case BlockOrder::kInputRowsFirstStreamed:
      return input_rows_first(std::true_type{});
    case BlockOrder::kInputRowsFirst:
      return input_rows_first(std::false_type{});
    case BlockOrder::kOutputRowsFirst:
      for (int64_t ia = 0; ia < na; ia += k) {
        for (int64_t ib = 0; ib < nb; ib += k) block(src + ib * ss + ia, ss, dst + ia * ds + ib, ds, std::false_type{});
      }
      return;
  }
}
#endif

}  // namespace torch_transpose
