// Span tiles: transposes whose input rows are short (at most kSpanMaxRowElems elements along a)
// and packed back to back (in_sb == size_a), as an NCHW activation with a small H x W becomes
// NHWC: ResNet's last stage (2048 channels of 7 x 7), ViT-B's patch grid (768 of 14 x 14).
#pragma once

#include <algorithm>
#if defined(TT_CUDA_ON_HOST)
#include <cstring>
#include <deque>
#include <utility>
#include <vector>
#endif

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "span_gather_banks.h"
#include "tile_order.cuh"

namespace torch_transpose {

inline Override span_tile_override() {
  const Override setting = switch_override("span_tiles");
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

inline int span_tile_lines(int64_t size_a, int64_t max_bytes) {
  const long long forced = switch_int_in_range("span_lines", 0, 4, 0);
  const int most = 512 * size_a <= max_bytes ? 4 : 256 * size_a <= max_bytes ? 2 : 1;
  return forced == 1 || forced == 2 || forced == 4 ? std::min(static_cast<int>(forced), most) : most;
}

// span_whole_lines: 1 = the store phase writes whole lines (four 128-byte lines
// per warp store) on every span tile plan, 0 = lanes in pairs along b everywhere (a sector of 16
// rows per warp store), unset = span_whole_lines_by_default.
inline Override span_whole_lines_override() {
  const Override setting = switch_override("span_whole_lines");
  return setting;
}

inline bool span_whole_lines_by_default(int element_bytes, int64_t tiles, int sm_count) {
  return element_bytes == 2 && tiles >= 4 * static_cast<int64_t>(sm_count);
}

inline int span_rotation_override() {
  const int forced = static_cast<int>(switch_int_in_range("span_rotation", 0, 15, -1));
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
// (cp.async, LDGSTS).
#if defined(TT_CUDA_ON_HOST)
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
#if defined(TT_CUDA_ON_HOST)
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
#if defined(TT_CUDA_ON_HOST)
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
#if defined(TT_CUDA_ON_HOST)
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
// the banks, and rotates the packed vector back (realign_chunk).
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

// Calls launch(std::integral_constant<int, L>) for span tiles of L = 1, 2 or 4 lines per output row.
template <typename Launch>
void with_span_lines(int lines, Launch&& launch) {
  if (lines == 4) return launch(std::integral_constant<int, 4>{});
  if (lines == 2) return launch(std::integral_constant<int, 2>{});
  launch(std::integral_constant<int, 1>{});
}

}  // namespace torch_transpose
