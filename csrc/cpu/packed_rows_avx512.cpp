// The AVX-512 packs and unpacks declared in packed_rows.h. Only the functions here carry the
// avx512 targets, so the rest of the library still runs on any x86-64 CPU.
#include "packed_rows.h"

#if defined(TT_HAVE_AVX512_PACKED_ROWS)
// GCC 12's avx512fintrin.h trips -Wuninitialized where its intrinsics inline (GCC bug 105593; see
// simd_transpose_avx512.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "simd_transpose.h"  // cpu_avx512_blocks_enabled

// Every function that permutes carries all three: the byte permute needs VBMI, and the callers
// check for it (cpu_packs_rows) before they hand over 1-byte rows.
#define TT_PACKED_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

namespace torch_transpose {

bool cpu_packs_rows(int element_bytes, int64_t c) {
  const bool enabled = cpu_avx512_blocks_enabled();  // read per call: kernel_switches() may change it
  static const bool byte_permutes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vbmi") != 0;
  }();
  const bool sized = element_bytes == 1 || element_bytes == 2 || element_bytes == 4 || element_bytes == 8;
  return enabled && sized && (element_bytes != 1 || byte_permutes) && c >= 2 &&
         c <= std::min<int64_t>(kMaxPackedRows, 64 / element_bytes);
}

namespace {

using Direction = PackDirection;

// The permute indices: for each output register, c - 1 steps of 64 bytes (an index lane as wide
// as an element; the permutes read its low bits). Step 0 takes input registers 0 and 1 (an index
// past the lane count picks the second table); step k >= 1 keeps the lanes it has (index i of
// the first table, the register being built) and takes input register k + 1's lanes.
template <typename T>
std::vector<T> make_lane_table(Direction d, int c) {
  constexpr int kLanes = 64 / sizeof(T);
  std::vector<T> table(static_cast<size_t>(c) * (c - 1) * kLanes);
  for (int o = 0; o < c; ++o) {
    T* steps = table.data() + static_cast<size_t>(o) * (c - 1) * kLanes;
    for (int i = 0; i < kLanes; ++i) {
      const auto [reg, lane] = lane_source(d, kLanes, c, o, i);  // (packed_rows.h)
      steps[i] = static_cast<T>(reg == 0 ? lane : reg == 1 ? kLanes + lane : 0);
      for (int k = 1; k < c - 1; ++k) steps[k * kLanes + i] = static_cast<T>(reg == k + 1 ? kLanes + lane : i);
    }
  }
  return table;
}

// The table for (d, c), built once per process (tiles of one call run on several threads).
template <typename T>
const T* lane_table(Direction d, int c) {
  static std::once_flag once[2][kMaxPackedRows + 1];
  static std::vector<T> tables[2][kMaxPackedRows + 1];
  const int k = static_cast<int>(d);
  std::call_once(once[k][c], [&] { tables[k][c] = make_lane_table<T>(d, c); });
  return tables[k][c].data();
}

template <typename T>
TT_PACKED_TARGET __attribute__((always_inline)) inline __m512i permute2(__m512i a, __m512i idx, __m512i b) {
  if constexpr (sizeof(T) == 1) return _mm512_permutex2var_epi8(a, idx, b);
  if constexpr (sizeof(T) == 2) return _mm512_permutex2var_epi16(a, idx, b);
  if constexpr (sizeof(T) == 4) return _mm512_permutex2var_epi32(a, idx, b);
  if constexpr (sizeof(T) == 8) return _mm512_permutex2var_epi64(a, idx, b);
}

// out[o] for o < C, each by its chain of C - 1 permutes over in[0..C).
template <typename T, int C>
TT_PACKED_TARGET __attribute__((always_inline)) inline void permute_registers(const __m512i* in, const T* table,
                                                                              __m512i* out) {
  constexpr int kLanes = 64 / sizeof(T);
  for (int o = 0; o < C; ++o) {
    const T* steps = table + o * (C - 1) * kLanes;
    __m512i v = permute2<T>(in[0], _mm512_loadu_si512(steps), in[1]);
    for (int k = 1; k < C - 1; ++k) v = permute2<T>(v, _mm512_loadu_si512(steps + k * kLanes), in[k + 1]);
    out[o] = v;
  }
}

// One output register: streamed (a whole 64-byte line, `dst` on one) or plain.
template <bool kStream>
TT_PACKED_TARGET __attribute__((always_inline)) inline void store_register(void* dst, __m512i v) {
  if constexpr (kStream) {
    _mm512_stream_si512(static_cast<__m512i*>(dst), v);
  } else {
    _mm512_storeu_si512(dst, v);
  }
}

// For c a power of two, a network of log2(c) stages of c permutes each (an unpack takes even and
// odd elements of register pairs, a pack interleaves their halves), where the chains take c - 1
// permutes per register: for c = 8, 24 permutes against 56.
// The four index vectors: even and odd elements of a pair, and the interleaves of its low and high
// halves.
template <typename T>
struct NetworkIndices {
  static constexpr int kLanes = 64 / sizeof(T);
  alignas(64) T even[kLanes], odd[kLanes], low[kLanes], high[kLanes];
  NetworkIndices() {
    for (int i = 0; i < kLanes; ++i) {
      even[i] = static_cast<T>(2 * i);
      odd[i] = static_cast<T>(2 * i + 1);
      low[i] = static_cast<T>((i % 2 ? kLanes : 0) + i / 2);
      high[i] = static_cast<T>((i % 2 ? kLanes : 0) + kLanes / 2 + i / 2);
    }
  }
};

template <typename T>
const NetworkIndices<T>& network_indices() {
  static const NetworkIndices<T> indices;
  return indices;
}

// r[0..C): packed registers in, the C rows out. Each stage takes pairs (2k, 2k + 1) apart into
// their even elements (to k) and odd ones (to k + C / 2); after log2(C) stages the rows are in
// order (stage s sorts the channels by bit s).
template <typename T, int C>
TT_PACKED_TARGET __attribute__((always_inline)) inline void unpack_network(__m512i* r, __m512i even, __m512i odd) {
  for (int stage = 1; stage < C; stage *= 2) {
    __m512i next[C];
    for (int k = 0; k < C / 2; ++k) {
      next[k] = permute2<T>(r[2 * k], even, r[2 * k + 1]);
      next[k + C / 2] = permute2<T>(r[2 * k], odd, r[2 * k + 1]);
    }
    for (int k = 0; k < C; ++k) r[k] = next[k];
  }
}

// The inverse: rows in, packed registers out (pairs (k, k + C / 2) interleaved into 2k, 2k + 1).
template <typename T, int C>
TT_PACKED_TARGET __attribute__((always_inline)) inline void pack_network(__m512i* r, __m512i low, __m512i high) {
  for (int stage = 1; stage < C; stage *= 2) {
    __m512i next[C];
    for (int k = 0; k < C / 2; ++k) {
      next[2 * k] = permute2<T>(r[k], low, r[k + C / 2]);
      next[2 * k + 1] = permute2<T>(r[k], high, r[k + C / 2]);
    }
    for (int k = 0; k < C; ++k) r[k] = next[k];
  }
}

constexpr bool is_power_of_two(int c) { return (c & (c - 1)) == 0; }

// C registers to C registers in place, rows to packed (kPack) or back: the network's two index
// registers or the chains' table, loaded once per call.
template <typename T, int C, Direction D>
struct RegisterPermute {
  __m512i first, second;  // the network's: low and high (pack), even and odd (unpack)
  const T* table;         // the chains'

  TT_PACKED_TARGET __attribute__((always_inline)) RegisterPermute() {
    if constexpr (is_power_of_two(C)) {
      const NetworkIndices<T>& ix = network_indices<T>();
      first = _mm512_load_si512(D == Direction::kPack ? ix.low : ix.even);
      second = _mm512_load_si512(D == Direction::kPack ? ix.high : ix.odd);
    } else {
      table = lane_table<T>(D, C);
    }
  }

  TT_PACKED_TARGET __attribute__((always_inline)) void operator()(__m512i* r) const {
    if constexpr (!is_power_of_two(C)) {
      __m512i out[C];
      permute_registers<T, C>(r, table, out);
      for (int k = 0; k < C; ++k) r[k] = out[k];
    } else if constexpr (D == Direction::kPack) {
      pack_network<T, C>(r, first, second);
    } else {
      unpack_network<T, C>(r, first, second);
    }
  }
};

// n elements of each of C rows (a multiple of a register's lanes), rows to packed (kPack: row j
// at src + j src_stride, packed at dst) or back (packed at src, row o at dst + o dst_stride).
template <typename T, int C, Direction D, bool kStream>
TT_PACKED_TARGET __attribute__((noinline)) void move_registers(const T* src, int64_t src_stride, T* dst,
                                                                int64_t dst_stride, int64_t n) {
  constexpr int kLanes = 64 / sizeof(T);
  constexpr bool kPack = D == Direction::kPack;
  const RegisterPermute<T, C, D> permute;
  for (int64_t p = 0; p < n; p += kLanes) {
    __m512i r[C];
    for (int j = 0; j < C; ++j) r[j] = _mm512_loadu_si512(kPack ? src + j * src_stride + p : src + p * C + j * kLanes);
    permute(r);
    for (int o = 0; o < C; ++o) store_register<kStream>(kPack ? dst + p * C + o * kLanes : dst + o * dst_stride + p, r[o]);
  }
}

}  // namespace

// For a run-time direction and c (2 <= c <= min(kMaxPackedRows, lanes): cpu_packs_rows).
template <typename T>
void move_rows_by_permutes(PackDirection d, const T* src, int64_t src_stride, int c, T* dst, int64_t dst_stride, int64_t n,
                           bool stream) {
  constexpr int kMax = std::min(kMaxPackedRows, 64 / static_cast<int>(sizeof(T)));
  with_packed_kernel<kMax>(d, c, stream, [&](auto rows, auto direction, auto streamed) {
    constexpr int kC = decltype(rows)::value;
    move_registers<T, kC, decltype(direction)::value, decltype(streamed)::value>(src, src_stride, dst, dst_stride, n);
  });
}

template void move_rows_by_permutes(PackDirection, const uint8_t*, int64_t, int, uint8_t*, int64_t, int64_t, bool);
template void move_rows_by_permutes(PackDirection, const uint16_t*, int64_t, int, uint16_t*, int64_t, int64_t, bool);
template void move_rows_by_permutes(PackDirection, const uint32_t*, int64_t, int, uint32_t*, int64_t, int64_t, bool);
template void move_rows_by_permutes(PackDirection, const uint64_t*, int64_t, int, uint64_t*, int64_t, int64_t, bool);

}  // namespace torch_transpose
#endif
