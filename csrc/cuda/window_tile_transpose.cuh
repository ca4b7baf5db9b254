// Square-tile transpose for plans whose rows cannot all take 16-byte vectors (odd shapes such
// as 8191 x 8193, `x[1:, 1:]`, stepped views, and 4-byte rows of 8-byte vectors such as 8190
// floats) but whose output fast dim has unit stride.
//
// The plain scalar tile kernel writes each output row's share of a tile, kTile elements from
// b0, with 4-byte stores.
#pragma once

#include <limits>

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"

namespace torch_transpose {

// TORCH_TRANSPOSE_KERNELS=window_tile=0 sends these plans to the scalar tile kernel instead (read once;
inline bool window_tile_enabled() {
  const bool enabled = !switch_off("window_tile");
  return enabled;
}

inline bool window_for_half_vectors() {
  const bool on = !switch_off("window_half_vectors");
  return on;
}

// 64 x 64 tiles for 4- and 8-byte elements: each output row's window is 256 or 512 bytes.
// 1- and 2-byte elements would need 64-128 loads in flight per thread for the extra rows;
// they keep the scalar tile kernel.
template <int E> struct WindowShape {
  static_assert(E == 4 || E == 8, "window tiles are built for 4- and 8-byte elements");
  static constexpr int kTile = 64;
  static constexpr int kV = 16 / E;      // elements per 16-byte store
  static constexpr int kShift = 32 / E;  // window alignment: one 32-byte sector, in elements
  static constexpr int kPitch = kTile + 1;  // odd pitch: the load phase's row writes hit distinct banks
};

// Loads rows j = ly, ly + kLy, ... (< kRows) of a tile from col[(j - shift) * stride], each
// row index clamped into [j_lo, j_hi), all loads issued before the first shared store. evict_last
// loads ask L2 for 256-byte fills (load_global's kFetch256 says why and what it gained).
template <int kRows, int kLy, bool kEvictLast, typename T, typename Index>
__device__ __forceinline__ void load_rows(T* tile, const T* __restrict__ col, Index stride, int shift, int j_lo,
                                          int j_hi, int ly, int lx, int pitch) {
  constexpr int kLoads = kRows / kLy;
  T v[kLoads];
#pragma unroll
  for (int i = 0; i < kLoads; ++i) {
    const Index row = static_cast<Index>(min(max(ly + i * kLy, j_lo), j_hi - 1) - shift);
    v[i] = load_global<kEvictLast, /*kFetch256=*/kEvictLast>(col + row * stride);
  }
#pragma unroll
  for (int i = 0; i < kLoads; ++i) tile[(ly + i * kLy) * pitch + lx] = v[i];
}

// A window tile's bounds, tile-relative as 32-bit ints: loaded input rows j = b - (b0 - kShift)
// must lie in [j_lo, j_hi), output window offsets o = b - b0 in [o_lo, o_hi), output rows
// (a - a0) below a_here. Shared by the window and realign window kernels.
struct WindowTileBounds {
  int j_lo, j_hi, o_lo, o_hi, a_here;

  // P: int64_t, or int32_t where the caller has proven every position below 2^31 (lean tiles).
  template <int kTileA, int kTileB, int kShift, typename P>
  __device__ __forceinline__ static WindowTileBounds at(P a0, P b0, P size_a, P size_b) {
    constexpr int kRows = kTileB + kShift;
    WindowTileBounds w;
    w.j_lo = b0 >= kShift ? 0 : static_cast<int>(kShift - b0);
    w.j_hi = static_cast<int>(min(static_cast<P>(kRows), size_b - b0 + kShift));
    w.o_lo = -static_cast<int>(min(b0, static_cast<P>(kShift)));
    w.o_hi = static_cast<int>(min(static_cast<P>(kTileB), size_b - b0));
    w.a_here = static_cast<int>(min(static_cast<P>(kTileA), size_a - a0));
    return w;
  }

  // Whether the tile lies wholly inside the tensor (no clamps needed).
  template <int kTileA, int kRows>
  __device__ __forceinline__ bool interior() const {
    return j_lo == 0 && j_hi == kRows && a_here == kTileA;
  }
};

// The store phase of both window kernels: lane sx of output rows r = sy, sy + kSy, ...
template <typename T, int kTileA, int kSy, int kV, int kShift, typename Index, bool kShareShift = false, typename P,
          typename ElementsAt>
__device__ __forceinline__ void store_window_rows(T* dst, P a0, P b0, Index out_sa, const WindowTileBounds w,
                                                  int sx, int sy, ElementsAt&& elements_at) {
  static_assert(kTileA % kSy == 0, "output rows must split evenly over the passes");
  // A lane's rows lie kSy rows apart. Where kShift divides kSy, that is a whole number of sectors
  // whatever the row stride, so they all share one shift, which kShareShift works out once here (a
  // power of two: 32-bit unsigned arithmetic keeps its low bits); else (1-byte realign tiles:
  // kShift 32, kSy 16) each row works out its own. ptxas could not see that: the shared shift
  // cut the 2-byte realign kernel's stores from about 50 to 27 instructions per row.
  constexpr bool kOneShift = kShareShift && kShift > 0 && kSy % kShift == 0;
  static_assert(kShift == 0 || (kShift & (kShift - 1)) == 0, "the sector grid in elements is a power of two");
  int lane_shift = 0;
  if constexpr (kOneShift) {
    const uint32_t first = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(dst) / sizeof(T)) +
                           static_cast<uint32_t>(a0 + sy) * static_cast<uint32_t>(out_sa) + static_cast<uint32_t>(b0);
    lane_shift = static_cast<int>(first & (kShift - 1));  // element b0 of the lane's first row, on the grid
  }
#pragma unroll
  for (int i = 0; i < kTileA / kSy; ++i) {
    const int r = sy + i * kSy;
    if (r >= w.a_here) continue;
    T* row = dst + static_cast<Index>(a0 + r) * out_sa + static_cast<Index>(b0);  // element b0 of output row a0 + r
    int shift = lane_shift;
    if constexpr (kShift > 0 && !kOneShift) shift = static_cast<int>((reinterpret_cast<uintptr_t>(row) / sizeof(T)) % kShift);
    const int o = sx * kV - shift;  // this vector's first element, relative to b0
    const auto element = elements_at(r, o);
    if (o >= w.o_lo && o + kV <= w.o_hi) {
      Vec<T, kV> v;
#pragma unroll
      for (int k = 0; k < kV; ++k) v.v[k] = element(k);
      // Through __stwb: a plain Vec or uint4 assignment came out of nvcc 13.0 as kV element
      // stores (st.global.u32 in the PTX), which these kernels exist to avoid.
      __stwb(reinterpret_cast<uint4*>(row + o), *reinterpret_cast<const uint4*>(&v));
    } else {  // a ragged row end
#pragma unroll
      for (int k = 0; k < kV; ++k)
        if (o + k >= w.o_lo && o + k < w.o_hi) row[o + k] = element(k);
    }
  }
}

// One window tile at (a0, b0): load input rows b0 - kShift .. b0 + kTile - 1 coalesced along a,
// then store each output row's shifted window. P is the position type (WindowTileBounds).
// Output rows: out_sb == 1 and every row start is element aligned (the plan's contract).
template <typename T, bool kShifted, typename Index, bool kEvictLast = false, typename P>
__device__ __forceinline__ void window_tile(const T* __restrict__ src, T* __restrict__ dst, P a0, P b0, P size_a, P size_b,
                                            Index in_sa, Index in_sb, Index out_sa, T* tile) {
  using Shape = WindowShape<sizeof(T)>;
  constexpr int kTile = Shape::kTile, kV = Shape::kV, kPitch = Shape::kPitch;
  constexpr int kShift = kShifted ? Shape::kShift : 0;
  constexpr int kRows = kTile + kShift;  // input rows (b) per tile
  constexpr int kLy = kThreads / kTile;  // load: 64 threads along a, kLy rows per pass
  constexpr int kSx = kTile / kV;        // store: threads (vectors) per output row
  constexpr int kSy = kThreads / kSx;    // output rows per pass
  static_assert(kRows % kLy == 0 && kTile % kSy == 0, "tile must split evenly over the block");
  const int lx = threadIdx.x % kTile, ly = threadIdx.x / kTile;
  const int sx = threadIdx.x % kSx, sy = threadIdx.x / kSx;

  const WindowTileBounds w = WindowTileBounds::at<kTile, kTile, kShift>(a0, b0, size_a, size_b);
  // In edge tiles, rows and columns outside the tensor are clamped to its last row or column
  // rather than masked: the loads then need no predicates (which cost registers, and registers
  // cost loads in flight), every address is inside the tensor (the 32-bit index is proven for
  // those alone), and the duplicates land in tile cells that no store reads. Interior tiles skip
  // the clamps, so their addresses are one base plus constant multiples of a stride.
  const T* col = src + static_cast<Index>(a0 + min(lx, w.a_here - 1)) * in_sa + static_cast<Index>(b0) * in_sb;
  if (w.interior<kTile, kRows>()) {
    load_rows<kRows, kLy, kEvictLast>(tile, col, in_sb, kShift, 0, kRows, ly, lx, kPitch);
  } else {
    load_rows<kRows, kLy, kEvictLast>(tile, col, in_sb, kShift, w.j_lo, w.j_hi, ly, lx, kPitch);
  }
  __syncthreads();

  // Store: element k of a vector at window offset o sits in tile row kShift + o + k, column r.
  store_window_rows<T, kTile, kSy, kV, kShift, Index>(dst, a0, b0, out_sa, w, sx, sy, [&](int r, int o) {
    const T* column = tile + (kShift + o) * kPitch + r;  // the vector's elements, kPitch apart
    return [column](int k) { return column[k * Shape::kPitch]; };
  });
}

// Shared memory of one window tile: tile[(b - (b0 - kShift)) * kPitch + (a - a0)].
template <typename T, bool kShifted> constexpr int window_tile_elems() {
  using Shape = WindowShape<sizeof(T)>;
  return (Shape::kTile + (kShifted ? Shape::kShift : 0)) * Shape::kPitch;
}

template <typename T, bool kShifted, typename Index>
__global__ void __launch_bounds__(kThreads, 5)
window_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const SquareTileArgs args) {
  constexpr int kTile = WindowShape<sizeof(T)>::kTile;
  __shared__ T tile[window_tile_elems<T, kShifted>()];
  const Index in_sa = static_cast<Index>(args.in_sa), in_sb = static_cast<Index>(args.in_sb);
  const Index out_sa = static_cast<Index>(args.out_sa);
  for (int64_t t = blockIdx.x; t < args.order.total; t += gridDim.x) {
    const TileSpot spot = args.locate(t);
    window_tile<T, kShifted, Index>(in + spot.in_off, out + spot.out_off, spot.ta * kTile, spot.tb * kTile, args.size_a,
                                    args.size_b, in_sa, in_sb, out_sa, tile);
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

// ---- host side ----------------------------------------------------------------------------------

// Whether every output row starts on the 32-byte sector grid, so that the windows need no shift:
// the output base and every output stride except the unit fast one are multiples of kShift.
inline bool window_rows_on_sector_grid(const LayoutPlan& plan, uintptr_t out_address, int shift_elems) {
  if (out_address % (static_cast<uintptr_t>(shift_elems) * plan.element_bytes) != 0) return false;
  for (int d = 0; d < plan.rank; ++d)
    if (d != plan.out_fast_dim && plan.out_strides[d] % shift_elems != 0) return false;
  return true;
}

// Whether 32-bit offsets hold for every pointer the kernel forms. It forms the input column
// pointer and the output row pointer at b0, which in the last tiles along b lies up to
// kTile + kShift elements past the tensor's end; the plan's 32-bit proof covers elements inside
// the tensor only, so the kernel needs that much margin (else the scalar tile kernel runs).
inline bool window_offsets_fit_32(const LayoutPlan& plan, int tile, int shift_elems) {
  const FastDims f = FastDims::from_plan(plan);
  const int64_t past_end = f.size_b - 1 + tile + shift_elems;
  const int64_t limit = std::numeric_limits<int32_t>::max();
  return !plan.needs_64bit_index && (f.size_a - 1) * f.in_sa + past_end * f.in_sb < limit &&
         (f.size_a - 1) * f.out_sa + past_end * f.out_sb < limit;
}

}  // namespace torch_transpose
