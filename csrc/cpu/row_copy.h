#pragma once

#include <cstdint>

#include "../plan/batch_cursor.h"

namespace torch_transpose {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TT_HAVE_AVX512_ROW_COPY 1

constexpr int64_t kInlineRowBytes = 256;
// The same for outputs that stay in cache (under kRowStreamingMinBytes, cpu_kernels.cpp): there
// a memcpy call per row cost more than the bytes.
constexpr int64_t kInlineRowBytesInCache = 8192;

// Copies rows [begin, end) of `batch` (their element offsets from in and out), each row_bytes
// bytes long and contiguous on both sides, in AVX-512 moves: rows under kInlineRowBytes (under
// kInlineRowBytesInCache into outputs that stay in cache) stored plainly, or (stream) rows of
// whole 64-byte lines of any length, each line written with a streaming store and fenced before
// the call returns. Only call it when cpu_avx512_blocks_enabled() is true.
void copy_rows_avx512(const unsigned char* in, unsigned char* out, int64_t element_bytes, int64_t row_bytes,
                      const BatchIndexer& batch, int64_t begin, int64_t end, bool stream);
// The same in AVX2 moves (32 bytes; two streaming stores a line). Only call it when
// cpu_avx2_enabled() is true.
void copy_rows_avx2(const unsigned char* in, unsigned char* out, int64_t element_bytes, int64_t row_bytes,
                    const BatchIndexer& batch, int64_t begin, int64_t end, bool stream);
#endif

}  // namespace torch_transpose
