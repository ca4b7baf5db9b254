// The inline row copy of row_copy.h, written once for each instruction set that runs it: each
// includer (row_copy_avx512.cpp, row_copy_avx2.cpp) first defines TT_ROW_COPY_TARGET, the
// function attribute of its target (AVX2 or more), and in torch_transpose's anonymous namespace
//   TT_ROW_COPY_TARGET inline void move_line(unsigned char* dst, const unsigned char* src)
//   TT_ROW_COPY_TARGET inline void stream_line(unsigned char* dst, const unsigned char* src)
// (64 bytes by plain stores; one 64-byte line, dst on a line, by streaming stores), then
// includes this file and calls copy_rows_inline from its entry point. Every function here
// carries the includer's target (a lambda would lose it).

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "row_copy.h"

namespace torch_transpose {
namespace {

// A move of exactly N bytes (64, 32, 16, 8, 4, 2 or 1): vector loads and stores of the widest
// kind the target has for 64 bytes (the includer's move_line), 32-byte AVX ones below that (both
// targets have them). With the avx2 target and GCC's generic tuning a fixed-size memcpy of 32
// or 64 bytes compiled to 16-byte moves, hence the intrinsics.
template <int N>
TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void move(unsigned char* dst, const unsigned char* src) {
  if constexpr (N == 64) {
    move_line(dst, src);
  } else if constexpr (N == 32) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  } else if constexpr (N == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
  } else {
    std::memcpy(dst, src, N);
  }
}

// Two moves of N bytes, the second ending at the row's end (N <= bytes <= 2N: they overlap).
template <int N>
TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void move_ends(unsigned char* dst, const unsigned char* src,
                                                                       int64_t bytes) {
  move<N>(dst, src);
  move<N>(dst + bytes - N, src + bytes - N);
}

// One row: whole 64-byte pieces, then the tail as one more piece that ends at the row's end and
// overlaps the one before it (rewriting a few bytes with the same values, inside the row). Rows
// under 64 bytes take two pieces of the largest size that fits, overlapping likewise.
TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void copy_row(unsigned char* dst, const unsigned char* src,
                                                                      int64_t bytes) {
  if (bytes >= 64) {
    int64_t k = 0;
    for (; k + 64 <= bytes; k += 64) move<64>(dst + k, src + k);
    if (k < bytes) move<64>(dst + bytes - 64, src + bytes - 64);
  } else if (bytes >= 32) {
    move_ends<32>(dst, src, bytes);
  } else if (bytes >= 16) {
    move_ends<16>(dst, src, bytes);
  } else if (bytes >= 8) {
    move_ends<8>(dst, src, bytes);
  } else if (bytes >= 4) {
    move_ends<4>(dst, src, bytes);
  } else {
    for (int64_t k = 0; k < bytes; ++k) dst[k] = src[k];
  }
}

// One row of whole 64-byte lines (dst on a line), each line streamed.
TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void stream_row(unsigned char* dst, const unsigned char* src,
                                                                        int64_t bytes) {
  for (int64_t k = 0; k < bytes; k += 64) stream_line(dst + k, src + k);
}

// copy_rows_avx512's contract (row_copy.h), in the includer's instruction set.
TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void copy_rows_inline(const unsigned char* in, unsigned char* out,
                                                                              int64_t element_bytes, int64_t row_bytes,
                                                                              const BatchIndexer& batch, int64_t begin,
                                                                              int64_t end, bool stream) {
  BatchCursor row(batch, begin);
  if (stream) {
    // Input rows of a permute lie far apart (a row per head, 128 KiB apart in fp32 32x16x512x64
    // (0, 2, 1, 3)), too many streams for the hardware prefetchers: a second cursor runs
    // kPrefetchRows ahead and asks for its row's lines.
    constexpr int64_t kPrefetchRows = 16;
    const bool prefetch = row_bytes <= 1024;
    BatchCursor ahead(batch, std::min(begin + kPrefetchRows, end));
    for (int64_t t = begin; t < end; ++t, row.next()) {
      if (prefetch && t + kPrefetchRows < end) {
        const unsigned char* next_row = in + ahead.in_offset * element_bytes;
        for (int64_t k = 0; k < row_bytes; k += 64) _mm_prefetch(reinterpret_cast<const char*>(next_row + k), _MM_HINT_T0);
        ahead.next();
      }
      stream_row(out + row.out_offset * element_bytes, in + row.in_offset * element_bytes, row_bytes);
    }
    _mm_sfence();  // streaming stores are weakly ordered: fence before the work counts as done
    return;
  }
  for (int64_t t = begin; t < end; ++t, row.next()) {
    copy_row(out + row.out_offset * element_bytes, in + row.in_offset * element_bytes, row_bytes);
  }
}

}  // namespace
}  // namespace torch_transpose
