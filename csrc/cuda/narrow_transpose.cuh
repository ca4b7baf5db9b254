#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"

namespace torch_transpose {

constexpr int kNarrowMax = 16;   // widest narrow dim served: 4 warps x N x 528 bytes of shared memory stay under 48 KB
constexpr int kNarrowWarps = 4;  // warps per block; N = 16 needs 4 x 8.4 KB of shared memory
constexpr int kNarrowInFlight = 4;  // 16-byte loads in flight per lane

inline bool narrow_kernel_enabled() {
  const bool enabled = !switch_off("narrow_kernel");
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

inline Override narrow_pairs_override() {
  const Override setting = switch_override("narrow_pairs");
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
