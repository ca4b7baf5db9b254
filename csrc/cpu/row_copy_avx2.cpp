// The AVX2 row copy declared in row_copy.h (the copy itself: row_copy_inline.h), for CPUs
// without AVX-512. Only the functions here carry the avx2 target, so the rest of the library
// still runs on any x86-64 CPU.
#include "row_copy.h"

#if defined(TT_HAVE_AVX512_ROW_COPY)
#include <immintrin.h>

#define TT_ROW_COPY_TARGET __attribute__((target("avx2")))

namespace torch_transpose {
namespace {

TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void move_line(unsigned char* dst, const unsigned char* src) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32),
                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32)));
}

// Two 32-byte streaming stores in a row fill the line's write-combining buffer as one 64-byte
// store does.
TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void stream_line(unsigned char* dst, const unsigned char* src) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 32),
                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32)));
}

}  // namespace
}  // namespace torch_transpose

#include "row_copy_inline.h"

namespace torch_transpose {

TT_ROW_COPY_TARGET void copy_rows_avx2(const unsigned char* in, unsigned char* out, int64_t element_bytes,
                                       int64_t row_bytes, const BatchIndexer& batch, int64_t begin, int64_t end,
                                       bool stream) {
  copy_rows_inline(in, out, element_bytes, row_bytes, batch, begin, end, stream);
}

}  // namespace torch_transpose
#endif
