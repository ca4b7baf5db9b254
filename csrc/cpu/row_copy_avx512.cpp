// The AVX-512 row copy declared in row_copy.h (the copy itself: row_copy_inline.h). Only the
// functions here carry the avx512f target, so the rest of the library still runs on any x86-64
// CPU.
#include "row_copy.h"

#if defined(TT_HAVE_AVX512_ROW_COPY)
#include <immintrin.h>

#define TT_ROW_COPY_TARGET __attribute__((target("avx512f")))

namespace torch_transpose {
namespace {

TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void move_line(unsigned char* dst, const unsigned char* src) {
  _mm512_storeu_si512(dst, _mm512_loadu_si512(src));
}

TT_ROW_COPY_TARGET __attribute__((always_inline)) inline void stream_line(unsigned char* dst, const unsigned char* src) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), _mm512_loadu_si512(src));
}

}  // namespace
}  // namespace torch_transpose

#include "row_copy_inline.h"

namespace torch_transpose {

TT_ROW_COPY_TARGET void copy_rows_avx512(const unsigned char* in, unsigned char* out, int64_t element_bytes,
                                         int64_t row_bytes, const BatchIndexer& batch, int64_t begin, int64_t end,
                                         bool stream) {
  copy_rows_inline(in, out, element_bytes, row_bytes, batch, begin, end, stream);
}

}  // namespace torch_transpose
#endif
