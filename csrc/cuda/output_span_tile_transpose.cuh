// Output span tiles: transposes whose output rows are short (at most kSpanMaxRowElems elements
// along b) and packed back to back (out_sa == size_b), from input rows on the 16-byte grid: the
// mirror of span tiles (span_tile_transpose.cuh). NHWC -> NCHW at a small spatial grid is one
// (ResNet's last stage in the backward of its NCHW -> NHWC: bf16 128x7x7x2048, output rows of
// 49), as are a batch of short matrices' transposes into rows of 32-256 elements.
//
// Why: the square and realign window tiles cover b in tiles of 64-128 elements, so an output row
// of 49 or 100 left most of each tile idle, and their stores were narrow. H200, GPU time, ratio
// to copy (bench/NOTES.md v52): bf16 128x7x7x2048 -> NCHW 0.33 (torch.compile 0.73), int8 0.12
// (compile 0.43), int8 100x1048576 transposed 0.32 (compile 0.56). Here 0.85, 0.50 and 0.84
// (output_span_tiles_by_default has the A/B).
//
// A tile is kTileA consecutive output rows (a0 .. a0 + na - 1) of one batch item: one contiguous
// output span of na * size_b elements, whatever size_b is.
// * Load: for every b, the segment a0 .. a0 + na - 1 of input row b (on the 16-byte grid, as
//   output_span_tiles_fit asks) goes to shared row b as whole 16-byte chunks by asynchronous
//   copies; a ragged tail (the last tile of a row whose size_a is no multiple of a vector) goes
//   element by element, so nothing past the row is read. Shared row b holds its chunks in an
//   order swizzled by b (chunk_slot), so that the store phase's lanes, which read rows kV apart
//   in the same column, spread over eight 16-byte bank groups rather than one.
// * Store: the span is cut on the 16-byte grid; each thread gathers one aligned 16-byte vector
//   of it (kV consecutive span elements: column a, rows b, b + 1, .. of shared memory, wrapping
//   to the next a past size_b) and stores it whole; the span's first and last vectors, where
//   the span starts or ends inside a vector, go element by element, so nothing outside the
//   output view is written. A warp's stores thus write 512 contiguous bytes.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "span_tile_transpose.cuh"
#include "tile_order.cuh"

namespace torch_transpose {

// TORCH_TRANSPOSE_OUTPUT_SPAN_TILES: 1 = every plan the kernel fits (tests, A/B runs), 0 = none,
// unset = output_span_tiles_by_default.
inline Override output_span_tile_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_OUTPUT_SPAN_TILES");
  return setting;
}

// A tile's shape is span tiles' own with the sides swapped (SpanShape<E, kLines>): kLines
// 128-byte lines of each input row (1, 2 or 4: span_tile_lines picks the most whose shared rows
// fit kSpanMaxBytes), so kTileB (there: input rows per tile) is the output rows per tile here
// and kVectorsPerRow the 16-byte chunks of a shared row.

struct OutputSpanTileArgs : SquareTileArgs {
  FastDivmod by_size_b;
};

// Shared memory of one tile: size_b rows of kLines lines.
inline size_t output_span_tile_smem_bytes(int64_t size_b, int lines) {
  return static_cast<size_t>(size_b) * lines * 128;
}

// Whether the plan fits output span tiles: unit-stride fast dims, output rows of a vector to
// kSpanMaxRowElems elements packed back to back (a vector then spans at most two rows), and
// input rows (and the input's base and batch strides) on the 16-byte grid. In-tile offsets stay
// below 2^31 on the output side by the row cap (a span is at most kSpanMaxBytes; FastDivmod
// divides span indices below 2^31); input rows and batch offsets are 64-bit.
inline bool output_span_tiles_fit(const LayoutPlan& plan, const FastDims& f, uintptr_t in_address) {
  if (plan.kind != PlanKind::Transpose || plan.element_bytes > 8) return false;
  const int64_t v = 16 / plan.element_bytes;
  return f.in_sa == 1 && f.out_sb == 1 && f.out_sa == f.size_b && f.size_b >= v && f.size_b <= kSpanMaxRowElems &&
         f.in_sb % v == 0 && in_address % 16 == 0 && plan.batch_strides_multiple_of(plan.in_strides, v);
}

// Which plans take output span tiles unless the switch says otherwise: 1-, 2- and 4-byte plans
// whose output rows are not whole 16-byte vectors (span tiles' rule, mirrored, and 4-byte ones,
// which took window tiles). H200, same-call A/B by GPU time, ratio to copy, switch off -> rule
// (bench/NOTES.md v52, results/h200-ab-session49.md): bf16 128x7x7x2048 -> NCHW 0.33 -> 0.84-0.86,
// int8 0.12 -> 0.49-0.51, bf16 49x1048576 transposed 0.33 -> 0.95-0.97, fp16 100x1048576 0.68 ->
// 0.97, int8 0.32 -> 0.84, bf16 128x14x14x512 -> NCHW 0.77 -> 0.85, fp16 64x14x14x768 0.71-0.73
// -> 0.75, fp16 64x10x10x768 0.61 -> 0.67, int8 64x14x14x768 0.33 -> 0.47; fp32 (one round)
// 128x7x7x2048 0.82 -> 0.95, 49x1048576 0.84 -> 0.98, 64x7x7x768 0.66 -> 0.78, 50x1048576 0.90 ->
// 0.99, 128x5x10x1024 0.82 -> 0.88. Plans of whole vectors lost when forced (int8 256x1048576
// 0.99 -> 0.86, fp16 256x8x8x4096 -> NCHW 1.00 -> 0.97); bf16 32x1048576 (rows of 4 whole
// vectors: 0.58 on square tiles, 0.88 here) is left as a lead.
inline bool output_span_tiles_by_default(int element_bytes, int vector_elems) {
  return element_bytes <= 4 && vector_elems * element_bytes < 16;
}

// size_b: the plan's, as the launcher already has it (one tile along b).
inline OutputSpanTileArgs make_output_span_tile_args(const LayoutPlan& plan, int tile_a, int64_t size_b) {
  OutputSpanTileArgs args;
  static_cast<SquareTileArgs&>(args) = SquareTileArgs::make_rect(plan, tile_a, size_b, 0);
  args.by_size_b = FastDivmod(static_cast<uint32_t>(args.size_b));
  return args;
}

// Where chunk c of shared row b lies in that row: the store phase's 32 lanes read rows kV apart
// (b / kV consecutive) in one column, so XOR-ing the chunk index with (b / kV) % 8 puts eight
// consecutive lanes in eight different 16-byte bank groups (every row is a multiple of 128 bytes
// long, so unswizzled they would all read one).
template <int kV>
__device__ __forceinline__ int chunk_slot(int b, int c) {
  return c ^ ((b / kV) & 7);
}

// Where element (b, column j) of the tile lies in shared memory (row b of kChunks chunks), in
// elements.
template <int kV, int kChunks>
__device__ __forceinline__ int shared_index(int b, int j) {
  return (b * kChunks + chunk_slot<kV>(b, j / kV)) * kV + j % kV;
}

// Load phase: segment a0 .. a0 + na - 1 of every input row b into shared row b.
template <typename T, int kLines, bool kEvictLast>
__device__ __forceinline__ void load_output_span_tile(const T* segments, int64_t in_sb, int size_b, int na, uint4* rows) {
  using Shape = SpanShape<sizeof(T), kLines>;
  constexpr int kV = Shape::kV, kChunks = Shape::kVectorsPerRow;
  const int whole = na / kV;  // whole chunks per segment; every segment starts on the grid
  for (int q = static_cast<int>(threadIdx.x); q < size_b * kChunks; q += kThreads) {
    const int b = q / kChunks, c = q % kChunks;
    if (c < whole)
      copy_chunk_async<kEvictLast>(rows + b * kChunks + chunk_slot<kV>(b, c),
                                   reinterpret_cast<const uint4*>(segments + b * in_sb) + c);
  }
  commit_chunk_copies();
  const int tail = na - whole * kV;  // the row's last elements, past its last whole chunk
  if (tail > 0) {
    for (int q = static_cast<int>(threadIdx.x); q < size_b * tail; q += kThreads) {
      const int b = q / tail, j = whole * kV + q % tail;
      reinterpret_cast<T*>(rows)[shared_index<kV, kChunks>(b, j)] = segments[b * in_sb + j];
    }
  }
}

// The kV elements of a whole vector at span index p0: rows b .. of column a, and past the row's
// end (m = size_b - b elements in) rows 0 .. of column a + 1. The rows lie kRowElems apart in
// shared memory and their chunk slots take at most three offsets: the swizzle (b / kV) % 8 up
// to the next multiple of kV, the next swizzle, and column a + 1's first rows (swizzle 0). One
// offset for each, so that each element costs two selects and a load whose row offset is an
// immediate, with no branch that splits a warp (the element-by-element walk with a wrap test
// cost about 10 instructions an element; a fast path for vectors inside one row lost where a
// warp held both kinds: bench/NOTES.md v52).
template <typename T, int kChunks>
__device__ __forceinline__ uint4 gather_span_vector(const uint4* rows, uint32_t p0, const OutputSpanTileArgs& args) {
  constexpr int kV = 16 / static_cast<int>(sizeof(T));
  constexpr int kRowElems = kChunks * kV;
  uint32_t col, row;
  args.by_size_b.divmod(p0, col, row);
  const int a = static_cast<int>(col), b = static_cast<int>(row);
  const int size_b = static_cast<int>(args.size_b);
  const int swizzle = (b / kV) & 7;
  const int first = b * kRowElems + ((a / kV) ^ swizzle) * kV + a % kV;
  const int second = b * kRowElems + ((a / kV) ^ ((swizzle + 1) & 7)) * kV + a % kV;
  const int wrapped = (b - size_b) * kRowElems + (a + 1);  // row b + k - size_b < kV: swizzle 0
  const int in_row = size_b - b;                            // elements k < in_row lie in column a
  const int split = min(kV - b % kV, in_row);               // elements k < split under the first swizzle
  const T* elements = reinterpret_cast<const T*>(rows);
  Vec<T, kV> out;
#pragma unroll
  for (int k = 0; k < kV; ++k) out.v[k] = elements[(k < split ? first : k < in_row ? second : wrapped) + k * kRowElems];
  return *reinterpret_cast<const uint4*>(&out);
}

// Aligned vector u of the span (na * size_b elements from `span`, `head` elements past the grid):
// gathered and stored whole, or, where the span starts or ends inside it, element by element.
template <typename T, int kChunks>
__device__ __forceinline__ void store_span_vector(T* span, int head, int len, int u, const OutputSpanTileArgs& args,
                                                  const uint4* rows) {
  constexpr int kV = 16 / static_cast<int>(sizeof(T));
  const int p0 = u * kV - head;  // span index of the vector's first element
  if (p0 >= 0 && p0 + kV <= len) {
    // Through __stwb: see store_window_rows (a plain assignment came out as element stores).
    __stwb(reinterpret_cast<uint4*>(span - head) + u, gather_span_vector<T, kChunks>(rows, static_cast<uint32_t>(p0), args));
    return;
  }
  for (int k = 0; k < kV; ++k) {
    const int p = p0 + k;
    if (p < 0 || p >= len) continue;
    uint32_t a, b;
    args.by_size_b.divmod(static_cast<uint32_t>(p), a, b);
    span[p] = reinterpret_cast<const T*>(rows)[shared_index<kV, kChunks>(static_cast<int>(b), static_cast<int>(a))];
  }
}

// Store phase: the span (na * size_b elements from `span`) in aligned 16-byte vectors, thread t
// taking vectors t, t + kThreads, ..: a warp stores 512 contiguous bytes. Its lanes read one
// column (or a few, for short rows) in rows kV apart, which the chunk swizzle spreads over 8 of
// the 32 banks: up to 4 wavefronts a load where a warp's vectors lie in one or two output rows.
// Word streams, four groups of 8 lanes each a few columns on (32 banks), lost 0.01-0.06
// everywhere but one 1-byte plan of 1-line tiles (+0.07; bench/NOTES.md v52).
template <typename T, int kLines>
__device__ __forceinline__ void store_output_span_tile(T* span, int na, const OutputSpanTileArgs& args, const uint4* rows) {
  using Shape = SpanShape<sizeof(T), kLines>;
  constexpr int kV = Shape::kV, kChunks = Shape::kVectorsPerRow;
  const int len = na * static_cast<int>(args.size_b);
  const int head = static_cast<int>((reinterpret_cast<uintptr_t>(span) % 16) / sizeof(T));  // span[0]'s place in its vector
  const int vectors = (head + len + kV - 1) / kV;
  for (int u = static_cast<int>(threadIdx.x); u < vectors; u += kThreads)
    store_span_vector<T, kChunks>(span, head, len, u, args, rows);
}

// One buffer: a block loads its tile's segments, waits for them, stores the span, and takes the
// next tile a grid away (one tile per block unless the grid is capped).
template <typename T, int kLines, bool kEvictLast>
__global__ void __launch_bounds__(kThreads)
    output_span_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const OutputSpanTileArgs args) {
  constexpr int kTileA = SpanShape<sizeof(T), kLines>::kTileB;  // output rows per tile
  uint4* rows = reinterpret_cast<uint4*>(dynamic_smem());
  const int size_b = static_cast<int>(args.size_b);
  for (int64_t t = blockIdx.x; t < args.order.total; t += gridDim.x) {
    const TileSpot spot = args.locate(t);
    const int64_t a0 = spot.ta * kTileA;
    const int na = static_cast<int>(min(static_cast<int64_t>(kTileA), args.size_a - a0));
    load_output_span_tile<T, kLines, kEvictLast>(in + spot.in_off + a0, args.in_sb, size_b, na, rows);
    wait_chunk_copies<0>();
    __syncthreads();
    store_output_span_tile<T, kLines>(out + spot.out_off + a0 * size_b, na, args, rows);
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

}  // namespace torch_transpose
