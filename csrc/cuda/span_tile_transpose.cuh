// Span tiles: transposes whose input rows are short (at most kSpanMaxRowElems elements along a)
// and packed back to back (in_sb == size_a), as an NCHW activation with a small H x W becomes
// NHWC: ResNet's last stage (2048 channels of 7 x 7), ViT-B's patch grid (768 of 14 x 14).
//
// Why: the square and realign window tiles cover a in tiles of 64-128 elements, so a fast dim of
// 49 left most of each tile idle, and rows of 98 or 392 bytes start off the 16-byte grid, so their
// loads were narrow. H200 (bench/results/h200-models.md, session 40): bf16 128x2048x7x7 -> NHWC
// 0.61 of copy, fp16 64x768x14x14 0.71. Here 0.85 (span_tiles_by_default has the A/B); still
// short of copy. ncu, one launch (bf16 128x2048x7x7): DRAM at 37-43% of peak, the reads at about
// 1.6 TB/s: a block loads its span, waits, then stores, with at most 8 blocks (50-200 KB) per SM
// in flight. Two ways to overlap a block's stores with its loads lost (bench/NOTES.md v44, v45):
// a second buffer on a persistent grid (session 41), and a span loaded and stored in 2 or 4
// parts (session 42). Whole-line stores (session 45, v48: span_whole_lines_by_default) lifted
// the larger 2-byte grids by 0.01-0.03 (ViT-B's patches 0.84-0.87 by GPU time); what holds these
// tiles below 0.9 is still open.
//
// A tile here is every element of kTileB consecutive input rows (b0 .. b0 + kTileB - 1): one
// contiguous span of nb * size_a elements, whatever size_a is.
// * Load: the span is read as the 16-byte-aligned chunks inside it, each with one vector load,
//   into shared memory at its own offset from the 16-byte grid (`head` elements), so the shared
//   copy is the span byte for byte. The at most kV - 1 elements before the first whole chunk and
//   after the last one go element by element: nothing outside the span is read.
// * Store: output row a of the tile is kTileB elements (kLines x 128 bytes) from b0; each thread
//   gathers one 16-byte vector of it (kV elements, size_a apart in shared memory) and stores it
//   whole. Two lane mappings (store_span_tile; span_whole_lines_by_default picks): lanes in pairs
//   along b and 16 pairs along a (a warp store writes one sector of each of 16 rows; at most 2.25
//   wavefronts per shared load), or whole lines, 8 lanes along b and 4 rows along a (a warp store
//   writes four whole lines), each lane's gather rotated so that the 8 lanes of a line read other
//   banks (span_gather_banks.h models the conflicts and picks the rotation).
// Output rows must allow 16-byte stores: out_sb == 1, the base, out_sa and the batch strides on
// the 16-byte grid (span_tiles_fit). The last tile along b may be partial: its vectors past nb
// are skipped, and a vector that nb cuts goes element by element.
#pragma once

#include <algorithm>
#if defined(TORCH_TRANSPOSE_CUDA_ON_HOST)
#include <cstring>
#include <deque>
#include <utility>
#include <vector>
#endif

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "span_gather_banks.h"
#include "tile_order.cuh"

namespace torch_transpose {

// TORCH_TRANSPOSE_SPAN_TILES: 1 = every plan the kernel fits (tests, A/B runs), 0 = none, unset =
// span_tiles_by_default.
inline Override span_tile_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_SPAN_TILES");
  return setting;
}

// Input rows of up to this many elements: a tile's span then takes at most 128 x 256 bytes (32 KB)
// of shared memory (one line per row), below the 48 KB a launch gets without opting in.
constexpr int64_t kSpanMaxRowElems = 256;

// kLines 128-byte lines of each output row per tile (1, 2 or 4: span_tile_lines picks the most
// whose span fits kSpanMaxBytes), so that short rows still give a block a span of 12-40 KB to
// have in flight.
template <int E, int kLines> struct SpanShape {
  static_assert(E == 1 || E == 2 || E == 4 || E == 8, "span tiles are built for 1- to 8-byte elements");
  static_assert(kLines == 1 || kLines == 2 || kLines == 4, "1, 2 or 4 lines per output row");
  static constexpr int kTileB = kLines * 128 / E;     // input rows per tile
  static constexpr int kV = 16 / E;                   // elements per 16-byte vector
  static constexpr int kVectorsPerRow = kTileB / kV;  // 8 per line
};

// A tile's span of kLines x 128 bytes per input row is at most this.
constexpr int64_t kSpanMaxBytes = 40 * 1024;

// TORCH_TRANSPOSE_SPAN_LINES=1, 2 or 4 sets the lines per output row wherever the span fits
// max_bytes (A/B runs); unset or 0, the most that fit.
inline int span_tile_lines(int64_t size_a, int64_t max_bytes) {
  static const long long forced = env_int_in_range("TORCH_TRANSPOSE_SPAN_LINES", 0, 4, 0);
  const int most = 512 * size_a <= max_bytes ? 4 : 256 * size_a <= max_bytes ? 2 : 1;
  return forced == 1 || forced == 2 || forced == 4 ? std::min(static_cast<int>(forced), most) : most;
}

// TORCH_TRANSPOSE_SPAN_WHOLE_LINES: 1 = the store phase writes whole lines (four 128-byte lines
// per warp store) on every span tile plan, 0 = lanes in pairs along b everywhere (a sector of 16
// rows per warp store), unset = span_whole_lines_by_default.
inline Override span_whole_lines_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_SPAN_WHOLE_LINES");
  return setting;
}

// Which span tile plans store whole lines unless the switch says otherwise: 2-byte ones of at
// least 4 tiles per SM. H200, same-call A/Bs by GPU time, ratio to copy, pairs -> whole lines
// (bench/NOTES.md v48, results/h200-ab-session45.md), 768-1024 tiles: fp16 64x768x14x14 (ViT-B
// patches) 0.80-0.85 -> 0.84-0.87, fp16 256x384x10x10 0.82-0.85 -> 0.84-0.88, bf16 128x512x14x14
// 0.85-0.86 -> 0.86, fp16 64x768x13x13 0.77-0.79 -> 0.78-0.80, bf16 128x2048x7x7 level
// (0.86-0.89 / 0.87). Grids of 128-256 tiles lost (bf16 32x256x15x15 0.645 -> 0.60, bf16
// 64x1024x5x7 0.70 -> 0.65, fp16 64x768x6x9 0.66 -> 0.60), as did 1-byte plans at any size (int8
// 64x768x14x14 0.655 -> 0.56): with one or two blocks per SM the longer chain per vector (the
// rotated gather and the byte rotation) is what the SM waits on, not the shared loads' conflicts.
inline bool span_whole_lines_by_default(int element_bytes, int64_t tiles, int sm_count) {
  return element_bytes == 2 && tiles >= 4 * static_cast<int64_t>(sm_count);
}

// TORCH_TRANSPOSE_SPAN_ROTATION=0..15 forces the whole-line gather's rotation step (taken modulo
// the elements per vector; tests, A/B runs); unset, span_rotation_step's model chooses it.
inline int span_rotation_override() {
  static const int forced = static_cast<int>(env_int_in_range("TORCH_TRANSPOSE_SPAN_ROTATION", 0, 15, -1));
  return forced;
}

// The span tile kernel's arguments: the tile walk (one tile along a), size_a as a divisor, and
// the whole-line gather's rotation step (span_gather_banks.h).
struct SpanTileArgs : SquareTileArgs {
  FastDivmod by_size_a;
  int rotation_step = 0;
};

// Shared memory of one tile: the span's chunks, one more for the head's offset from the grid.
inline size_t span_tile_smem_bytes(int64_t size_a, int lines) {
  return static_cast<size_t>(ceil_div(lines * 128 * size_a, 16) + 1) * 16;
}

// Whether the plan fits span tiles: unit-stride fast dims, input rows of at most
// kSpanMaxRowElems packed back to back, and output rows (and the output's base and batch
// strides) on the 16-byte grid. In-tile offsets stay below 2^31 by the row cap (a span is at
// most kSpanMaxBytes; FastDivmod divides vector indices below 16 x kSpanMaxRowElems); batch offsets and
// output rows are 64-bit, and the tile walk takes 64-bit division where it needs it.
// f: the plan's fast dims, as the launcher already has them.
inline bool span_tiles_fit(const LayoutPlan& plan, const FastDims& f, uintptr_t out_address) {
  if (plan.kind != PlanKind::Transpose || plan.element_bytes > 8) return false;
  const int64_t v = 16 / plan.element_bytes;
  return f.in_sa == 1 && f.out_sb == 1 && f.in_sb == f.size_a && f.size_a >= 1 && f.size_a <= kSpanMaxRowElems &&
         f.out_sa % v == 0 && out_address % 16 == 0 && plan.batch_strides_multiple_of(plan.out_strides, v);
}

// Which plans take span tiles unless the switch says otherwise: 1- and 2-byte plans whose input
// rows are not whole 16-byte vectors. H200, same-call A/B by GPU time, ratio to copy, two rounds,
// switch off -> rule (bench/NOTES.md v44, results/h200-ab-session41.md): bf16 128x2048x7x7
// 0.60 -> 0.85, fp16 64x768x14x14 0.71-0.75 -> 0.84-0.87, bf16 128x512x14x14 0.72 -> 0.83,
// fp16 256x384x10x10 0.72 -> 0.84, int8 128x2048x7x7 0.45 -> 0.59-0.63. 4-byte plans lost
// to window tiles (fp32 128x2048x7x7 1.00 -> 0.90, fp32 1000000x37 0.96 -> 0.92), and every
// plan of whole vectors lost when forced (bf16 128x1024x8x8 1.04 -> 0.79, fp32 64x768x14x14
// 0.94 -> 0.85, bf16 K transposed 8x32x4096x128 0.966 -> 0.935).
inline bool span_tiles_by_default(int element_bytes, int vector_elems) {
  return element_bytes <= 2 && vector_elems * element_bytes < 16;
}

inline SpanTileArgs make_span_tile_args(const LayoutPlan& plan, int64_t size_a, int tile_b) {
  SpanTileArgs args;
  static_cast<SquareTileArgs&>(args) = SquareTileArgs::make_rect(plan, size_a, tile_b, 0);
  args.by_size_a = FastDivmod(static_cast<uint32_t>(args.size_a));
  return args;
}

// The whole-line gather's rotation step: the switch's, or span_gather_banks.h's model's.
inline int span_tile_rotation_step(int element_bytes, int64_t size_a, int lines) {
  const int forced = span_rotation_override();
  return forced >= 0 ? forced % (16 / element_bytes)
                     : span_rotation_step(element_bytes, static_cast<int>(size_a), lines, kThreads);
}

// A 16-byte copy from global to shared memory that needs no register: the SM's asynchronous copy
// (cp.async, LDGSTS). A block thus has its whole span in flight at once, where loads into
// registers stopped at a few per thread: H200, the first version loaded 4 vectors per thread
// per batch (57 registers, 4 blocks per SM) and ran fp32 128x2048x7x7 at 0.75 of copy, where
// window tiles reach 1.0 (bench/NOTES.md v44).
// On the host the copy waits in its thread's queue until wait_chunk_copies lets its group land,
// and its destination reads poison until then: a store phase that reads chunks before their
// wait fails the host tests, as it would race on the GPU.
#if defined(TORCH_TRANSPOSE_CUDA_ON_HOST)
namespace host_emulation {
struct PendingChunkCopies {
  using Group = std::vector<std::pair<uint4*, const uint4*>>;
  Group open;                   // issued since this thread's last commit
  std::deque<Group> committed;  // oldest first
};
inline PendingChunkCopies& pending_chunk_copies() {
  static thread_local std::vector<PendingChunkCopies> per_thread(1024);
  return per_thread[threadIdx.x];
}
}  // namespace host_emulation
#endif

template <bool kEvictLast>
__device__ __forceinline__ void copy_chunk_async(uint4* shared_dst, const uint4* src) {
#if defined(TORCH_TRANSPOSE_CUDA_ON_HOST)
  std::memset(static_cast<void*>(shared_dst), 0xA5, sizeof(uint4));
  host_emulation::pending_chunk_copies().open.emplace_back(shared_dst, src);
#else
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  if constexpr (kEvictLast) {
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "l"(policy) : "memory");
  } else {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  }
#endif
}

// Closes this thread's group of asynchronous copies issued since the last one.
__device__ __forceinline__ void commit_chunk_copies() {
#if defined(TORCH_TRANSPOSE_CUDA_ON_HOST)
  auto& copies = host_emulation::pending_chunk_copies();
  copies.committed.push_back(std::move(copies.open));
  copies.open.clear();
#else
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits for this thread's groups of asynchronous copies but the newest kPending; a barrier after
// it makes every thread's visible.
template <int kPending>
__device__ __forceinline__ void wait_chunk_copies() {
#if defined(TORCH_TRANSPOSE_CUDA_ON_HOST)
  auto& copies = host_emulation::pending_chunk_copies();
  while (copies.committed.size() > static_cast<size_t>(kPending)) {
    for (const auto& [dst, src] : copies.committed.front()) *dst = *src;
    copies.committed.pop_front();
  }
#else
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

// Where one tile lies: its span (input rows b0 .. b0 + nb - 1, all of a, of one batch item), that
// item's output, and the span's offset from the 16-byte grid in elements.
template <typename T> struct SpanTileAt {
  const T* span;
  T* dst;
  int64_t b0;
  int nb, head;
};

template <typename T, int kTileB>
__device__ __forceinline__ SpanTileAt<T> span_tile_at(const T* in, T* out, const SpanTileArgs& args, int64_t t) {
  const TileSpot spot = args.locate(t);
  SpanTileAt<T> at;
  at.b0 = spot.tb * kTileB;
  at.nb = static_cast<int>(min(static_cast<int64_t>(kTileB), args.size_b - at.b0));
  at.span = in + spot.in_off + at.b0 * args.size_a;
  at.dst = out + spot.out_off;
  at.head = static_cast<int>((reinterpret_cast<uintptr_t>(at.span) % 16) / sizeof(T));
  return at;
}

// The 16-byte chunks [lo, hi) that lie wholly inside a span of len elements `head` elements past
// the grid, counted from the chunk the span starts in.
struct WholeChunks {
  int lo, hi;
};

template <typename T>
__device__ __forceinline__ WholeChunks whole_chunks(const SpanTileAt<T>& at, int len) {
  constexpr int kV = 16 / static_cast<int>(sizeof(T));
  return {at.head > 0 ? 1 : 0, (at.head + len) / kV};
}

// The span's whole 16-byte chunks, issued as asynchronous copies into `chunks` so that span
// element j lands at element head + j of the buffer; the ragged ends are load_ragged's.
template <typename T, bool kEvictLast>
__device__ __forceinline__ void load_span_chunks(const SpanTileAt<T>& at, int len, uint4* chunks) {
  const uint4* grid = reinterpret_cast<const uint4*>(at.span - at.head);  // the span's first chunk, aligned
  const WholeChunks whole = whole_chunks(at, len);
  for (int q = whole.lo + static_cast<int>(threadIdx.x); q < whole.hi; q += kThreads)
    copy_chunk_async<kEvictLast>(chunks + q, grid + q);
}

// One element of the span's ragged ends, held in a register between its load and its shared store.
template <typename T> struct RaggedElement {
  T value;
  int j = -1;  // its index in the span; -1: this thread has none
};

// The ragged ends: elements [0, first_whole) before the first whole chunk and [last_whole, len)
// after the last, each fewer than kV; threads 0 .. kV - 1 load the first, kV .. 2 kV - 1 the
// second.
template <typename T>
__device__ __forceinline__ RaggedElement<T> load_ragged(const SpanTileAt<T>& at, int len) {
  constexpr int kV = 16 / static_cast<int>(sizeof(T));
  const WholeChunks whole = whole_chunks(at, len);
  const int first_whole = min(len, whole.lo * kV - at.head);
  const int last_whole = max(first_whole, whole.hi * kV - at.head);
  const int t = static_cast<int>(threadIdx.x);
  const int j = t < kV ? t : last_whole + (t - kV);
  RaggedElement<T> r;
  if (t < 2 * kV && (t < kV ? j < first_whole : j < len)) {
    r.value = at.span[j];
    r.j = j;
  }
  return r;
}

template <typename T>
__device__ __forceinline__ void store_ragged(const RaggedElement<T>& r, int head, uint4* chunks) {
  if (r.j >= 0) reinterpret_cast<T*>(chunks)[head + r.j] = r.value;
}

// Stores the tile in `chunks` (the span, loaded): each thread gathers 16-byte vectors of output
// rows, kV elements size_a apart in shared memory, and stores them whole.
// kWholeLines: a warp's 32 lanes take 4 rows a by the 8 vectors of one 128-byte line each, so
// every warp store writes whole lines; lane s reads its vector's elements rotated by
// (s * rotation_step) % kV (span_gather_banks.h), so that the 8 sides' shared loads spread over
// the banks, and rotates the packed vector back (realign_chunk). Otherwise lanes go in pairs along b (one whole 32-byte sector per pair) and 16
// pairs along a: with size_a apart elements along a pair's neighbours, that keeps a warp's
// shared reads at about 1.4 wavefronts each on average over size_a in 32..320, at most 2.25.
template <typename T, int kLines, bool kWholeLines>
__device__ __forceinline__ void store_span_tile(const SpanTileAt<T>& at, const SpanTileArgs& args, const uint4* chunks) {
  using Shape = SpanShape<sizeof(T), kLines>;
  constexpr int kV = Shape::kV;
  const int size_a = static_cast<int>(args.size_a);
  const T* elements = reinterpret_cast<const T*>(chunks) + at.head;  // element (b - b0) * size_a + a
  const int vectors_here = (at.nb + kV - 1) / kV;                    // vectors per output row in this tile
  const int total = size_a * Shape::kVectorsPerRow;
  // Lane s's rotation (v & 7 is the same for every v of this thread: kThreads is a multiple of 8).
  const int rotation = kWholeLines ? ((static_cast<int>(threadIdx.x) & 7) * args.rotation_step) & (kV - 1) : 0;
  for (int v = static_cast<int>(threadIdx.x); v < total; v += kThreads) {
    uint32_t group, a;
    int g;  // vector g of output row a: elements g kV .. g kV + kV - 1
    if constexpr (kWholeLines) {  // v -> (line, a, side): lines outermost, a, then the line's 8 vectors
      args.by_size_a.divmod(static_cast<uint32_t>(v >> 3), group, a);
      g = static_cast<int>(group) * 8 + (v & 7);
    } else {  // v -> (pair, a, side): pairs of vectors along b outermost, a, then the pair's two sides
      args.by_size_a.divmod(static_cast<uint32_t>(v >> 1), group, a);
      g = static_cast<int>(group) * 2 + (v & 1);
    }
    if (g >= vectors_here) continue;
    const T* column = elements + g * kV * size_a + static_cast<int>(a);
    T* row = at.dst + static_cast<int64_t>(a) * args.out_sa + at.b0 + g * kV;
    if ((g + 1) * kV <= at.nb) {
      Vec<T, kV> out;
      uint4 bits;
      if constexpr (kWholeLines) {
        // Slot k takes element (k + rotation) % kV: a pointer that steps by size_a and wraps
        // once. (Offsets ((k + rotation) % kV) * size_a came out hoisted out of the v loop: 8
        // more live registers, 52 in all for 2-byte elements, so 4 blocks per SM instead of 8.)
        const T* at_k = column + rotation * size_a;
        const T* const past = column + kV * size_a;
#pragma unroll
        for (int k = 0; k < kV; ++k) {
          out.v[k] = *at_k;
          at_k += size_a;
          if (at_k == past) at_k = column;
        }
        // Slot k holds element k + rotation: the true vector's byte j is the gathered one's byte
        // (j - rotation bytes) % 16, i.e. the 16 bytes that start (16 - rotation bytes) % 16 into
        // the gathered vector twice over.
        const uint4 gathered = *reinterpret_cast<const uint4*>(&out);
        bits = realign_chunk(gathered, gathered, (16 - rotation * static_cast<int>(sizeof(T))) & 15);
      } else {
#pragma unroll
        for (int k = 0; k < kV; ++k) out.v[k] = column[k * size_a];
        bits = *reinterpret_cast<const uint4*>(&out);
      }
      // Through __stwb: see store_window_rows (a plain assignment came out as element stores).
      __stwb(reinterpret_cast<uint4*>(row), bits);
    } else {  // the tile's last vector, cut by nb
      for (int k = 0; g * kV + k < at.nb; ++k) row[k] = column[k * size_a];
    }
  }
}

// One buffer: a block loads its tile's span, waits for it, stores the tile, and takes the next
// tile a grid away (one tile per block unless the grid is capped).
template <typename T, int kLines, bool kEvictLast, bool kWholeLines>
__global__ void __launch_bounds__(kThreads) span_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                      const SpanTileArgs args) {
  constexpr int kTileB = SpanShape<sizeof(T), kLines>::kTileB;
  uint4* chunks = reinterpret_cast<uint4*>(dynamic_smem());
  const int size_a = static_cast<int>(args.size_a);
  for (int64_t t = blockIdx.x; t < args.order.total; t += gridDim.x) {
    const SpanTileAt<T> at = span_tile_at<T, kTileB>(in, out, args, t);
    load_span_chunks<T, kEvictLast>(at, at.nb * size_a, chunks);
    commit_chunk_copies();
    store_ragged(load_ragged(at, at.nb * size_a), at.head, chunks);
    wait_chunk_copies<0>();
    __syncthreads();
    store_span_tile<T, kLines, kWholeLines>(at, args, chunks);
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

}  // namespace torch_transpose
