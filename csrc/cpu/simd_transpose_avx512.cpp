// The AVX-512F block transpose declared in simd_transpose.h. Only the functions here carry the
// avx512f target, so the rest of the library still runs on any x86-64 CPU.
#include "simd_transpose.h"

#if defined(TORCH_TRANSPOSE_HAVE_AVX512_BLOCKS)
// GCC 12's own avx512fintrin.h trips -Wuninitialized where its intrinsics inline here (GCC bug
// 105593, the `__m512i __Y = __Y;` of _mm512_undefined_epi32): a false alarm about the header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "../env_switch.h"

namespace torch_transpose {

bool cpu_avx512_blocks_enabled() {
  static const bool enabled = [] {
    if (env_switched_off("TORCH_TRANSPOSE_CPU_AVX512")) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return enabled;
}

namespace {

// One 16x16 block. Rows r[k] hold 16 elements in four 128-bit lanes of four.
__attribute__((target("avx512f"))) inline void block_16x16(const uint32_t* src, int64_t ss, uint32_t* dst,
                                                          int64_t ds) {
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
  // Whole columns: column c of the block becomes output row c.
  for (int j = 0; j < 4; ++j) {
    _mm512_storeu_si512(dst + j * ds, _mm512_shuffle_i32x4(v[j], v[8 + j], 0x88));
    _mm512_storeu_si512(dst + (8 + j) * ds, _mm512_shuffle_i32x4(v[j], v[8 + j], 0xDD));
    _mm512_storeu_si512(dst + (4 + j) * ds, _mm512_shuffle_i32x4(v[4 + j], v[12 + j], 0x88));
    _mm512_storeu_si512(dst + (12 + j) * ds, _mm512_shuffle_i32x4(v[4 + j], v[12 + j], 0xDD));
  }
}

}  // namespace

__attribute__((target("avx512f"))) void transpose_blocks_16x16_avx512(const uint32_t* src, int64_t src_stride,
                                                                     uint32_t* dst, int64_t dst_stride,
                                                                     int64_t na, int64_t nb) {
  for (int64_t ia = 0; ia < na; ia += 16) {
    for (int64_t ib = 0; ib < nb; ib += 16) {
      block_16x16(src + ib * src_stride + ia, src_stride, dst + ia * dst_stride + ib, dst_stride);
    }
  }
}

}  // namespace torch_transpose
#endif
