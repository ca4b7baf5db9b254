// Transpose where one fast dim is narrow (2 to 16 elements) and packed on its side, and the
// other side walks N long lines: 4194304 x 16 and back, C = 3 in NCHW <-> NHWC, 1000000 x 7.
//
// The "dense" side holds rows of N elements back to back (element (w, n) at w * N + n); the
// "lines" side holds N lines of the wide dim, unit stride, each 16-byte aligned. A warp (or,
// from N = 7, a pair of warps: kNarrowPairsMinN) owns a warp tile: W = 32 * V consecutive wide
// positions (V = 16 / element bytes) times all N. It reads its side with 16-byte accesses,
// every load in flight before the first use, parks the tile in its own slice of shared memory
// (N lines of W), and writes the other side with 16-byte accesses. Only the dense side's
// shared-memory accesses are element-wise; no block barrier for single-warp tiles and no
// per-vector division (one per 16-byte chunk on the dense side, none on the lines side). The
// flat tile kernel (flat_tile_transpose.cuh), which serves every other narrow layout, reached
// 0.80-0.85 of copy on these, bound by its per-vector index math.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"

namespace torch_transpose {

constexpr int kNarrowMax = 16;   // widest narrow dim served: 4 warps x N x 528 bytes of shared memory stay under 48 KB
constexpr int kNarrowWarps = 4;  // warps per block; N = 16 needs 4 x 8.4 KB of shared memory
constexpr int kNarrowInFlight = 4;  // 16-byte loads in flight per lane

// TORCH_TRANSPOSE_NARROW_KERNEL=0 sends these layouts to the flat tile kernel instead (read
// once; for A/B timing runs).
inline bool narrow_kernel_enabled() {
  static const bool enabled = !env_switched_off("TORCH_TRANSPOSE_NARROW_KERNEL");
  return enabled;
}

template <typename T> struct NarrowShape {
  static constexpr int kV = sizeof(T) >= 16 ? 1 : 16 / static_cast<int>(sizeof(T));  // elements per 16 bytes
  static constexpr int kWide = 32 * kV;       // wide positions per warp tile
  static constexpr int kPitch = kWide + kV;   // shared line pitch: one 16-byte chunk of padding
};

struct NarrowArgs {
  int n;                    // the narrow dim's size N
  int64_t wide;             // the wide dim's size
  int64_t line_stride;      // lines side: elements between consecutive lines (a multiple of V)
  uint32_t total_tiles;     // batch items x warp tiles per item
  FastDivmod by_tiles;      // warp tile -> (batch item, tile within the item)
  FastDivmod by_n;          // dense element -> (wide position, narrow index)
  DeviceBatchIndexer batch;
};

// Warp pairs per tile (kParts = 2) for N >= kNarrowPairsMinN. H200, 2026-11-30, A/B in one call
// over three rounds (bench/results/h200-ab-session11.md), ratio to the same process's copy:
// 16x4194304 0.931 -> 0.968, 4194304x16 0.929 -> 0.947 (Triton's tile kernel: 0.98 and 0.96),
// 1000000x7 1.06 -> 1.10-1.15; but 4194304x3 0.96 -> 0.86 and 3x4194304 0.97 -> 0.84 (three
// lines split two and one between the warps, and a block barrier where a warp's was enough).
// For N = 16 the pairs lift residency (ncu: 6 blocks a SM by shared memory -> 8 by registers,
// 64 of them; warps active 34% -> 49%); N = 7 was not limited by shared memory and gained too.
// N = 4..6 and 8..15 were not timed: the threshold sits between the losing 3 and the winning 7.
// TORCH_TRANSPOSE_NARROW_PAIRS: 0 = one warp per tile, 1 = two (tests), unset = this rule.
inline Override narrow_pairs_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_NARROW_PAIRS");
  return setting;
}
constexpr int kNarrowPairsMinN = 7;

inline int narrow_warps_per_tile(int n) {
  return decide(narrow_pairs_override(), n >= kNarrowPairsMinN) ? 2 : 1;
}

// The barrier between a tile's load and store phases: the warp's own, or the block's when warps
// share tiles.
template <int kParts>
__device__ __forceinline__ void narrow_tile_barrier() {
  if constexpr (kParts == 1) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

// Lines side, global -> shared: lane l moves wide positions [l*V, l*V + V) of each line,
// kNarrowInFlight lines at a time (all of them unrolled cost 110-255 registers: 2-byte and
// 1-byte types spilled).
template <typename T, int kParts, bool kEvictLast>
__device__ __forceinline__ void narrow_lines_load(const T* __restrict__ src, const NarrowArgs& args, int valid,
                                                  T* lines, int lane, int part) {
  constexpr int V = NarrowShape<T>::kV, P = NarrowShape<T>::kPitch;
  using Chunk = Vec<T, V>;
  const bool whole = (lane + 1) * V <= valid;
  const int32_t stride = static_cast<int32_t>(args.line_stride);
  for (int i0 = part; i0 < args.n; i0 += kNarrowInFlight * kParts) {
    Chunk v[kNarrowInFlight];
#pragma unroll
    for (int u = 0; u < kNarrowInFlight; ++u) {
      const int i = i0 + u * kParts;
      if (i >= args.n) break;
      const T* line = src + i * stride + lane * V;
      if (whole) {
        v[u] = load_global<kEvictLast>(reinterpret_cast<const Chunk*>(line));
      } else {
        v[u] = Chunk{};
        for (int k = 0; k < V; ++k)
          if (lane * V + k < valid) v[u].v[k] = line[k];
      }
    }
#pragma unroll
    for (int u = 0; u < kNarrowInFlight; ++u) {
      const int i = i0 + u * kParts;
      if (i >= args.n) break;
      *reinterpret_cast<Chunk*>(lines + i * P + lane * V) = v[u];
    }
  }
}

// Lines side, shared -> global.
template <typename T, int kParts>
__device__ __forceinline__ void narrow_lines_store(T* __restrict__ dst, const NarrowArgs& args, int valid,
                                                   const T* lines, int lane, int part) {
  constexpr int V = NarrowShape<T>::kV, P = NarrowShape<T>::kPitch;
  using Chunk = Vec<T, V>;
  const bool whole = (lane + 1) * V <= valid;
  const int32_t stride = static_cast<int32_t>(args.line_stride);
  for (int i = part; i < args.n; i += kParts) {
    const Chunk v = *reinterpret_cast<const Chunk*>(lines + i * P + lane * V);
    T* line = dst + i * stride + lane * V;
    if (whole) {
      *reinterpret_cast<Chunk*>(line) = v;
    } else {
      for (int k = 0; k < V; ++k)
        if (lane * V + k < valid) line[k] = v.v[k];
    }
  }
}

// Dense side, global -> shared: the tile is valid * N consecutive elements; lane l moves
// 16-byte chunks q * 32 + l, kNarrowInFlight at a time, and scatters each element (w, n) to
// line n, position w.
template <typename T, int kParts, bool kEvictLast>
__device__ __forceinline__ void narrow_dense_load(const T* __restrict__ src, const NarrowArgs& args, int valid,
                                                  T* lines, int lane, int part) {
  constexpr int V = NarrowShape<T>::kV, P = NarrowShape<T>::kPitch;
  using Chunk = Vec<T, V>;
  const int total = valid * args.n;
  for (int q0 = part; q0 < args.n; q0 += kNarrowInFlight * kParts) {
    Chunk v[kNarrowInFlight];
#pragma unroll
    for (int u = 0; u < kNarrowInFlight; ++u) {
      const int e0 = ((q0 + u * kParts) * 32 + lane) * V;
      if (e0 + V <= total) {
        v[u] = load_global<kEvictLast>(reinterpret_cast<const Chunk*>(src + e0));
      } else {
        v[u] = Chunk{};
        for (int k = 0; k < V; ++k)
          if (e0 + k < total) v[u].v[k] = src[e0 + k];
      }
    }
#pragma unroll
    for (int u = 0; u < kNarrowInFlight; ++u) {
      const int e0 = ((q0 + u * kParts) * 32 + lane) * V;
      if (e0 >= total) break;
      uint32_t w, n;
      args.by_n.divmod(static_cast<uint32_t>(e0), w, n);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        if (e0 + k < total) lines[n * P + w] = v[u].v[k];
        if (++n == static_cast<uint32_t>(args.n)) {
          n = 0;
          ++w;
        }
      }
    }
  }
}

// Dense side, shared -> global: gathers each 16-byte chunk from the lines, then stores it.
template <typename T, int kParts>
__device__ __forceinline__ void narrow_dense_store(T* __restrict__ dst, const NarrowArgs& args, int valid,
                                                   const T* lines, int lane, int part) {
  constexpr int V = NarrowShape<T>::kV, P = NarrowShape<T>::kPitch;
  using Chunk = Vec<T, V>;
  const int total = valid * args.n;
  for (int q = part; q < args.n; q += kParts) {
    const int e0 = (q * 32 + lane) * V;
    if (e0 >= total) break;
    uint32_t w, n;
    args.by_n.divmod(static_cast<uint32_t>(e0), w, n);
    Chunk c;
    const bool whole = e0 + V <= total;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (whole || e0 + k < total) c.v[k] = lines[n * P + w];
      if (++n == static_cast<uint32_t>(args.n)) {
        n = 0;
        ++w;
      }
    }
    if (whole) {
      *reinterpret_cast<Chunk*>(dst + e0) = c;
    } else {
      for (int k = 0; k < V; ++k)
        if (e0 + k < total) dst[e0 + k] = c.v[k];
    }
  }
}

// kDenseIn: the input is the dense side (4194304 x 16 -> 16 x 4194304, NHWC -> NCHW);
// otherwise the output is (NCHW -> NHWC). kParts: warps per warp tile. With 1, each warp owns a
// tile and syncs with __syncwarp; with 2, warp pairs share one (each takes every other line or
// chunk) and the block syncs, so a block of kNarrowWarps holds half the tiles and half the
// shared memory: more warps fit an SM where shared memory is what limits them (N = 16).
// Every thread of a block runs the same number of loop trips, so the barriers are uniform (the
// host emulation makes __syncwarp block-wide).
template <typename T, bool kDenseIn, int kParts, bool kEvictLast>
__global__ void __launch_bounds__(kNarrowWarps * 32)
narrow_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const NarrowArgs args) {
  constexpr int W = NarrowShape<T>::kWide;
  constexpr int kTilesPerBlock = kNarrowWarps / kParts;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int slot = warp / kParts, part = warp % kParts;
  T* lines = reinterpret_cast<T*>(dynamic_smem()) + slot * args.n * NarrowShape<T>::kPitch;
  for (uint32_t base = blockIdx.x * kTilesPerBlock; base < args.total_tiles; base += gridDim.x * kTilesPerBlock) {
    const uint32_t tile = base + slot;
    const bool active = tile < args.total_tiles;
    const T* src = nullptr;
    T* dst = nullptr;
    int valid = 0;
    if (active) {
      uint32_t item, wt;
      args.by_tiles.divmod(tile, item, wt);
      int64_t in_off, out_off;
      args.batch.offsets(item, in_off, out_off);
      const int64_t w0 = static_cast<int64_t>(wt) * W;
      valid = static_cast<int>(min(static_cast<int64_t>(W), args.wide - w0));
      src = in + in_off + (kDenseIn ? w0 * args.n : w0);
      dst = out + out_off + (kDenseIn ? w0 : w0 * args.n);
      if (kDenseIn) {
        narrow_dense_load<T, kParts, kEvictLast>(src, args, valid, lines, lane, part);
      } else {
        narrow_lines_load<T, kParts, kEvictLast>(src, args, valid, lines, lane, part);
      }
    }
    narrow_tile_barrier<kParts>();
    if (active) {
      if (kDenseIn) {
        narrow_lines_store<T, kParts>(dst, args, valid, lines, lane, part);
      } else {
        narrow_dense_store<T, kParts>(dst, args, valid, lines, lane, part);
      }
    }
    narrow_tile_barrier<kParts>();  // the next tile reuses the slice
  }
}

// Whether the plan fits this kernel, and its arguments. Needs 32-bit in-tile offsets, one dim
// of 2..max_n elements packed with unit stride on its side (the other fast dim at least 32; max_n
// is this kernel's 16 unless the caller asks for narrow word tiles' plans), the
// other side's lines 16-byte aligned, 16-byte aligned bases and batch strides on both sides.
inline bool make_narrow_args(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address, NarrowArgs& args,
                             bool& dense_in, int max_n = kNarrowMax) {
  if (!narrow_kernel_enabled() || plan.kind != PlanKind::Transpose || plan.needs_64bit_index) return false;
  const FastDims f = FastDims::from_plan(plan);
  dense_in = f.size_a < f.size_b;
  const int64_t n = dense_in ? f.size_a : f.size_b, wide = dense_in ? f.size_b : f.size_a;
  if (n < 2 || n > max_n || wide < 32) return false;
  const int e = plan.element_bytes, v = e >= 16 ? 1 : 16 / e;
  // dense side: unit narrow stride, rows of exactly N; lines side: unit wide stride.
  const bool layout_ok = dense_in ? (f.in_sa == 1 && f.in_sb == n && f.out_sb == 1)
                                  : (f.out_sb == 1 && f.out_sa == n && f.in_sa == 1);
  const int64_t line_stride = dense_in ? f.out_sa : f.in_sb;
  if (!layout_ok || line_stride % v != 0 || in_address % 16 != 0 || out_address % 16 != 0) return false;
  if (!plan.batch_strides_multiple_of(plan.in_strides, v) || !plan.batch_strides_multiple_of(plan.out_strides, v))
    return false;
  if (wide * n >= (int64_t{1} << 31)) return false;
  // The indexer's divisors cost a few hundred host instructions: built only once nothing else refuses.
  args.batch.assign(plan);
  const int64_t tiles_per_item = ceil_div(wide, 32 * v);
  const int64_t total = args.batch.count() * tiles_per_item;
  if (!args.batch.fits_32 || total >= (int64_t{1} << 31)) return false;
  args.n = static_cast<int>(n);
  args.wide = wide;
  args.line_stride = line_stride;
  args.total_tiles = static_cast<uint32_t>(total);
  args.by_tiles = FastDivmod(static_cast<uint32_t>(tiles_per_item));
  args.by_n = FastDivmod(static_cast<uint32_t>(n));
  return true;
}

template <typename T>
size_t narrow_smem_bytes(const NarrowArgs& args, int warps_per_tile) {
  return static_cast<size_t>(kNarrowWarps / warps_per_tile) * args.n * NarrowShape<T>::kPitch * sizeof(T);
}

}  // namespace torch_transpose
