// The AVX-512F block transpose declared in simd_transpose.h. Only the functions here carry the
// avx512f target, so the rest of the library still runs on any x86-64 CPU.
#include "simd_transpose.h"

#if defined(TT_HAVE_AVX512_BLOCKS)
// GCC 12's own avx512fintrin.h trips -Wuninitialized where its intrinsics inline here (GCC bug
// 105593, the `__m512i __Y = __Y;` of _mm512_undefined_epi32): a false alarm about the header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "../kernel_switches.h"

namespace torch_transpose {

bool cpu_avx512_blocks_enabled() {
  static const bool supported = [] {
    __builtin_cpu_init();
    // BW for the 2-byte blocks' 16-bit unpacks: every AVX-512 CPU but the Xeon Phi has it.
    return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0;
  }();
  return supported && !switch_off("cpu_avx512");
}

namespace {

// Stores one 64-byte output row of a block: plain, or streamed (a whole 64-byte line, `dst` on
// a line boundary) when the output will not be read back from cache.
template <bool kStream>
__attribute__((target("avx512f"), always_inline)) inline void store_row(void* dst, __m512i row) {
  if constexpr (kStream) {
    _mm512_stream_si512(static_cast<__m512i*>(dst), row);
  } else {
    _mm512_storeu_si512(dst, row);
  }
}

// One 16x16 block of 4-byte elements. Rows r[k] hold 16 elements in four 128-bit lanes of four.
template <bool kStream>
__attribute__((target("avx512f"), noinline)) void transpose_block(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds) {
  __m512i r[16], t[16], u[16], v[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_si512(src + k * ss);
  // Pairs of rows, interleaved by element within each lane.
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
  }
  // Quads of rows: u[4q + j], lane L, holds column 4L + j of rows 4q..4q+3.
  for (int q = 0; q < 4; ++q) {
    u[4 * q + 0] = _mm512_unpacklo_epi64(t[4 * q + 0], t[4 * q + 2]);
    u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q + 0], t[4 * q + 2]);
    u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
    u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
  }
  // Octets of rows: v[8h + j] holds columns j and 8 + j (lanes 0, 2 of u) of rows 8h..8h+7;
  // v[8h + 4 + j] columns 4 + j and 12 + j (lanes 1, 3).
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 4; ++j) {
      v[8 * h + j] = _mm512_shuffle_i32x4(u[8 * h + j], u[8 * h + 4 + j], 0x88);
      v[8 * h + 4 + j] = _mm512_shuffle_i32x4(u[8 * h + j], u[8 * h + 4 + j], 0xDD);
    }
  }
  // Whole columns: column c of the block becomes output row c, stored as soon as it is formed
  // (all 16 formed first, then stored, ran 8% slower on 1024^2 fp32).
  for (int j = 0; j < 4; ++j) {
    store_row<kStream>(dst + j * ds, _mm512_shuffle_i32x4(v[j], v[8 + j], 0x88));
    store_row<kStream>(dst + (8 + j) * ds, _mm512_shuffle_i32x4(v[j], v[8 + j], 0xDD));
    store_row<kStream>(dst + (4 + j) * ds, _mm512_shuffle_i32x4(v[4 + j], v[12 + j], 0x88));
    store_row<kStream>(dst + (12 + j) * ds, _mm512_shuffle_i32x4(v[4 + j], v[12 + j], 0xDD));
  }
}

// One 8x8 block of 8-byte elements. Rows r[k] hold 8 elements in four 128-bit lanes of two.
template <bool kStream>
__attribute__((target("avx512f"), noinline)) void transpose_block(const uint64_t* src, int64_t ss, uint64_t* dst, int64_t ds) {
  __m512i r[8], t[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm512_loadu_si512(src + k * ss);
  // Pairs of rows: t[2p + j], lane L, holds column 2L + j of rows 2p, 2p + 1.
  for (int p = 0; p < 4; ++p) {
    t[2 * p] = _mm512_unpacklo_epi64(r[2 * p], r[2 * p + 1]);
    t[2 * p + 1] = _mm512_unpackhi_epi64(r[2 * p], r[2 * p + 1]);
  }
  for (int j = 0; j < 2; ++j) {
    // Rows 0-3: lo holds columns j and 4 + j (lanes 0, 2 of t) of row pairs (0, 1), (2, 3);
    // hi columns 2 + j and 6 + j (lanes 1, 3). Rows 4-7 likewise.
    const __m512i lo03 = _mm512_shuffle_i64x2(t[j], t[2 + j], 0x88), hi03 = _mm512_shuffle_i64x2(t[j], t[2 + j], 0xDD);
    const __m512i lo47 = _mm512_shuffle_i64x2(t[4 + j], t[6 + j], 0x88), hi47 = _mm512_shuffle_i64x2(t[4 + j], t[6 + j], 0xDD);
    // Whole columns: column c of the block becomes output row c.
    store_row<kStream>(dst + j * ds, _mm512_shuffle_i64x2(lo03, lo47, 0x88));
    store_row<kStream>(dst + (4 + j) * ds, _mm512_shuffle_i64x2(lo03, lo47, 0xDD));
    store_row<kStream>(dst + (2 + j) * ds, _mm512_shuffle_i64x2(hi03, hi47, 0x88));
    store_row<kStream>(dst + (6 + j) * ds, _mm512_shuffle_i64x2(hi03, hi47, 0xDD));
  }
}

// The last step of the lane-wise blocks (2- and 1-byte): lane L of g0..g3 holds part L of output
// rows row, row + step, row + 2 step and row + 3 step; a 4x4 transpose of 128-bit lanes (two
// rounds of shuffle_i32x4) forms those rows, [g0.L, g1.L, g2.L, g3.L], and stores them.
template <bool kStream, typename T>
__attribute__((target("avx512f"), always_inline)) inline void store_lane_transpose(T* row, int64_t step, __m512i g0,
                                                                                  __m512i g1, __m512i g2, __m512i g3) {
  // Lanes 0 and 2 (lo) and 1 and 3 (hi) of groups 0, 1 and of groups 2, 3; then whole rows.
  const __m512i lo01 = _mm512_shuffle_i32x4(g0, g1, 0x88), hi01 = _mm512_shuffle_i32x4(g0, g1, 0xDD);
  const __m512i lo23 = _mm512_shuffle_i32x4(g2, g3, 0x88), hi23 = _mm512_shuffle_i32x4(g2, g3, 0xDD);
  store_row<kStream>(row, _mm512_shuffle_i32x4(lo01, lo23, 0x88));
  store_row<kStream>(row + step, _mm512_shuffle_i32x4(hi01, hi23, 0x88));
  store_row<kStream>(row + 2 * step, _mm512_shuffle_i32x4(lo01, lo23, 0xDD));
  store_row<kStream>(row + 3 * step, _mm512_shuffle_i32x4(hi01, hi23, 0xDD));
}

// One 32x32 block of 2-byte elements (AVX-512BW for the 16-bit unpacks): each group of 8
// rows goes through SSE2's 8x8 steps (simd_transpose.h) in every 128-bit lane at once, which
// leaves column 8L + k of the group's rows in lane L of col[g][k]; then, for each k, a 4x4
// transpose of lanes across the four groups forms output rows k, 8 + k, 16 + k and 24 + k.
template <bool kStream>
__attribute__((target("avx512f,avx512bw"), noinline)) void transpose_block(const uint16_t* src, int64_t ss, uint16_t* dst,
                                                                         int64_t ds) {
  __m512i col[4][8];
  for (int g = 0; g < 4; ++g) {
    __m512i r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm512_loadu_si512(src + (8 * g + k) * ss);
    // Stage 1 pairs rows (16-bit), stage 2 pairs of pairs (32-bit), stage 3 halves (64-bit).
    const __m512i t0 = _mm512_unpacklo_epi16(r[0], r[1]), t1 = _mm512_unpackhi_epi16(r[0], r[1]);
    const __m512i t2 = _mm512_unpacklo_epi16(r[2], r[3]), t3 = _mm512_unpackhi_epi16(r[2], r[3]);
    const __m512i t4 = _mm512_unpacklo_epi16(r[4], r[5]), t5 = _mm512_unpackhi_epi16(r[4], r[5]);
    const __m512i t6 = _mm512_unpacklo_epi16(r[6], r[7]), t7 = _mm512_unpackhi_epi16(r[6], r[7]);
    const __m512i u0 = _mm512_unpacklo_epi32(t0, t2), u1 = _mm512_unpackhi_epi32(t0, t2);
    const __m512i u2 = _mm512_unpacklo_epi32(t1, t3), u3 = _mm512_unpackhi_epi32(t1, t3);
    const __m512i u4 = _mm512_unpacklo_epi32(t4, t6), u5 = _mm512_unpackhi_epi32(t4, t6);
    const __m512i u6 = _mm512_unpacklo_epi32(t5, t7), u7 = _mm512_unpackhi_epi32(t5, t7);
    col[g][0] = _mm512_unpacklo_epi64(u0, u4);
    col[g][1] = _mm512_unpackhi_epi64(u0, u4);
    col[g][2] = _mm512_unpacklo_epi64(u1, u5);
    col[g][3] = _mm512_unpackhi_epi64(u1, u5);
    col[g][4] = _mm512_unpacklo_epi64(u2, u6);
    col[g][5] = _mm512_unpackhi_epi64(u2, u6);
    col[g][6] = _mm512_unpacklo_epi64(u3, u7);
    col[g][7] = _mm512_unpackhi_epi64(u3, u7);
  }
  for (int k = 0; k < 8; ++k) {
    store_lane_transpose<kStream>(dst + k * ds, 8 * ds, col[0][k], col[1][k], col[2][k], col[3][k]);
  }
}

// One 64x64 block of bytes (AVX-512BW for the byte unpacks), in two passes over an L1 staging
// buffer: 64 output rows need all 64 input rows, and the 32 vector registers hold half of them.
// Pass 1: each group g of 16 rows goes through SSE2's 16x16 byte steps (simd_transpose.h) in
// every 128-bit lane at once, which leaves column 16L + c of the group's rows in lane L of
// col[c]; col[c] is parked in staged[g][c]. Pass 2: for each c, a 4x4 transpose of lanes across
// the four groups (as in the 2-byte block) forms output rows c, 16 + c, 32 + c and 48 + c.
template <bool kStream>
__attribute__((target("avx512f,avx512bw"), noinline)) void transpose_block(const uint8_t* src, int64_t ss, uint8_t* dst,
                                                                         int64_t ds) {
  alignas(64) uint8_t staged[4][16][64];
  for (int g = 0; g < 4; ++g) {
    __m512i r[16];
    for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_si512(src + (16 * g + k) * ss);
    // Stage 1 (8-bit): row pairs (2p, 2p + 1); lo holds columns 0-7 of each lane, hi 8-15.
    __m512i lo[8], hi[8];
    for (int p = 0; p < 8; ++p) {
      lo[p] = _mm512_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
      hi[p] = _mm512_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
    }
    // Stage 2 (16-bit): row quads q; m[q][j] holds column group j (4 columns) of rows 4q..4q+3.
    __m512i m[4][4];
    for (int q = 0; q < 4; ++q) {
      m[q][0] = _mm512_unpacklo_epi16(lo[2 * q], lo[2 * q + 1]);
      m[q][1] = _mm512_unpackhi_epi16(lo[2 * q], lo[2 * q + 1]);
      m[q][2] = _mm512_unpacklo_epi16(hi[2 * q], hi[2 * q + 1]);
      m[q][3] = _mm512_unpackhi_epi16(hi[2 * q], hi[2 * q + 1]);
    }
    // Stage 3 (32-bit): row octets h; n[h][i] holds columns 2i, 2i + 1 of rows 8h..8h+7.
    __m512i n[2][8];
    for (int h = 0; h < 2; ++h) {
      for (int j = 0; j < 4; ++j) {
        n[h][2 * j] = _mm512_unpacklo_epi32(m[2 * h][j], m[2 * h + 1][j]);
        n[h][2 * j + 1] = _mm512_unpackhi_epi32(m[2 * h][j], m[2 * h + 1][j]);
      }
    }
    // Stage 4 (64-bit): whole columns of the group, parked.
    for (int i = 0; i < 8; ++i) {
      _mm512_store_si512(staged[g][2 * i], _mm512_unpacklo_epi64(n[0][i], n[1][i]));
      _mm512_store_si512(staged[g][2 * i + 1], _mm512_unpackhi_epi64(n[0][i], n[1][i]));
    }
  }
  for (int c = 0; c < 16; ++c) {
    store_lane_transpose<kStream>(dst + c * ds, 16 * ds, _mm512_load_si512(staged[0][c]), _mm512_load_si512(staged[1][c]),
                                  _mm512_load_si512(staged[2][c]), _mm512_load_si512(staged[3][c]));
  }
}

}  // namespace

template <typename T>
void transpose_blocks_avx512(const T* src, int64_t ss, T* dst, int64_t ds, int64_t na, int64_t nb, BlockOrder order) {
  walk_wide_blocks<T>(src, ss, dst, ds, na, nb, order, [](const T* s, int64_t s_stride, T* d, int64_t d_stride, auto streamed) {
    transpose_block<decltype(streamed)::value>(s, s_stride, d, d_stride);
  });
}

template void transpose_blocks_avx512(const uint8_t*, int64_t, uint8_t*, int64_t, int64_t, int64_t, BlockOrder);
template void transpose_blocks_avx512(const uint16_t*, int64_t, uint16_t*, int64_t, int64_t, int64_t, BlockOrder);
template void transpose_blocks_avx512(const uint32_t*, int64_t, uint32_t*, int64_t, int64_t, int64_t, BlockOrder);
template void transpose_blocks_avx512(const uint64_t*, int64_t, uint64_t*, int64_t, int64_t, int64_t, BlockOrder);

}  // namespace torch_transpose
#endif
