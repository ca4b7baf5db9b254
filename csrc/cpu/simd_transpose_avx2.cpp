// The AVX2 block transpose declared in simd_transpose.h, for x86-64 CPUs without AVX-512 (Intel
// client CPUs, AMD before Zen 4). Only the functions here carry the avx2 target, so the rest of
// the library still runs on any x86-64 CPU.
//
// A block is a square of 64 bytes a side, as the AVX-512 blocks are, so the tiles, their walks
// and their streaming rules are the same for both (and each output row of a block is one whole
// 64-byte line, written by two 32-byte stores in a row). With 16-byte lanes of n = 16 / size
// elements, the square is two halves of 2n columns (one 32-byte load a row) by four groups of n
// rows: each group's n rows go through an n x n transpose inside each lane (log2(n) stages of
// unpacks, as SSE2's blocks do in their one lane), which leaves column nL + c of the half in
// lane L of col[g][c]; output row nL + c of the half is then lane L of col[0..3][c], paired
// into two registers by vperm2i128.
#include "simd_transpose.h"

#if defined(TT_HAVE_AVX512_BLOCKS)
#include <immintrin.h>

#include "../kernel_switches.h"

#define TT_AVX2_TARGET __attribute__((target("avx2")))

namespace torch_transpose {

bool cpu_avx2_enabled() {
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return supported && !switch_off("cpu_avx2");
}

namespace {

// The low (kHigh false) or high halves of each lane of a and b, interleaved in units of kBytes.
template <int kBytes, bool kHigh>
TT_AVX2_TARGET __attribute__((always_inline)) inline __m256i unpack_lanes(__m256i a, __m256i b) {
  if constexpr (kBytes == 1) return kHigh ? _mm256_unpackhi_epi8(a, b) : _mm256_unpacklo_epi8(a, b);
  if constexpr (kBytes == 2) return kHigh ? _mm256_unpackhi_epi16(a, b) : _mm256_unpacklo_epi16(a, b);
  if constexpr (kBytes == 4) return kHigh ? _mm256_unpackhi_epi32(a, b) : _mm256_unpacklo_epi32(a, b);
  if constexpr (kBytes == 8) return kHigh ? _mm256_unpackhi_epi64(a, b) : _mm256_unpacklo_epi64(a, b);
}

// Lane by lane, out[0..kN) = the kN rows r[0..kN) of kElementBytes-wide elements interleaved
// element by element (the first half's interleave and the second half's, merged at kN / 2
// elements). With kN elements a lane, out[c]'s lane L is column c of the rows' lane L.
template <int kElementBytes, int kN>
TT_AVX2_TARGET __attribute__((always_inline)) inline void interleave_lanes(const __m256i* r, __m256i* out) {
  if constexpr (kN == 1) {
    out[0] = r[0];
  } else {
    __m256i left[kN / 2], right[kN / 2];
    interleave_lanes<kElementBytes, kN / 2>(r, left);
    interleave_lanes<kElementBytes, kN / 2>(r + kN / 2, right);
    for (int i = 0; i < kN / 2; ++i) {
      out[2 * i] = unpack_lanes<kElementBytes * kN / 2, false>(left[i], right[i]);
      out[2 * i + 1] = unpack_lanes<kElementBytes * kN / 2, true>(left[i], right[i]);
    }
  }
}

// 32 bytes of an output row: plain, or streamed (`dst` 32-byte aligned: rows on lines).
template <bool kStream>
TT_AVX2_TARGET __attribute__((always_inline)) inline void store_half_line(void* dst, __m256i v) {
  if constexpr (kStream) {
    _mm256_stream_si256(static_cast<__m256i*>(dst), v);
  } else {
    _mm256_storeu_si256(static_cast<__m256i*>(dst), v);
  }
}

// One square of 64 / sizeof(T) elements a side (the file's head says how).
template <bool kStream, typename T>
TT_AVX2_TARGET __attribute__((noinline)) void transpose_square(const T* src, int64_t ss, T* dst, int64_t ds) {
  constexpr int kE = sizeof(T), kN = 16 / kE;
  for (int h = 0; h < 2; ++h) {
    __m256i col[4][kN];  // 8-64 registers: for 1- and 2-byte elements partly on the stack (L1)
    for (int g = 0; g < 4; ++g) {
      __m256i r[kN];
      for (int k = 0; k < kN; ++k) {
        r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + (g * kN + k) * ss + h * 2 * kN));
      }
      interleave_lanes<kE, kN>(r, col[g]);
    }
    for (int c = 0; c < kN; ++c) {
      T* low = dst + (h * 2 * kN + c) * ds;        // lane 0: output row 2n h + c
      T* high = dst + (h * 2 * kN + kN + c) * ds;  // lane 1: output row 2n h + n + c
      store_half_line<kStream>(low, _mm256_permute2x128_si256(col[0][c], col[1][c], 0x20));
      store_half_line<kStream>(low + 2 * kN, _mm256_permute2x128_si256(col[2][c], col[3][c], 0x20));
      store_half_line<kStream>(high, _mm256_permute2x128_si256(col[0][c], col[1][c], 0x31));
      store_half_line<kStream>(high + 2 * kN, _mm256_permute2x128_si256(col[2][c], col[3][c], 0x31));
    }
  }
}

}  // namespace

template <typename T>
void transpose_blocks_avx2(const T* src, int64_t ss, T* dst, int64_t ds, int64_t na, int64_t nb, BlockOrder order) {
  walk_wide_blocks<T>(src, ss, dst, ds, na, nb, order, [](const T* s, int64_t s_stride, T* d, int64_t d_stride, auto streamed) {
    transpose_square<decltype(streamed)::value>(s, s_stride, d, d_stride);
  });
}

template void transpose_blocks_avx2(const uint8_t*, int64_t, uint8_t*, int64_t, int64_t, int64_t, BlockOrder);
template void transpose_blocks_avx2(const uint16_t*, int64_t, uint16_t*, int64_t, int64_t, int64_t, BlockOrder);
template void transpose_blocks_avx2(const uint32_t*, int64_t, uint32_t*, int64_t, int64_t, int64_t, BlockOrder);
template void transpose_blocks_avx2(const uint64_t*, int64_t, uint64_t*, int64_t, int64_t, int64_t, BlockOrder);

}  // namespace torch_transpose
#endif
