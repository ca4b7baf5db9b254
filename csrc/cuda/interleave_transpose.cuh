#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "narrow_transpose.cuh"  // NarrowArgs: the plan this kernel shares with the narrow kernel

namespace torch_transpose {

constexpr int kInterleaveMinC = 2, kInterleaveMaxC = 15;
constexpr int interleave_max_c(int element_bytes, bool planar_in) {
  return element_bytes <= 2 ? 8 : planar_in ? kInterleaveMaxC : 4;
}
constexpr int kInterleaveWarps = kThreads / 32;

inline bool interleave_enabled() {
  const bool enabled = !switch_off("interleave");
  return enabled;
}

inline bool interleave_direct_loads(int element_bytes, int c) {
  const Override setting = switch_override("interleave_direct");
  return decide(setting, element_bytes == 1 || c == 2 || (c == 3 && element_bytes != 2));
}

constexpr int64_t kLeanInterleavePlainLoadsMaxBytes = int64_t{64} << 20;
inline bool interleave_evict_last_rule(int element_bytes, bool dense_in, bool lean, int64_t bytes_moved) {
  if (element_bytes != 2) return true;
  if (dense_in) return false;
  return !lean || bytes_moved > kLeanInterleavePlainLoadsMaxBytes;
}

// The kernel's arguments, read off NarrowArgs (interleave_args below).
struct InterleaveArgs {
  int c = 0;                     // the narrow dim's size
  bool planar_in = false;        // planar input, dense output (NCHW -> NHWC); else the reverse
  int64_t long_size = 0;         // L, a multiple of V
  int64_t plane_stride = 0;      // planar side: elements between lines (a multiple of V)
  uint32_t total_chunks = 0;     // batch items x warp chunks per item (packed lines: items / items per chunk)
  uint32_t chunks_per_item = 0;
  FastDivmod by_chunks;          // warp chunk -> (batch item, chunk within the item)
  DeviceBatchIndexer batch;
  // Packed lines (wants_packed_lines): each item's lines are 2^lanes_per_item_log2 vectors, and a
  // warp chunk holds 32 >> lanes_per_item_log2 consecutive items of the `items`. Last, so that
  // the fields above keep their offsets (and the other kernels their SASS).
  int lanes_per_item_log2 = 5;
  int64_t items = 0;
};

constexpr int kPackedLinesMaxC = 4;
inline bool packed_lines_enabled() {
  const bool enabled = !switch_off("packed_lines");
  return enabled;
}
inline bool wants_packed_lines(const NarrowArgs& narrow, int element_bytes) {
  const int64_t chunk_positions = 32 * (16 / element_bytes);
  return packed_lines_enabled() && narrow.n <= kPackedLinesMaxC && narrow.wide < chunk_positions &&
         chunk_positions % narrow.wide == 0;
}

// Where a warp chunk's vectors lie, as element offsets from the chunk's src and dst.
// ContiguousChunk: 32 * V consecutive positions of one item, src and dst at its first element.
struct ContiguousChunk {
  template <int V>
  __device__ __forceinline__ int planar(int lane) const { return lane * V; }
  template <int V, int C>
  __device__ __forceinline__ int dense(int g) const { return g * V; }
};

// PackedChunk: 32 / m items (m = 2^lanes_log2 lanes each), src and dst the tensors' bases. Every
// lane of the warp must call dense() together (it shuffles).
struct PackedChunk {
  int64_t planar_lane = 0;  // this lane's planar position: its item's line start plus its vector
  int64_t dense_item = 0;   // this lane's item's dense run (the item's m * C vectors) start
  int lanes_log2 = 0;
  template <int V>
  __device__ __forceinline__ int64_t planar(int) const { return planar_lane; }
  template <int V, int C>
  __device__ __forceinline__ int64_t dense(int g) const {
    const int item = (g >> lanes_log2) / C;  // the chunk's item that dense vector g falls in
    const int64_t start = __shfl_sync(0xffffffffu, dense_item, item << lanes_log2);
    return start + static_cast<int64_t>(g - ((item * C) << lanes_log2)) * V;
  }
};

// The dense round trip in passes: a warp's 32 * C dense vectors go through its slice of shared
// memory in one pass up to C = 8 (4.6 KB a warp, 37 KB a block), in two passes of 16 lanes'
// vectors each above (C = 15 in one pass would need 61 KB a block). Only planar inputs take C > 8.
template <int C> constexpr int kInterleaveLanesPerPass = C > 8 ? 16 : 32;
template <int C> constexpr int kInterleavePassVectors = kInterleaveLanesPerPass<C> * C;

// Shared-memory slot of dense vector i of a pass. Lane l's vectors are l*C + k: for even C, the 8
// lanes of one 16-byte access phase would meet on 8 / gcd(C, 8) bank groups only. One slot of
// padding every 8 spreads them over all 8 for C = 2, 4 and 8, and keeps 8 consecutive vectors
// (the other phase) conflict-free; C = 6, 10, 12 and 14 keep some two-way conflicts. Odd C needs
// none.
template <int C> __device__ __forceinline__ int interleave_slot(int i) { return C % 2 == 0 ? i + i / 8 : i; }
template <int C>
constexpr int kInterleaveSlots = kInterleavePassVectors<C> + (C % 2 == 0 ? kInterleavePassVectors<C> / 8 : 0);

// One warp's chunk: 32 * V long positions (`vectors` of them whole vectors; lanes at or past it
// move nothing) times all C, from `src` to `dst` (each at the chunk's first element), through the
// warp's `slice` of shared memory. Every lane of the warp calls it, `vectors` the same for all
// (0 for a warp without a chunk: its __syncwarp calls still pair with the others' under host
// emulation, where they are block-wide). kDirectLoads (dense inputs only): no shared round trip
// on the load side (interleave_direct_loads). Index: the planar lines' stride type (int64_t for
// the looping kernel, int32_t for lean_interleave_kernel).
template <typename T, int C, bool kPlanarIn, bool kEvictLast, bool kDirectLoads, typename Index,
          typename Place = ContiguousChunk>
__device__ __forceinline__ void interleave_chunk(const T* __restrict__ src, T* __restrict__ dst, int vectors,
                                                 Index plane_stride, Vec<T, 16 / static_cast<int>(sizeof(T))>* slice, int lane,
                                                 const Place& place = Place{}) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  constexpr int kLanes = kInterleaveLanesPerPass<C>, kPassVectors = kInterleavePassVectors<C>;
  constexpr int kPasses = 32 / kLanes;
  using Chunk = Vec<T, V>;
  const bool lane_on = lane < vectors;
  const int dense_vectors = vectors * C;  // of the warp's chunk, in dense order
  Chunk planar[C], dense[C];

  if constexpr (kPlanarIn) {
#pragma unroll
    for (int c = 0; c < C; ++c)
      planar[c] = lane_on ? load_global<kEvictLast>(reinterpret_cast<const Chunk*>(src + c * plane_stride +
                                                                                 place.template planar<V>(lane)))
                          : Chunk{};
#pragma unroll
    for (int j = 0; j < C * V; ++j) dense[j / V].v[j % V] = planar[j % C].v[j / C];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      if (lane / kLanes == pass) {
#pragma unroll
        for (int k = 0; k < C; ++k) slice[interleave_slot<C>((lane % kLanes) * C + k)] = dense[k];
      }
      __syncwarp();
#pragma unroll
      for (int k = 0; k < (kPassVectors + 31) / 32; ++k) {
        const int i = k * 32 + lane, g = pass * kPassVectors + i;
        const auto at = place.template dense<V, C>(g);  // every lane: packed chunks shuffle here
        if (i < kPassVectors && g < dense_vectors) *reinterpret_cast<Chunk*>(dst + at) = slice[interleave_slot<C>(i)];
      }
      __syncwarp();  // the next pass or trip rewrites the slice
    }
  } else {
    static_assert(kPasses == 1, "dense inputs take one pass (interleave_max_c)");
    if constexpr (kDirectLoads) {
#pragma unroll
      for (int k = 0; k < C; ++k) {
        const auto at = place.template dense<V, C>(lane * C + k);
        dense[k] = lane_on ? load_global<kEvictLast>(reinterpret_cast<const Chunk*>(src + at)) : Chunk{};
      }
    } else {
#pragma unroll
      for (int k = 0; k < C; ++k) {
        const int i = k * 32 + lane;
        const auto at = place.template dense<V, C>(i);
        if (i < dense_vectors) slice[interleave_slot<C>(i)] = load_global<kEvictLast>(reinterpret_cast<const Chunk*>(src + at));
      }
      __syncwarp();
#pragma unroll
      for (int k = 0; k < C; ++k) dense[k] = slice[interleave_slot<C>(lane * C + k)];
    }
#pragma unroll
    for (int j = 0; j < C * V; ++j) planar[j % C].v[j / C] = dense[j / V].v[j % V];
#pragma unroll
    for (int c = 0; c < C; ++c)
      if (lane_on) *reinterpret_cast<Chunk*>(dst + c * plane_stride + place.template planar<V>(lane)) = planar[c];
    if constexpr (!kDirectLoads) __syncwarp();  // the next trip rewrites the slice
  }
}

template <typename T, int C, bool kPlanarIn, bool kEvictLast, bool kDirectLoads, bool kPackedLines = false>
__global__ void __launch_bounds__(kThreads)
interleave_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const InterleaveArgs args) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  static_assert(32 * V == NarrowShape<T>::kWide, "interleave_args takes the narrow kernel's warp tiles as chunks");
  using Chunk = Vec<T, V>;
  __shared__ Chunk stage[kInterleaveWarps][kInterleaveSlots<C>];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // Every warp of a block makes the same trips (host emulation makes __syncwarp block-wide).
  for (uint32_t base = blockIdx.x * kInterleaveWarps; base < args.total_chunks; base += gridDim.x * kInterleaveWarps) {
    const uint32_t w = base + warp;
    int vectors = 0;  // whole vectors of each line in this chunk (L is a multiple of V)
    if constexpr (kPackedLines) {
      // Lane l moves vector l % m of item (chunk's first) + l / m; lanes past the last item none.
      const int log2m = args.lanes_per_item_log2;
      PackedChunk place;
      place.lanes_log2 = log2m;
      if (w < args.total_chunks) {
        const int64_t first = static_cast<int64_t>(w) << (5 - log2m), item = first + (lane >> log2m);
        vectors = static_cast<int>(min(int64_t{32}, (args.items - first) << log2m));
        if (item < args.items) {
          int64_t in_off, out_off;
          args.batch.offsets(item, in_off, out_off);
          const int position = (lane & ((1 << log2m) - 1)) * V;
          place.planar_lane = (kPlanarIn ? in_off : out_off) + position;
          place.dense_item = kPlanarIn ? out_off : in_off;
        }
      }
      interleave_chunk<T, C, kPlanarIn, kEvictLast, kDirectLoads>(in, out, vectors, args.plane_stride, stage[warp], lane,
                                                                  place);
      continue;
    }
    const T* src = in;
    T* dst = out;
    if (w < args.total_chunks) {
      uint32_t item, chunk;
      args.by_chunks.divmod(w, item, chunk);
      int64_t in_off, out_off;
      args.batch.offsets(item, in_off, out_off);
      const int64_t p0 = static_cast<int64_t>(chunk) * 32 * V;
      const int64_t left = args.long_size - p0;
      vectors = left >= 32 * V ? 32 : static_cast<int>(left / V);
      src = in + in_off + (kPlanarIn ? p0 : p0 * C);
      dst = out + out_off + (kPlanarIn ? p0 * C : p0);
    }
    interleave_chunk<T, C, kPlanarIn, kEvictLast, kDirectLoads>(src, dst, vectors, args.plane_stride, stage[warp], lane);
  }
}

// Whether a narrow plan (make_narrow_args, which has checked the layout, the 16-byte alignment
// of both bases, the line stride and every batch stride) takes this kernel: C from 2 to
// interleave_max_c for the element size and direction, a long dim of whole vectors, elements of
// 1 to 8 bytes (two or more to a vector), and the switch.
inline bool wants_interleave(const NarrowArgs& narrow, int element_bytes, bool dense_in) {
  return interleave_enabled() && element_bytes <= 8 && narrow.n >= kInterleaveMinC &&
         narrow.n <= interleave_max_c(element_bytes, !dense_in) && narrow.wide % (16 / element_bytes) == 0;
}

// The same plan in this kernel's terms: the narrow kernel's warp tiles are this kernel's warp
// chunks (both 32 x 16 bytes of each line).
// With `packed` (wants_packed_lines) the chunks hold whole items instead (their lines are shorter
// than a chunk, so the narrow kernel's tiles are one per item).
inline InterleaveArgs interleave_args(const NarrowArgs& narrow, bool dense_in, int element_bytes, bool packed) {
  InterleaveArgs args;
  args.c = narrow.n;
  args.planar_in = !dense_in;
  args.long_size = narrow.wide;
  args.plane_stride = narrow.line_stride;
  args.total_chunks = narrow.total_tiles;
  args.chunks_per_item = narrow.by_tiles.divisor;
  args.by_chunks = narrow.by_tiles;
  args.batch = narrow.batch;
  if (packed) {
    const int64_t lanes_per_item = narrow.wide / (16 / element_bytes);
    args.lanes_per_item_log2 = 0;
    while ((int64_t{1} << args.lanes_per_item_log2) < lanes_per_item) ++args.lanes_per_item_log2;
    args.items = narrow.total_tiles;
    args.total_chunks = static_cast<uint32_t>(ceil_div(args.items, int64_t{32} >> args.lanes_per_item_log2));
  }
  return args;
}

}  // namespace torch_transpose
