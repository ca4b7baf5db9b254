// Packed narrow rows by lane permutes (AVX-512): the transposes whose short side is a handful of
// elements lying back to back, as NCHW <-> NHWC of 2 to 16 channels and pixel shuffle are.
//
// Packing (NCHW -> NHWC): c input rows, each a run of pixels, become one run of c-element groups.
// Unpacking (NHWC -> NCHW): the reverse. Either way c 64-byte registers of input become c 64-byte
// registers of output, each output lane drawn from one lane of one input register, by two-table
// permutes (vpermt2b/w/d/q), with no masks and no stores narrower than 64 bytes:
// * c a power of two: a network of log2(c) stages, each taking register pairs apart into even and
//   odd elements (unpack) or interleaving their halves (pack): log2(c) permutes per register.
// * any other c: each output register by a chain, whose first permute takes the lanes of input
//   registers 0 and 1 and each later one keeps what it has and adds one more input register's:
//   c - 1 permutes per register.
// The blocks cut short along one side that these plans took before stored 3-12 bytes at a time
// (an RGB pixel's 3 bytes of int8 NCHW -> NHWC, 10 GB/s on the 2-core Zen 5 VM).
#pragma once

#include <cstdint>

namespace torch_transpose {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TORCH_TRANSPOSE_HAVE_AVX512_PACKED_ROWS 1

// The most rows a pack or unpack takes (at most 64 bytes / element size, too: every output
// register then draws on every input register).
constexpr int kMaxPackedRows = 16;

// Whether pack_rows_avx512 / unpack_rows_avx512 take c rows of elements of this size on this CPU:
// 2 <= c <= min(kMaxPackedRows, 64 / element_bytes), AVX-512F and BW (cpu_avx512_blocks_enabled),
// and for 1-byte elements AVX-512 VBMI (the byte permute). TORCH_TRANSPOSE_CPU_PACKED_ROWS=0 turns
// them off (tests of the older paths, A/B runs).
bool cpu_packs_rows(int element_bytes, int64_t c);

// dst[p * c + j] = src[j * src_stride + p] for j < c and p < n; n a multiple of 64 / sizeof(T).
// Instantiated for uint8_t, uint16_t, uint32_t and uint64_t. Only when cpu_packs_rows holds.
// stream: streaming stores (dst on a 64-byte line; the caller fences, streaming_store.h).
template <typename T>
void pack_rows_avx512(const T* src, int64_t src_stride, int c, T* dst, int64_t n, bool stream);

// dst[j * dst_stride + p] = src[p * c + j] for j < c and p < n; n a multiple of 64 / sizeof(T).
// stream: streaming stores (dst and dst_stride on 64-byte lines; the caller fences).
template <typename T>
void unpack_rows_avx512(const T* src, int c, T* dst, int64_t dst_stride, int64_t n, bool stream);
#endif

}  // namespace torch_transpose
