#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "realign_window_tile_transpose.cuh"
#include "span_tile_transpose.cuh"
#include "tile_order.cuh"

namespace torch_transpose {

inline Override output_span_tile_override() {
  const Override setting = switch_override("output_span_tiles");
  return setting;
}

// A tile's shape is span tiles' own with the sides swapped (SpanShape<E, kLines>): kLines
// 128-byte lines of each input row (1, 2 or 4: span_tile_lines picks the most whose shared rows
// fit kSpanMaxBytes), so kTileB (there: input rows per tile) is the output rows per tile here
// and kVectorsPerRow the 16-byte chunks of a shared row.

struct OutputSpanTileArgs : SquareTileArgs {
  FastDivmod by_size_b;
};

// Realigned loads also take the input's byte span (input_byte_span), which their reads stay inside.
struct RealignedOutputSpanTileArgs : OutputSpanTileArgs {
  uintptr_t in_lo = 0, in_hi = 0;
};

// Shared memory of one tile: size_b rows of kLines lines, and for realigned loads a staging chunk
// per row.
inline size_t output_span_tile_smem_bytes(int64_t size_b, int lines, bool aligned_input) {
  return static_cast<size_t>(size_b) * (lines * 128 + (aligned_input ? 0 : 16));
}

// Lines of each input row per tile: the most whose shared rows fit kSpanMaxBytes
// (span_tile_lines), but no more than a row of size_a elements fills: a batch of small matrices
// (bf16 50 x 50) then takes tiles of one line, whose load lanes are mostly busy, rather than of
// four lines with three of them idle.
inline int output_span_tile_lines(int64_t size_a, int64_t size_b, int element_bytes) {
  const int most = span_tile_lines(size_b, kSpanMaxBytes);
  const int64_t bytes = size_a * element_bytes;
  const int enough = bytes <= 128 ? 1 : bytes <= 256 ? 2 : 4;
  return std::min(most, enough);
}

// Whether the plan fits output span tiles: unit-stride fast dims and output rows of a vector to
// kSpanMaxRowElems elements packed back to back (a vector then spans at most two rows). In-tile
// offsets stay below 2^31 on the output side by the row cap (a span is at most kSpanMaxBytes;
// FastDivmod divides span indices below 2^31); input rows and batch offsets are 64-bit.
inline bool output_span_tiles_fit(const LayoutPlan& plan, const FastDims& f) {
  if (plan.kind != PlanKind::Transpose || plan.element_bytes > 8) return false;
  const int64_t v = 16 / plan.element_bytes;
  return f.in_sa == 1 && f.out_sb == 1 && f.out_sa == f.size_b && f.size_b >= v && f.size_b <= kSpanMaxRowElems;
}

// Whether every input row's segment of every tile starts on the 16-byte grid (input rows, the
// input's base and its batch strides on it; tiles start at multiples of a line along a), so that
// the load phase copies whole chunks as they lie.
inline bool output_span_input_on_grid(const LayoutPlan& plan, const FastDims& f, uintptr_t in_address) {
  const int64_t v = 16 / plan.element_bytes;
  return f.in_sb % v == 0 && in_address % 16 == 0 && plan.batch_strides_multiple_of(plan.in_strides, v);
}

// output_span_realign: 1 = plans whose input rows are off the 16-byte grid take
// output span tiles wherever the switch above (or its rule) gives them, 0 = none does (square,
// window and realign window tiles, as before), unset = output_span_realign_by_default.
inline Override output_span_realign_override() {
  const Override setting = switch_override("output_span_realign");
  return setting;
}

inline bool output_span_realign_by_default(int element_bytes) { return element_bytes <= 2; }

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

constexpr int kRealignedLoadPasses = 4;
constexpr int kRealignedBlocksPerSm = 5;

// An asynchronous copy of a chunk that the tile's span check let through.
template <bool kEvictLast>
__device__ __forceinline__ void copy_chunk_async_unchecked(uint4* shared_dst, const uint4* chunk, uintptr_t lo, uintptr_t hi) {
  expect_chunk_inside_span(chunk, lo, hi);
  copy_chunk_async<kEvictLast>(shared_dst, chunk);
}

// Load phase for input rows off the 16-byte grid: the kChunks lanes of row b's group (one warp
// holds whole groups) load the aligned chunks that cover the row's segment (cover chunk c, from
// the chunk that holds its first element, `offset` bytes in), each lane takes the next lane's
// chunk by a shuffle (the group's last lane takes cover chunk kChunks from staging[b], which an
// asynchronous copy filled first where the segment reaches into it), and writes the pair shifted
// by the offset: chunk c of the segment, in the slot the aligned path's copies fill. Chunks past
// the segment's last element are not read (last_cover_chunk). kRealignedLoadPasses passes of
// rows have their loads in flight before their first shared store; the staging chunks need no
// registers. Reads outside the segment but inside a chunk that holds some of it (at most 15
// bytes on either side) stay inside the input's byte span: only a tile whose cover crosses its
// ends (the tensor's first or last) reads through load_chunk_inside.
template <typename T, int kLines, RealignLoads kPolicy>
__device__ __forceinline__ void load_realigned_output_span_tile(const T* segments, int64_t in_sb, int size_b, int na,
                                                                uint4* rows, uint4* staging,
                                                                const RealignedOutputSpanTileArgs& args) {
  using Shape = SpanShape<sizeof(T), kLines>;
  constexpr int kE = sizeof(T), kV = Shape::kV, kChunks = Shape::kVectorsPerRow;
  constexpr int kRowsPerPass = kThreads / kChunks, kPasses = kRealignedLoadPasses;
  constexpr bool kEvictLast = kPolicy != RealignLoads::kPlain;
  static_assert(32 % kChunks == 0, "a row's lanes must lie in one warp (the exchange)");
  const int c = static_cast<int>(threadIdx.x) % kChunks, row = static_cast<int>(threadIdx.x) / kChunks;
  const int needed = (na + kV - 1) / kV;  // chunks of shared row b that hold elements of the segment
  auto segment = [&](int b) { return reinterpret_cast<const unsigned char*>(segments + b * in_sb); };
  auto offset = [](const unsigned char* p) { return static_cast<int>(reinterpret_cast<uintptr_t>(p) & 15); };
  auto cover = [&](const unsigned char* p) { return reinterpret_cast<const uint4*>(p - offset(p)); };
  const uintptr_t cover_lo = reinterpret_cast<uintptr_t>(cover(segment(0)));
  const uintptr_t cover_hi = (reinterpret_cast<uintptr_t>(segment(size_b - 1)) + na * kE + 15) & ~uintptr_t{15};
  const bool inside = cover_lo >= args.in_lo && cover_hi <= args.in_hi;  // rows lie at increasing addresses
  for (int b = static_cast<int>(threadIdx.x); b < size_b; b += kThreads) {
    const unsigned char* p = segment(b);
    if (last_cover_chunk(offset(p), na, kE) < kChunks) continue;
    if (inside) {
      copy_chunk_async_unchecked<kEvictLast>(staging + b, cover(p) + kChunks, args.in_lo, args.in_hi);
    } else {
      staging[b] = load_chunk_inside(cover(p) + kChunks, args.in_lo, args.in_hi);
    }
  }
  commit_chunk_copies();
  // Block-uniform bounds: every lane of a warp takes part in each exchange (and the host
  // emulation's exchange is a block-wide one).
  for (int b0 = 0; b0 < size_b; b0 += kPasses * kRowsPerPass) {
    uint4 raw[kPasses];
    auto load_all = [&](auto&& load) {
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
        const int b = b0 + row + i * kRowsPerPass;
        raw[i] = make_uint4(0, 0, 0, 0);
        if (b >= size_b) continue;
        const unsigned char* p = segment(b);
        if (c <= last_cover_chunk(offset(p), na, kE)) raw[i] = load(cover(p) + c);
      }
    };
    if (inside) {
      load_all([&](const uint4* chunk) { return load_chunk_unchecked<kPolicy>(chunk, args.in_lo, args.in_hi); });
    } else {
      load_all([&](const uint4* chunk) { return load_chunk_inside(chunk, args.in_lo, args.in_hi); });
    }
    if (b0 == 0) {  // the staging chunks, once per tile
      wait_chunk_copies<0>();
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int b = b0 + row + i * kRowsPerPass;
      uint4 next = chunk_of_next_lane(raw[i], kChunks);
      if (b >= size_b || c >= needed) continue;
      if (c == kChunks - 1) next = staging[b];  // read only where the segment reaches into it
      rows[b * kChunks + chunk_slot<kV>(b, c)] = realign_chunk(raw[i], next, offset(segment(b)));
    }
  }
}

// The kV elements of a whole vector at span index p0: rows b .. of column a, and past the row's
// end (m = size_b - b elements in) rows 0 .. of column a + 1. The rows lie kRowElems apart in
// shared memory and their chunk slots take at most three offsets: the swizzle (b / kV) % 8 up
// to the next multiple of kV, the next swizzle, and column a + 1's first rows (swizzle 0).
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
// next tile a grid away (one tile per block unless the grid is capped). Every segment starts on
// the 16-byte grid here (output_span_input_on_grid): asynchronous copies.
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

// The same from input rows off the grid: realigned loads, built for kRealignedBlocksPerSm blocks
// per SM.
template <typename T, int kLines, bool kEvictLast>
__global__ void __launch_bounds__(kThreads, kRealignedBlocksPerSm)
    realigned_output_span_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                const RealignedOutputSpanTileArgs args) {
  constexpr int kTileA = SpanShape<sizeof(T), kLines>::kTileB;  // output rows per tile
  constexpr RealignLoads kPolicy = kEvictLast ? RealignLoads::kEvictLast : RealignLoads::kPlain;
  uint4* rows = reinterpret_cast<uint4*>(dynamic_smem());
  const int size_b = static_cast<int>(args.size_b);
  uint4* staging = rows + size_b * SpanShape<sizeof(T), kLines>::kVectorsPerRow;
  for (int64_t t = blockIdx.x; t < args.order.total; t += gridDim.x) {
    const TileSpot spot = args.locate(t);
    const int64_t a0 = spot.ta * kTileA;
    const int na = static_cast<int>(min(static_cast<int64_t>(kTileA), args.size_a - a0));
    load_realigned_output_span_tile<T, kLines, kPolicy>(in + spot.in_off + a0, args.in_sb, size_b, na, rows, staging,
                                                          args);
    __syncthreads();
    store_output_span_tile<T, kLines>(out + spot.out_off + a0 * size_b, na, args, rows);
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

}  // namespace torch_transpose
