// The byte-shuffle packs and unpacks declared in packed_rows.h, for CPUs without AVX-512 (or
// without VBMI, for 1-byte rows). Only the functions here carry the ssse3 or avx2 target, so the
// rest of the library still runs on any x86-64 CPU.
//
// c 16-byte input registers become c output registers. Output register o is the OR of one byte
// shuffle (pshufb) of each input register it draws lanes from, whose mask puts those lanes in
// place and zeroes the rest (a mask byte with its top bit set). Which input registers an output
// draws on is known at compile time, so the shuffles of the others are never issued: min(c,
// lanes) shuffles and one OR fewer per output register (int8 c = 3: 3 and 2 for 16 bytes, where
// the blocks cut short stored 3 bytes at a time).
//
// With AVX2, two such problems share each 32-byte register, one a 128-bit half (vpshufb
// shuffles within halves, with the same mask in both): the rows' next 16 bytes are the second
// problem. So one shuffle moves 32 bytes. A pack loads each row's 32 bytes whole and stores
// each output register's halves 16 * c bytes apart; an unpack loads each input register's
// halves from 16 * c bytes apart and stores each row's 32 bytes whole.
#include "packed_rows.h"

#if defined(TT_HAVE_SHUFFLED_PACKED_ROWS)
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include "simd_transpose.h"  // cpu_avx2_enabled

#define TT_SHUFFLE_TARGET __attribute__((target("ssse3")))
#define TT_WIDE_SHUFFLE_TARGET __attribute__((target("avx2")))

namespace torch_transpose {

bool cpu_shuffles_rows(int element_bytes, int64_t c) {
  static const bool enabled = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("ssse3") != 0;
  }();
  const bool sized = element_bytes == 1 || element_bytes == 2 || element_bytes == 4 || element_bytes == 8;
  return enabled && sized && c >= 2 && c <= kMaxPackedRows;
}


namespace {

// The shuffle masks of one (element size, c, direction): for each output register o and input
// register r, 16 bytes that pick r's lanes for o and zero the rest (twice over, for both halves
// of a 32-byte register), and whether o draws on r at all.
template <int E, int C, PackDirection D>
struct ShuffleMasks {
  static constexpr int kLanes = 16 / E;
  alignas(32) std::array<std::array<std::array<uint8_t, 32>, C>, C> mask{};
  std::array<std::array<bool, C>, C> draws{};
  std::array<int, C> first_draw{};  // the first input register each output draws on

  constexpr ShuffleMasks() {
    for (int o = 0; o < C; ++o) {
      for (int r = 0; r < C; ++r) {
        for (int b = 0; b < 32; ++b) mask[o][r][b] = 0x80;
      }
      for (int i = 0; i < kLanes; ++i) {
        const LaneSource s = lane_source(D, kLanes, C, o, i);
        draws[o][s.reg] = true;
        for (int k = 0; k < E; ++k) {
          mask[o][s.reg][i * E + k] = mask[o][s.reg][16 + i * E + k] = static_cast<uint8_t>(s.lane * E + k);
        }
      }
      first_draw[o] = C;
      for (int r = C - 1; r >= 0; --r) {
        if (draws[o][r]) first_draw[o] = r;
      }
    }
  }
};

template <int E, int C, PackDirection D>
inline constexpr ShuffleMasks<E, C, D> kShuffleMasks{};

// Output register O: the OR of the shuffles of input registers R.. that it draws on, added to
// `out` (what registers before R gave; the first that O draws on replaces it). Recursion rather
// than a loop, so that `if constexpr` reads the masks' table (a lambda would lose the target).
template <int E, int C, PackDirection D, int O, int R = 0>
TT_SHUFFLE_TARGET __attribute__((always_inline)) inline __m128i shuffle_register(const __m128i* in, __m128i out) {
  if constexpr (R == C) {
    return out;
  } else {
    constexpr const ShuffleMasks<E, C, D>& m = kShuffleMasks<E, C, D>;
    if constexpr (m.draws[O][R]) {
      const __m128i mask = _mm_load_si128(reinterpret_cast<const __m128i*>(m.mask[O][R].data()));
      const __m128i part = _mm_shuffle_epi8(in[R], mask);
      out = R == m.first_draw[O] ? part : _mm_or_si128(out, part);
    }
    return shuffle_register<E, C, D, O, R + 1>(in, out);
  }
}

template <bool kStream>
TT_SHUFFLE_TARGET __attribute__((always_inline)) inline void store_vector(void* dst, __m128i v) {
  if constexpr (kStream) {
    _mm_stream_si128(static_cast<__m128i*>(dst), v);
  } else {
    _mm_storeu_si128(static_cast<__m128i*>(dst), v);
  }
}

// Output registers O.. of one step: packed ones to dst + O lanes, rows to dst + O dst_stride.
template <typename T, int C, PackDirection D, bool kStream, int O = 0>
TT_SHUFFLE_TARGET __attribute__((always_inline)) inline void store_registers(const __m128i* in, T* dst, int64_t dst_stride) {
  if constexpr (O < C) {
    constexpr int kLanes = 16 / sizeof(T);
    T* to = D == PackDirection::kPack ? dst + O * kLanes : dst + O * dst_stride;
    store_vector<kStream>(to, shuffle_register<static_cast<int>(sizeof(T)), C, D, O>(in, _mm_setzero_si128()));
    store_registers<T, C, D, kStream, O + 1>(in, dst, dst_stride);
  }
}

// n elements of each of C rows (a multiple of a register's lanes), rows to packed (kPack: row j
// at src + j src_stride, packed at dst) or back (packed at src, row o at dst + o dst_stride).
template <typename T, int C, PackDirection D, bool kStream>
TT_SHUFFLE_TARGET __attribute__((noinline)) void shuffle_rows(const T* src, int64_t src_stride, T* dst, int64_t dst_stride,
                                                               int64_t n) {
  constexpr int kLanes = 16 / sizeof(T);
  constexpr bool kPack = D == PackDirection::kPack;
  for (int64_t p = 0; p < n; p += kLanes) {
    __m128i in[C];
    for (int j = 0; j < C; ++j) {
      const T* from = kPack ? src + j * src_stride + p : src + p * C + j * kLanes;
      in[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
    }
    store_registers<T, C, D, kStream>(in, kPack ? dst + p * C : dst + p, dst_stride);
  }
}

// The AVX2 form (two problems a register, the file's head): output register O of one step.
template <int E, int C, PackDirection D, int O, int R = 0>
TT_WIDE_SHUFFLE_TARGET __attribute__((always_inline)) inline __m256i shuffle_register_pair(const __m256i* in, __m256i out) {
  if constexpr (R == C) {
    return out;
  } else {
    constexpr const ShuffleMasks<E, C, D>& m = kShuffleMasks<E, C, D>;
    if constexpr (m.draws[O][R]) {
      const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(m.mask[O][R].data()));
      const __m256i part = _mm256_shuffle_epi8(in[R], mask);
      out = R == m.first_draw[O] ? part : _mm256_or_si256(out, part);
    }
    return shuffle_register_pair<E, C, D, O, R + 1>(in, out);
  }
}

// Output registers O.. of one AVX2 step. Packed: the low half to dst + O lanes, the high half to
// the second problem's, C registers on. Rows: row O's 32 bytes to dst + O dst_stride.
template <typename T, int C, PackDirection D, bool kStream, int O = 0>
TT_WIDE_SHUFFLE_TARGET __attribute__((always_inline)) inline void store_register_pairs(const __m256i* in, T* dst,
                                                                                     int64_t dst_stride) {
  if constexpr (O < C) {
    constexpr int kLanes = 16 / sizeof(T);
    const __m256i v = shuffle_register_pair<static_cast<int>(sizeof(T)), C, D, O>(in, _mm256_setzero_si256());
    if constexpr (D == PackDirection::kPack) {
      store_vector<kStream>(dst + O * kLanes, _mm256_castsi256_si128(v));
      store_vector<kStream>(dst + (C + O) * kLanes, _mm256_extracti128_si256(v, 1));
    } else if constexpr (kStream) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + O * dst_stride), v);  // 32-byte aligned: see below
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + O * dst_stride), v);
    }
    store_register_pairs<T, C, D, kStream, O + 1>(in, dst, dst_stride);
  }
}

// shuffle_rows by AVX2 steps of two registers' lanes, then (n an odd number of registers' lanes)
// one SSSE3 step. Streamed unpacks store 32 bytes at dst + o dst_stride + p: rows on 64-byte
// lines (move_packed_rows streams only then) and p a multiple of 32 bytes.
template <typename T, int C, PackDirection D, bool kStream>
TT_WIDE_SHUFFLE_TARGET __attribute__((noinline)) void shuffle_rows_in_pairs(const T* src, int64_t src_stride, T* dst,
                                                                           int64_t dst_stride, int64_t n) {
  constexpr int kLanes = 16 / sizeof(T);
  constexpr bool kPack = D == PackDirection::kPack;
  int64_t p = 0;
  for (; p + 2 * kLanes <= n; p += 2 * kLanes) {
    __m256i in[C];
    for (int j = 0; j < C; ++j) {
      if constexpr (kPack) {
        in[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + j * src_stride + p));
      } else {
        const T* from = src + p * C + j * kLanes;
        const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
        const __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + C * kLanes));
        in[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
      }
    }
    store_register_pairs<T, C, D, kStream>(in, kPack ? dst + p * C : dst + p, dst_stride);
  }
  if (p < n) {
    shuffle_rows<T, C, D, kStream>(kPack ? src + p : src + p * C, src_stride, kPack ? dst + p * C : dst + p, dst_stride,
                                   n - p);
  }
}

}  // namespace

// For a run-time direction and c (2 <= c <= kMaxPackedRows: cpu_shuffles_rows).
template <typename T>
void move_rows_by_shuffles(PackDirection d, const T* src, int64_t src_stride, int c, T* dst, int64_t dst_stride, int64_t n,
                           bool stream) {
  const bool pairs = cpu_avx2_enabled();
  with_packed_kernel<kMaxPackedRows>(d, c, stream, [&](auto rows, auto direction, auto streamed) {
    constexpr int kC = decltype(rows)::value;
    constexpr PackDirection kD = decltype(direction)::value;
    constexpr bool kStream = decltype(streamed)::value;
    if (pairs) return shuffle_rows_in_pairs<T, kC, kD, kStream>(src, src_stride, dst, dst_stride, n);
    shuffle_rows<T, kC, kD, kStream>(src, src_stride, dst, dst_stride, n);
  });
}

template void move_rows_by_shuffles(PackDirection, const uint8_t*, int64_t, int, uint8_t*, int64_t, int64_t, bool);
template void move_rows_by_shuffles(PackDirection, const uint16_t*, int64_t, int, uint16_t*, int64_t, int64_t, bool);
template void move_rows_by_shuffles(PackDirection, const uint32_t*, int64_t, int, uint32_t*, int64_t, int64_t, bool);
template void move_rows_by_shuffles(PackDirection, const uint64_t*, int64_t, int, uint64_t*, int64_t, int64_t, bool);

}  // namespace torch_transpose
#endif
