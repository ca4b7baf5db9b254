// Item tiles: output span tiles' plans (output rows of size_b elements packed back to back) whose
// batch items are small matrices, an input row's size_a elements fitting one 128-byte line: a tile
// holds several whole items rather than one.
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "output_span_tile_transpose.cuh"
#include "realign_window_tile_transpose.cuh"

namespace torch_transpose {

// item_tiles: 0 = plans stay on output span tiles of one item, unset or 1 = item
// tiles take every output span tile plan they fit (item_tile_parts).
inline Override item_tile_override() {
  const Override setting = switch_override("item_tiles");
  return setting;
}

// item_parts: 1 = item tiles also take every output span tile plan whose input
// rows are longer than item_tile_max_row_bytes, each item cut into parts (item_parts); 0 = none
// (output span tiles take them); unset = item_parts_by_default.
inline Override item_parts_override() {
  const Override setting = switch_override("item_parts");
  return setting;
}

inline bool item_parts_by_default(bool aligned_input) { return !aligned_input; }

// Lanes per (item, row) pair: the 8 chunks a row's cover may take.
constexpr int kItemGroupLanes = 8;

// The most items a tile takes (item offsets live in static shared memory).
constexpr int kMaxItemsPerTile = 8;

// Passes of (item, row) pairs whose loads are in flight at once (32 pairs a pass), and the blocks
// per SM the kernel is built for.
constexpr int kItemLoadPasses = 8;
constexpr int kItemBlocksPerSm = 5;

// The longest input row (size_a elements, in bytes) item tiles take: a row's cover, from the
// chunk that holds its first element, is then at most kItemGroupLanes chunks (from rows off the
// 16-byte grid a line less the 15 bytes the cover may start before the row).
inline int64_t item_tile_max_row_bytes(bool aligned_input) { return aligned_input ? 128 : 112; }

// How item tiles cut an item: into `per_item` parts of `rows` output rows each (the last part of
// an item fewer), balanced, each input row segment at most item_tile_max_row_bytes; from input
// rows on the 16-byte grid, whole vectors a part, so that every segment starts on the grid.
struct ItemParts {
  int64_t rows = 0;
  int64_t per_item = 0;
};

inline ItemParts item_parts(int64_t size_a, int element_bytes, bool aligned_input) {
  const int64_t most = item_tile_max_row_bytes(aligned_input) / element_bytes;
  if (size_a <= most) return {size_a, 1};
  const int64_t v = 16 / element_bytes;
  int64_t rows = ceil_div(size_a, ceil_div(size_a, most));
  if (aligned_input) rows = ceil_div(rows, v) * v;  // most is whole vectors, so rows stays at most most
  return {rows, ceil_div(size_a, rows)};
}

// Shared memory of one item's span: its elements from up to 15 bytes into a chunk (the output
// span's offset from the grid), in whole chunks.
inline int64_t item_span_smem_bytes(int64_t size_a, int64_t size_b, int element_bytes) {
  return (size_a * size_b * element_bytes + 30) / 16 * 16;
}

inline int item_tile_parts(const FastDims& f, int64_t items, int element_bytes, bool aligned_input) {
  if (element_bytes > 4) return 0;
  const ItemParts parts = item_parts(f.size_a, element_bytes, aligned_input);
  const bool cut = parts.per_item > 1;
  if (cut && !decide(item_parts_override(), item_parts_by_default(aligned_input))) return 0;
  const long long cap = switch_int_in_range("item_tile_items", 2, kMaxItemsPerTile, kMaxItemsPerTile);
  const int64_t one_round = std::max<int64_t>(1, kItemLoadPasses * (kThreads / kItemGroupLanes) / f.size_b);
  const int64_t fit = kSpanMaxBytes / item_span_smem_bytes(parts.rows, f.size_b, element_bytes);
  const int64_t k = std::min(std::min(static_cast<int64_t>(cap), one_round), std::min(fit, items * parts.per_item));
  return k >= (cut ? 1 : 2) ? static_cast<int>(k) : 0;
}

// Output span tiles' arguments (the input's byte span, which the loads stay inside), how items are
// cut into parts, a tile walk of ceil(parts / parts_per_tile) tiles, each part's shared bytes, and
// the store phase's vector slots per part.
struct ItemTileArgs : RealignedOutputSpanTileArgs {
  int64_t parts = 0;           // batch items x parts_per_item
  int64_t parts_per_item = 0;  // 1 where an item's input rows fit (item_parts)
  int part_rows = 0;           // output rows of a part (the last part of an item fewer)
  int parts_per_tile = 0;      // parts a tile: 1 .. kMaxItemsPerTile
  int span_bytes = 0;          // shared bytes per part (item_span_smem_bytes)
  int item_vectors = 0;        // store slots per part: the most aligned vectors a part's span touches
  FastDivmod by_item_vectors;  // divides a store slot into part and vector
};

// aligned_input: output_span_input_on_grid, as the launcher found it for item_tile_parts.
inline ItemTileArgs make_item_tile_args(const LayoutPlan& plan, const FastDims& f, int parts_per_tile, int element_bytes,
                                        uintptr_t in_address, bool aligned_input) {
  ItemTileArgs args;
  static_cast<OutputSpanTileArgs&>(args) = make_output_span_tile_args(plan, f.size_a, f.size_b);
  input_byte_span(plan, in_address, args.in_lo, args.in_hi);
  const ItemParts parts = item_parts(f.size_a, element_bytes, aligned_input);
  args.parts_per_item = parts.per_item;
  args.part_rows = static_cast<int>(parts.rows);
  args.parts = args.batch.count() * parts.per_item;
  args.parts_per_tile = parts_per_tile;
  args.order = TileOrder::make(1, 1, ceil_div(args.parts, parts_per_tile));
  args.span_bytes = static_cast<int>(item_span_smem_bytes(parts.rows, f.size_b, element_bytes));
  const int64_t v = 16 / element_bytes;
  // A span of part_rows * size_b elements starting up to v - 1 elements past the grid.
  args.item_vectors = static_cast<int>((parts.rows * f.size_b + 2 * v - 2) / v);
  args.by_item_vectors = FastDivmod(static_cast<uint32_t>(args.item_vectors));
  return args;
}

// Shared memory of one tile: parts_per_tile spans.
inline size_t item_tile_smem_bytes(const ItemTileArgs& args) {
  return static_cast<size_t>(args.parts_per_tile) * args.span_bytes;
}

// Where item m's span lies in shared memory: its element p at span[p] (head elements into the
// item's first chunk, as in the output).
template <typename T>
__device__ __forceinline__ T* item_span(unsigned char* spans, int m, int head, const ItemTileArgs& args) {
  return reinterpret_cast<T*>(spans + m * args.span_bytes) + head;
}

// Load phase: every input row b's segment of the tile's parts into column b of its part's span
// (part m: na[m] elements from in + part_in[m] + b * in_sb). Reads stay inside the input's byte
// span: a chunk that holds part of a segment lies between the chunks of the part's first row's
// first element and last row's last one (rows lie at increasing addresses), and only a tile with
// a part whose cover crosses the span's ends (the tensor's first or last) reads through
// load_chunk_inside.
template <typename T, RealignLoads kPolicy, bool kParts>
__device__ __forceinline__ void load_items_into_spans(const T* in, const int64_t* part_in, const int* na,
                                                      const int* part_head, int parts, const ItemTileArgs& args,
                                                      unsigned char* spans) {
  constexpr int kE = sizeof(T), kV = 16 / kE;
  constexpr int kPairsPerPass = kThreads / kItemGroupLanes, kPasses = kItemLoadPasses;
  const int c = static_cast<int>(threadIdx.x) % kItemGroupLanes, group = static_cast<int>(threadIdx.x) / kItemGroupLanes;
  const int size_b = static_cast<int>(args.size_b), pairs = parts * size_b;
  auto segment = [&](int m) { return kParts ? na[m] : static_cast<int>(args.size_a); };
  auto row_bytes = [&](int m, int b) {
    return reinterpret_cast<const unsigned char*>(in + part_in[m] + static_cast<int64_t>(b) * args.in_sb);
  };
  auto offset = [](const unsigned char* p) { return static_cast<int>(reinterpret_cast<uintptr_t>(p) & 15); };
  auto cover = [&](const unsigned char* p) { return reinterpret_cast<const uint4*>(p - offset(p)); };
  bool inside = true;
  for (int m = 0; m < parts; ++m) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(cover(row_bytes(m, 0)));
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(row_bytes(m, size_b - 1)) + segment(m) * kE + 15) & ~uintptr_t{15};
    inside = inside && lo >= args.in_lo && hi <= args.in_hi;
  }
  // Block-uniform bounds: every lane of a warp takes part in each exchange (and the host
  // emulation's exchange is a block-wide one).
  for (int q0 = 0; q0 < pairs; q0 += kPasses * kPairsPerPass) {
    uint4 raw[kPasses];
    auto load_all = [&](auto&& load) {
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
        const int q = q0 + group + i * kPairsPerPass;
        raw[i] = make_uint4(0, 0, 0, 0);
        if (q >= pairs) continue;
        uint32_t m, b;
        args.by_size_b.divmod(static_cast<uint32_t>(q), m, b);
        const unsigned char* p = row_bytes(m, b);
        if (c <= last_cover_chunk(offset(p), segment(m), kE)) raw[i] = load(cover(p) + c);
      }
    };
    if (inside) {
      load_all([&](const uint4* chunk) { return load_chunk_unchecked<kPolicy>(chunk, args.in_lo, args.in_hi); });
    } else {
      load_all([&](const uint4* chunk) { return load_chunk_inside(chunk, args.in_lo, args.in_hi); });
    }
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int q = q0 + group + i * kPairsPerPass;
      const uint4 next = chunk_of_next_lane(raw[i], kItemGroupLanes);
      if (q >= pairs) continue;
      uint32_t m, b;
      args.by_size_b.divmod(static_cast<uint32_t>(q), m, b);
      const int n = segment(m);
      if (c * kV >= n) continue;
      const uint4 chunk = realign_chunk(raw[i], next, offset(row_bytes(m, b)));
      const Vec<T, kV> elements = *reinterpret_cast<const Vec<T, kV>*>(&chunk);
      T* column = item_span<T>(spans, m, part_head[m], args) + b + c * kV * size_b;
#pragma unroll
      for (int k = 0; k < kV; ++k)
        if (c * kV + k < n) column[k * size_b] = elements.v[k];
    }
  }
}

// Store phase: every part's span (na[m] * size_b elements from out + part_out[m]) in aligned
// 16-byte vectors, copied from its shared span. The tile's parts * item_vectors store slots go to
// threads in turn (slot w: part w / item_vectors, vector w % item_vectors; the slots past a part's
// last vector idle), so the threads stay busy across parts rather than idling at the end of each.
template <typename T, bool kParts>
__device__ __forceinline__ void store_items_from_spans(T* out, const int64_t* part_out, const int* na,
                                                       const int* part_head, int parts, const ItemTileArgs& args,
                                                       unsigned char* spans) {
  constexpr int kV = 16 / static_cast<int>(sizeof(T));
  const int slots = parts * args.item_vectors;
  for (int w = static_cast<int>(threadIdx.x); w < slots; w += kThreads) {
    uint32_t m, u;
    args.by_item_vectors.divmod(static_cast<uint32_t>(w), m, u);
    const int head = part_head[m];
    const int len = (kParts ? na[m] : static_cast<int>(args.size_a)) * static_cast<int>(args.size_b);
    const int p0 = static_cast<int>(u) * kV - head;  // span index of the vector's first element
    if (p0 >= len) continue;
    T* span = out + part_out[m];
    const T* shared_span = item_span<T>(spans, static_cast<int>(m), head, args);
    if (p0 >= 0 && p0 + kV <= len) {
      // Through __stwb: see store_window_rows (a plain assignment came out as element stores).
      __stwb(reinterpret_cast<uint4*>(span - head) + u, reinterpret_cast<const uint4*>(shared_span - head)[u]);
      continue;
    }
    for (int k = 0; k < kV; ++k) {
      const int p = p0 + k;
      if (p >= 0 && p < len) span[p] = shared_span[p];
    }
  }
}

// A block takes tiles a grid apart: the tile's part offsets and lengths into shared memory (one
// thread per part), then the load, a wait, and the store.
template <typename T, bool kEvictLast, bool kParts>
__global__ void __launch_bounds__(kThreads, kItemBlocksPerSm)
    item_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const ItemTileArgs args) {
  constexpr RealignLoads kPolicy = kEvictLast ? RealignLoads::kEvictLast : RealignLoads::kPlain;
  __shared__ int64_t part_in[kMaxItemsPerTile], part_out[kMaxItemsPerTile];
  __shared__ int na[kMaxItemsPerTile];         // output rows of each part (input row segments' length)
  __shared__ int part_head[kMaxItemsPerTile];  // each output span's first element, in elements past the grid
  unsigned char* spans = dynamic_smem();
  for (int64_t t = blockIdx.x; t < args.order.total; t += gridDim.x) {
    const int64_t first = t * args.parts_per_tile;
    const int parts = static_cast<int>(min(static_cast<int64_t>(args.parts_per_tile), args.parts - first));
    if (static_cast<int>(threadIdx.x) < parts) {
      const int64_t part = first + threadIdx.x;
      const int64_t item = kParts ? part / args.parts_per_item : part;
      const int64_t a0 = kParts ? (part - item * args.parts_per_item) * args.part_rows : 0;
      int64_t in_off, out_off;
      args.batch.offsets(item, in_off, out_off);
      part_in[threadIdx.x] = in_off + a0;  // unit stride along a (output_span_tiles_fit)
      part_out[threadIdx.x] = out_off + a0 * args.size_b;
      if (kParts) na[threadIdx.x] = static_cast<int>(min(static_cast<int64_t>(args.part_rows), args.size_a - a0));
      part_head[threadIdx.x] = static_cast<int>((reinterpret_cast<uintptr_t>(out + part_out[threadIdx.x]) % 16) / sizeof(T));
    }
    __syncthreads();
    load_items_into_spans<T, kPolicy, kParts>(in, part_in, na, part_head, parts, args, spans);
    __syncthreads();
    store_items_from_spans<T, kParts>(out, part_out, na, part_head, parts, args, spans);
    __syncthreads();  // the next tile reuses the spans and offsets
  }
}

}  // namespace torch_transpose
