#pragma once

#include <algorithm>

#include "../kernel_switches.h"
#include "cuda_common.cuh"

namespace torch_transpose {

// Bytes of tile per block (the batch item offsets come on top). 16 KB by default;
// flat_tile_bytes (4096 to 40960) overrides it, read once, for tuning runs.
inline int64_t flat_tile_bytes() {
  const int64_t bytes = switch_int_in_range("flat_tile_bytes", 4096, 40960, 16384);
  return bytes;
}
constexpr int kFlatMaxGroup = 256;  // batch items per tile (their offsets live in shared memory)

// How one side walks the tile. "inner" is the side's fast dim (a for the load, b for the
// store), "outer" the other tile dim.
struct FlatSide {
  int64_t s_inner, s_outer;    // strides of inner and outer on this side
  int inner_len, outer_len;    // the tile's extents
  int run_len;                 // inner_len (line mode) or inner_len * outer_len (dense mode)
  bool dense;
  FastDivmod by_inner;         // a position in the group's runs -> (outer, inner)
  FastDivmod by_run_vectors;   // a vector index in the group -> (run, vector in run)
  FastDivmod by_group_vectors; // a vector index in the tile -> (group item, vector in group)
  uint32_t total_vectors;      // vectors per tile (group items x runs x vectors per run)
};

struct FlatTileArgs : FastDims {
  int tile_a, tile_b, group, pitch;  // tile extent along a and b, batch items per tile, row pitch
  int64_t tiles_a, tiles_b, groups, total_tiles, batch_count;
  FlatSide load, store;
  DeviceBatchIndexer batch;
};

// Where the k-th vector of a tile side starts, and whether all of its V elements are inside
// the tile's share of the problem (then it moves as one 16-byte access).
struct VectorSpot {
  int g = -1;                 // batch item in the group; -1: no such vector
  int outer = 0, inner = 0;   // tile coordinates of its first element
  uint32_t pos = 0;           // its position in its run
  bool whole = false;
};

template <int V>
__device__ __forceinline__ VectorSpot locate_vector(const FlatSide& side, uint32_t k, int groups_here, int inner_here,
                                                    int outer_here) {
  VectorSpot spot;
  uint32_t g, rest, run, vec, outer, inner;
  side.by_group_vectors.divmod(k, g, rest);
  side.by_run_vectors.divmod(rest, run, vec);
  spot.pos = vec * V;
  if (side.dense) {
    side.by_inner.divmod(spot.pos, outer, inner);  // one run per group item
  } else {
    outer = run;  // one run per line
    inner = spot.pos;
  }
  if (k >= side.total_vectors || static_cast<int>(g) >= groups_here) return spot;
  spot.g = static_cast<int>(g);
  spot.outer = static_cast<int>(outer);
  spot.inner = static_cast<int>(inner);
  // Dense runs are linear in (outer, inner) and span the whole inner dim; line runs are one
  // line of inner_here valid elements.
  spot.whole = V > 1 && (side.dense ? spot.pos + V <= static_cast<uint32_t>(outer_here * side.inner_len)
                                    : spot.outer < outer_here && spot.inner + V <= inner_here);
  return spot;
}

// Calls f(j, outer, inner) for each element j of a vector that lies inside the tile's share.
template <int V, typename F>
__device__ __forceinline__ void for_each_element(const FlatSide& side, const VectorSpot& spot, int inner_here,
                                                 int outer_here, F&& f) {
  int o = spot.outer, i = spot.inner;
  if (spot.whole && !side.dense) {
#pragma unroll
    for (int j = 0; j < V; ++j) f(j, o, i + j);
    return;
  }
  if (spot.whole) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      f(j, o, i);
      if (++i == side.inner_len) {
        i = 0;
        ++o;
      }
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if (spot.pos + j < static_cast<uint32_t>(side.run_len) && o < outer_here && i < inner_here) f(j, o, i);
    if (++i == side.inner_len) {
      i = 0;
      ++o;
    }
  }
}

template <typename T, int V, typename Index, bool kEvictLast>
__device__ __forceinline__ void flat_tile_load(const FlatTileArgs& args, const T* __restrict__ in,
                                               const int64_t* group_offsets, T* tile, int groups_here, int a_here,
                                               int b_here) {
  constexpr int kInFlight = V > 1 ? 4 : 8;
  const FlatSide& side = args.load;
  const Index s_inner = static_cast<Index>(side.s_inner), s_outer = static_cast<Index>(side.s_outer);
  for (uint32_t base = 0; base < side.total_vectors; base += kThreads * kInFlight) {
    Vec<T, V> v[kInFlight];
    VectorSpot spot[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      spot[u] = locate_vector<V>(side, base + u * kThreads + threadIdx.x, groups_here, a_here, b_here);
      if (spot[u].g < 0) continue;
      const T* group = in + group_offsets[spot[u].g];
      if (spot[u].whole) {
        v[u] = load_global<kEvictLast>(
            reinterpret_cast<const Vec<T, V>*>(group + static_cast<Index>(spot[u].outer) * s_outer + spot[u].inner));
      } else {
        for_each_element<V>(side, spot[u], a_here, b_here, [&](int j, int o, int i) {
          v[u].v[j] = group[static_cast<Index>(o) * s_outer + static_cast<Index>(i) * s_inner];
        });
      }
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      if (spot[u].g < 0) continue;
      const int row0 = spot[u].g * args.tile_b;
      for_each_element<V>(side, spot[u], a_here, b_here,
                          [&](int j, int o, int i) { tile[(row0 + o) * args.pitch + i] = v[u].v[j]; });
    }
  }
}

template <typename T, int V, typename Index>
__device__ __forceinline__ void flat_tile_store(const FlatTileArgs& args, T* __restrict__ out,
                                                const int64_t* group_offsets, const T* tile, int groups_here,
                                                int a_here, int b_here) {
  const FlatSide& side = args.store;
  const Index s_inner = static_cast<Index>(side.s_inner), s_outer = static_cast<Index>(side.s_outer);
  for (uint32_t k = threadIdx.x; k < side.total_vectors; k += kThreads) {
    const VectorSpot spot = locate_vector<V>(side, k, groups_here, b_here, a_here);
    if (spot.g < 0) continue;
    const int row0 = spot.g * args.tile_b;
    T* group = out + group_offsets[spot.g];
    Vec<T, V> w;
    for_each_element<V>(side, spot, b_here, a_here,
                        [&](int j, int o, int i) { w.v[j] = tile[(row0 + i) * args.pitch + o]; });
    if (spot.whole) {
      *reinterpret_cast<Vec<T, V>*>(group + static_cast<Index>(spot.outer) * s_outer + spot.inner) = w;
    } else {
      for_each_element<V>(side, spot, b_here, a_here, [&](int j, int o, int i) {
        group[static_cast<Index>(o) * s_outer + static_cast<Index>(i) * s_inner] = w.v[j];
      });
    }
  }
}

template <typename T, int VIN, int VOUT, typename Index, bool kEvictLast>
__global__ void __launch_bounds__(kThreads)
flat_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const FlatTileArgs args) {
  int64_t* in_offsets = reinterpret_cast<int64_t*>(dynamic_smem());
  int64_t* out_offsets = in_offsets + kFlatMaxGroup;
  T* tile = reinterpret_cast<T*>(out_offsets + kFlatMaxGroup);
  const int64_t batch_count = args.batch_count;

  for (int64_t t = blockIdx.x; t < args.total_tiles; t += gridDim.x) {
    const int64_t tb = t % args.tiles_b;
    const int64_t rest = t / args.tiles_b;
    const int64_t ta = rest % args.tiles_a;
    const int64_t g0 = (rest / args.tiles_a) * args.group;
    const int groups_here = static_cast<int>(min(static_cast<int64_t>(args.group), batch_count - g0));
    const int64_t a0 = ta * args.tile_a, b0 = tb * args.tile_b;
    // Each batch item's offset, with the tile's origin folded in.
    for (int g = threadIdx.x; g < groups_here; g += kThreads) {
      int64_t in_off, out_off;
      args.batch.offsets(g0 + g, in_off, out_off);
      in_offsets[g] = in_off + a0 * args.in_sa + b0 * args.in_sb;
      out_offsets[g] = out_off + a0 * args.out_sa + b0 * args.out_sb;
    }
    __syncthreads();
    const int a_here = static_cast<int>(min(static_cast<int64_t>(args.tile_a), args.size_a - a0));
    const int b_here = static_cast<int>(min(static_cast<int64_t>(args.tile_b), args.size_b - b0));
    flat_tile_load<T, VIN, Index, kEvictLast>(args, in, in_offsets, tile, groups_here, a_here, b_here);
    __syncthreads();
    flat_tile_store<T, VOUT, Index>(args, out, out_offsets, tile, groups_here, a_here, b_here);
    __syncthreads();  // the next tile reuses the shared buffers
  }
}

// ---- host side: tile shape, side walks and their vector widths ---------------------------------

namespace flat_tile_detail {

// The widest vector (in elements, at most 16 bytes) one side can use: unit stride on its fast
// dim, and every run start aligned: the base address, each batch stride, the step between
// tiles and (in line mode) the step between lines.
inline int side_vector_elems(const LayoutPlan& plan, const int64_t* strides, uintptr_t address,
                             int64_t fast_tile_step, int64_t other_tile_step, int64_t s_inner, int64_t s_outer,
                             bool dense) {
  if (s_inner != 1) return 1;
  for (int v = 16 / plan.element_bytes; v > 1; v /= 2) {
    const bool ok = address % (static_cast<uintptr_t>(v) * plan.element_bytes) == 0 && fast_tile_step % v == 0 &&
                    other_tile_step % v == 0 && (dense || s_outer % v == 0) && plan.batch_strides_multiple_of(strides, v);
    if (ok) return v;
  }
  return 1;
}

// Dense: the tile holds the whole inner dim and lines follow each other without a gap.
inline bool is_dense(int64_t s_inner, int64_t s_outer, int inner_len, int64_t inner_size) {
  return s_inner == 1 && inner_len == inner_size && s_outer == inner_size;
}

inline FlatSide make_side(int64_t s_inner, int64_t s_outer, int inner_len, int outer_len, int64_t inner_size,
                          int group, int vector_elems) {
  FlatSide side;
  side.s_inner = s_inner;
  side.s_outer = s_outer;
  side.inner_len = inner_len;
  side.outer_len = outer_len;
  side.dense = is_dense(s_inner, s_outer, inner_len, inner_size);
  side.run_len = side.dense ? inner_len * outer_len : inner_len;
  const int runs = side.dense ? 1 : outer_len;
  const uint32_t run_vectors = static_cast<uint32_t>(ceil_div(side.run_len, vector_elems));
  side.by_inner = FastDivmod(static_cast<uint32_t>(inner_len));
  side.by_run_vectors = FastDivmod(run_vectors);
  side.by_group_vectors = FastDivmod(run_vectors * runs);
  side.total_vectors = run_vectors * runs * group;
  return side;
}

}  // namespace flat_tile_detail

// Picks the tile (the narrow dim whole, the other as long as the byte budget allows, a multiple
// of 32 elements, then as many batch items as still fit) and each side's walk. Each side's
// vector width goes in *_vector_elems: 16 bytes or 1 element (the kernels are instantiated for
// those two only).
inline FlatTileArgs make_flat_tile_args(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address,
                                        int& load_vector_elems, int& store_vector_elems) {
  using namespace flat_tile_detail;
  FlatTileArgs args;
  static_cast<FastDims&>(args) = FastDims::from_plan(plan);
  const int64_t capacity = flat_tile_bytes() / plan.element_bytes;
  const int64_t narrow = std::min(args.size_a, args.size_b);
  const int64_t wide_cap = std::max<int64_t>(32, (capacity / narrow) / 32 * 32);
  if (args.size_a <= args.size_b) {
    args.tile_a = static_cast<int>(args.size_a);
    args.tile_b = static_cast<int>(std::min(args.size_b, wide_cap));
  } else {
    args.tile_b = static_cast<int>(args.size_b);
    args.tile_a = static_cast<int>(std::min(args.size_a, wide_cap));
  }
  args.batch.assign(plan);
  args.batch_count = args.batch.count();
  const int64_t per_tile = static_cast<int64_t>(args.tile_a) * args.tile_b;
  args.group = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({kFlatMaxGroup, capacity / per_tile, args.batch_count})));
  args.pitch = args.tile_a + (args.tile_a % 2 == 0 ? 1 : 0);  // odd pitch: column reads spread over banks
  args.tiles_a = ceil_div(args.size_a, args.tile_a);
  args.tiles_b = ceil_div(args.size_b, args.tile_b);
  args.groups = ceil_div(args.batch_count, args.group);
  args.total_tiles = args.groups * args.tiles_a * args.tiles_b;

  const int full = 16 / plan.element_bytes;
  auto widest = [&](int v) { return v == full ? full : 1; };
  // Steps between tiles along a and b, in elements of each side (0 when there is one tile).
  const int64_t step_a = args.tiles_a > 1 ? args.tile_a : 0, step_b = args.tiles_b > 1 ? args.tile_b : 0;
  const bool load_dense = is_dense(args.in_sa, args.in_sb, args.tile_a, args.size_a);
  load_vector_elems = plan.needs_64bit_index ? 1 : widest(side_vector_elems(plan, plan.in_strides, in_address,
                                                                               step_a * args.in_sa, step_b * args.in_sb,
                                                                               args.in_sa, args.in_sb, load_dense));
  const bool store_dense = is_dense(args.out_sb, args.out_sa, args.tile_b, args.size_b);
  store_vector_elems = plan.needs_64bit_index ? 1 : widest(side_vector_elems(plan, plan.out_strides, out_address,
                                                                                step_b * args.out_sb, step_a * args.out_sa,
                                                                                args.out_sb, args.out_sa, store_dense));
  args.load = make_side(args.in_sa, args.in_sb, args.tile_a, args.tile_b, args.size_a, args.group, load_vector_elems);
  args.store = make_side(args.out_sb, args.out_sa, args.tile_b, args.tile_a, args.size_b, args.group, store_vector_elems);
  return args;
}

inline size_t flat_tile_smem_bytes(const FlatTileArgs& args, int element_bytes) {
  return 2 * kFlatMaxGroup * sizeof(int64_t) +
         static_cast<size_t>(args.group) * args.tile_b * args.pitch * element_bytes;
}

}  // namespace torch_transpose
