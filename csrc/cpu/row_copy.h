// Copies of many short rows (the CPU row-copy plan: a permute that keeps the innermost dim, such
// as attention's heads <-> sequence swap with rows of 64-256 bytes). A memcpy call per row, after
// a division chain per row, ran at 0.40-0.46 of eager's copy_ on bf16 64x12x197x64 (0, 2, 1, 3)
// on the 2-core Zen 5 VM: at a few dozen to a few hundred bytes a row, the call and the index
// math cost as much as the bytes. Here the rows are walked by a BatchCursor and copied inline
// with 64-byte vector moves, where the CPU has AVX-512 or else AVX2 (checked at run time; the
// copy is written once, row_copy_inline.h, and compiled for each).
#pragma once

#include <cstdint>

#include "../plan/batch_cursor.h"

namespace torch_transpose {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TT_HAVE_AVX512_ROW_COPY 1

// Rows shorter than this are copied inline; memcpy took rows of 256 bytes (fp32 512x512x64,
// (1, 0, 2), 64 MB) at 1.04-1.15 of eager's copy_, the inline copy at 0.88-0.93, and rows of 260
// bytes into 68 MB at 0.96-1.12 against 0.92-1.02 (bench/NOTES.md, CPU v8).
constexpr int64_t kInlineRowBytes = 256;
// The same for outputs that stay in cache (under kRowStreamingMinBytes, cpu_kernels.cpp): there
// a memcpy call per row cost more than the bytes. 2-core Zen 5 VM, eager's copy_ time over ours
// (CPU v8): fp32 (0, 2, 1, 3) with 256-byte rows into 8 MB 0.74-0.78 -> 1.01-1.09, 512-byte rows
// into 4 MB 0.86-0.89 -> 0.96-1.10, 1 KiB rows into 8 MB 0.88-0.99 -> 1.05-1.14, 2 and 4 KiB
// rows 0.68-1.02 -> 0.99-1.14.
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
