// The AVX-512 row copy declared in row_copy.h. Only the functions here carry the avx512f target,
// so the rest of the library still runs on any x86-64 CPU.
#include "row_copy.h"

#if defined(TORCH_TRANSPOSE_HAVE_AVX512_ROW_COPY)
#include <immintrin.h>

#include <cstring>

namespace torch_transpose {
namespace {

// A move of exactly N bytes (64, 32, 16, 8, 4, 2 or 1): with the avx512f target a fixed-size
// memcpy compiles to one vector load and one store.
template <int N>
__attribute__((target("avx512f"), always_inline)) inline void move(unsigned char* dst, const unsigned char* src) {
  std::memcpy(dst, src, N);
}

// One row: whole 64-byte pieces, then the tail as one more piece that ends at the row's end and
// overlaps the one before it (rewriting a few bytes with the same values, inside the row). Rows
// under 64 bytes take two pieces of the largest size that fits, overlapping likewise.
__attribute__((target("avx512f"), always_inline)) inline void copy_row(unsigned char* dst, const unsigned char* src,
                                                                      int64_t bytes) {
  if (bytes >= 64) {
    int64_t k = 0;
    for (; k + 64 <= bytes; k += 64) move<64>(dst + k, src + k);
    if (k < bytes) move<64>(dst + bytes - 64, src + bytes - 64);
  } else if (bytes >= 32) {
    move<32>(dst, src);
    move<32>(dst + bytes - 32, src + bytes - 32);
  } else if (bytes >= 16) {
    move<16>(dst, src);
    move<16>(dst + bytes - 16, src + bytes - 16);
  } else if (bytes >= 8) {
    move<8>(dst, src);
    move<8>(dst + bytes - 8, src + bytes - 8);
  } else if (bytes >= 4) {
    move<4>(dst, src);
    move<4>(dst + bytes - 4, src + bytes - 4);
  } else {
    for (int64_t k = 0; k < bytes; ++k) dst[k] = src[k];
  }
}

}  // namespace

__attribute__((target("avx512f"))) void copy_rows_avx512(const unsigned char* in, unsigned char* out,
                                                        int64_t element_bytes, int64_t row_bytes,
                                                        const BatchIndexer& batch, int64_t begin, int64_t end) {
  BatchCursor row(batch, begin);
  for (int64_t t = begin; t < end; ++t, row.next()) {
    copy_row(out + row.out_offset * element_bytes, in + row.in_offset * element_bytes, row_bytes);
  }
}

}  // namespace torch_transpose
#endif
