#pragma once

#include <cstdint>
#include <type_traits>

namespace torch_transpose {

enum class PackDirection { kPack = 0, kUnpack = 1 };

// Where lane i of output register o comes from: {input register, lane}, for c rows in registers
// of `lanes` elements. Packed element q is row q % c's element q / c; packed registers hold
// packed elements in order, and output register o of an unpack is row o.
struct LaneSource {
  int reg, lane;
};
constexpr LaneSource lane_source(PackDirection d, int lanes, int c, int o, int i) {
  if (d == PackDirection::kPack) {
    const int q = o * lanes + i;
    return {q % c, q / c};
  }
  const int q = i * c + o;
  return {q / lanes, q % lanes};
}

// The most rows a pack or unpack takes (for the permutes, at most 64 bytes / element size too:
// every output register then draws on every input register).
constexpr int kMaxPackedRows = 16;

bool cpu_packed_rows_enabled();

// Calls run(std::integral_constant<int, C>{}) for the C in [2, kMax] equal to c, nothing for any
// other c: the compile-time row count each packed-row kernel is instantiated for.
template <int kMax, int C = 2, typename Run>
void with_packed_rows(int64_t c, Run&& run) {
  if constexpr (C <= kMax) {
    if (c == C) return run(std::integral_constant<int, C>{});
    with_packed_rows<kMax, C + 1>(c, run);
  }
}

// with_packed_rows with the direction and streaming as compile-time constants too: calls
// run(rows, direction, streamed), each a std::integral_constant (int, PackDirection, bool).
template <int kMax, typename Run>
void with_packed_kernel(PackDirection d, int64_t c, bool stream, Run&& run) {
  with_packed_rows<kMax>(c, [&](auto rows) {
    using Pack = std::integral_constant<PackDirection, PackDirection::kPack>;
    using Unpack = std::integral_constant<PackDirection, PackDirection::kUnpack>;
    if (d == PackDirection::kPack) {
      stream ? run(rows, Pack{}, std::true_type{}) : run(rows, Pack{}, std::false_type{});
    } else {
      stream ? run(rows, Unpack{}, std::true_type{}) : run(rows, Unpack{}, std::false_type{});
    }
  });
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TT_HAVE_AVX512_PACKED_ROWS 1
#define TT_HAVE_SHUFFLED_PACKED_ROWS 1

// Whether move_rows_by_permutes takes c rows of elements of this size on this CPU:
// 2 <= c <= min(kMaxPackedRows, 64 / element_bytes), AVX-512F and BW (cpu_avx512_blocks_enabled),
// and for 1-byte elements AVX-512 VBMI (the byte permute).
bool cpu_packs_rows(int element_bytes, int64_t c);

// n elements of each of c rows (n a multiple of 64 / sizeof(T)), by AVX-512 permutes. kPack:
// dst[p * c + j] = src[j * src_stride + p] (dst_stride unused); kUnpack: dst[j * dst_stride + p]
// = src[p * c + j] (src_stride unused); j < c, p < n. Instantiated for uint8_t, uint16_t,
// uint32_t and uint64_t; only where cpu_packs_rows holds. stream: streaming stores (dst, and for
// an unpack dst_stride, on 64-byte lines; the caller fences, streaming_store.h).
template <typename T>
void move_rows_by_permutes(PackDirection d, const T* src, int64_t src_stride, int c, T* dst, int64_t dst_stride,
                           int64_t n, bool stream);

// Whether move_rows_by_shuffles takes c rows of elements of this size on this CPU:
// 2 <= c <= kMaxPackedRows, 1-, 2-, 4- or 8-byte elements, SSSE3.
bool cpu_shuffles_rows(int element_bytes, int64_t c);

// As move_rows_by_permutes, by 16-byte shuffles, two problems a 32-byte register where
// cpu_avx2_enabled() (simd_transpose.h): n a multiple of 16 / sizeof(T); stream:
// streaming stores (dst, and for an unpack dst_stride, on 16-byte boundaries; with AVX2 an
// unpack's on 32-byte ones).
template <typename T>
void move_rows_by_shuffles(PackDirection d, const T* src, int64_t src_stride, int c, T* dst, int64_t dst_stride,
                           int64_t n, bool stream);
#endif

}  // namespace torch_transpose
