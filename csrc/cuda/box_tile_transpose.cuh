// Transpose of small fast dims through a three-dim tile: all of a (the input's fast dim), all of
// b (the output's) and a chunk of C items of one batch dim c, chosen so that c continues a
// contiguous run on each side where it can. The cases this is for:
//   * the 5-D permute (4,2,0,3,1) of 20x30x40x50x60: a = 60, b = 30, and the dim of 50 sits
//     right after a in the input (stride 60) and right after b in the output (stride 30), so
//     with C = 2 the input moves runs of 120 elements and the output runs of 60, where the flat
//     tile kernel moved 60 and 30 (the output's not even 16-byte aligned);
//   * batches of small matrices (65536 x 8 x 8): a, b and the batch dim are one contiguous run
//     on both sides, so a tile of 64 matrices is one 16 KB run in and one out.
#pragma once

#include <algorithm>
#include <limits>
#include <numeric>  // std::lcm

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "flat_tile_transpose.cuh"  // flat_tile_bytes(): both kernels share the tile budget

namespace torch_transpose {

inline bool box_tile_enabled() {
  const bool enabled = !switch_off("box_tile");
  return enabled;
}

inline bool box_vector_chunks() {
  const bool on = !switch_off("box_vector_chunks");
  return on;
}

inline bool box_dense_loads_enabled() {
  const bool on = !switch_off("box_dense_loads");
  return on;
}

inline bool box_half_stores() {
  const bool on = !switch_off("box_half_stores");
  return on;
}

// TORCH_TRANSPOSE_KERNELS=box_periodic_stores=0 keeps the store walk (two divisions a vector, a carry walk
// where rows are not whole vectors) on store sides that are one run in global memory (read once;
inline bool box_periodic_stores_enabled() {
  const bool on = !switch_off("box_periodic_stores");
  return on;
}

// One side's walk of the tile.
struct BoxSide {
  int e0 = 1, e1 = 1;          // extents of d0 and d1 (d2's follows from the tile size)
  int32_t g1 = 0, g2 = 0;      // global strides of d1 and d2 (d0's is 1)
  int s0 = 1, s1 = 0, s2 = 0;  // shared-memory strides of d0, d1, d2
  FastDivmod by_e0, by_e1;     // q -> (i0, rest), rest -> (i1, i2)
  uint32_t vectors = 0;        // tile elements / V
  bool rows_whole = false;     // e0 is a multiple of V: no vector wraps from one d0 line to the next
};

struct BoxTileArgs {
  BoxSide load, store;
  uint32_t total_tiles = 0;  // batch items (with c counted in chunks of C)
  uint32_t smem_elems = 0;   // the padded tile in shared memory
  DeviceBatchIndexer batch;  // tile -> its base offsets on both sides
  // The load walk is the tile's layout in global and shared memory alike. Last, so that the
  // other fields keep their offsets (and the kernels without dense loads their SASS).
  bool dense_loads = false;
  // Periodic stores (periodic_lanes > 0): the store walk is one run in global memory, so store
  // vector k sits at k * VOUT, and its shared offsets repeat every lcm(e0 * e1, VOUT) elements
  // (a whole number of d2 items), shifted by s2 an item. The first periodic_lanes threads (a
  // multiple of that period in vectors) each take vectors periodic_lanes apart: a thread's
  // offsets are the same in every vector it stores, plus periodic_shift per step, so it walks
  // them once per block instead of once per vector.
  uint32_t periodic_lanes = 0;
  int32_t periodic_shift = 0;
};

// Element q's coordinates on one side, and its global and shared offsets.
struct BoxSpot {
  int i0, i1, s;
  int32_t g;
};

__device__ __forceinline__ BoxSpot box_locate(const BoxSide& side, uint32_t q) {
  uint32_t rest, i0, i1, i2;
  side.by_e0.divmod(q, rest, i0);
  side.by_e1.divmod(rest, i2, i1);
  BoxSpot spot;
  spot.i0 = static_cast<int>(i0);
  spot.i1 = static_cast<int>(i1);
  spot.s = static_cast<int>(i0) * side.s0 + static_cast<int>(i1) * side.s1 + static_cast<int>(i2) * side.s2;
  spot.g = static_cast<int32_t>(i0) + static_cast<int32_t>(i1) * side.g1 + static_cast<int32_t>(i2) * side.g2;
  return spot;
}

// Calls f(j, shared offset) for the V elements that follow spot in the side's walk order,
// carrying i0 into i1 and i1 into i2 as the walk wraps.
template <int V, typename F>
__device__ __forceinline__ void box_walk(const BoxSide& side, BoxSpot spot, F&& f) {
  if (side.rows_whole) {  // the common case, without the carry checks (a uniform branch)
#pragma unroll
    for (int j = 0; j < V; ++j) f(j, spot.s + j * side.s0);
    return;
  }
  int i0 = spot.i0, i1 = spot.i1, s = spot.s;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    f(j, s);
    if (j + 1 == V) break;
    s += side.s0;
    if (++i0 == side.e0) {
      i0 = 0;
      s += side.s1 - side.e0 * side.s0;
      if (++i1 == side.e1) {
        i1 = 0;
        s += side.s2 - side.e1 * side.s1;
      }
    }
  }
}

// 16 bytes through one access (ElementOf<8> is uint2, whose Vec is 16-byte aligned too). A plain
// Vec store comes out of nvcc 13.0 as STG.E.128 here (cuobjdump, sm_90).
template <typename T, int V, bool kEvictLast>
__device__ __forceinline__ Vec<T, V> box_load_vector(const T* p) {
  return load_global<kEvictLast>(reinterpret_cast<const Vec<T, V>*>(p));
}

template <typename T, int V>
__device__ __forceinline__ void box_store_vector(T* p, const Vec<T, V>& w) {
  *reinterpret_cast<Vec<T, V>*>(p) = w;
}

// kDenseLoads (args.dense_loads): load vector k is elements k * VIN .. of the tile in global and
// shared memory alike, so it moves as one 16-byte load and one 16-byte shared store.
// kPeriodicStores (args.periodic_lanes > 0): see BoxTileArgs.
template <typename T, int VIN, int VOUT, bool kEvictLast, bool kDenseLoads = false, bool kPeriodicStores = false>
__global__ void __launch_bounds__(kThreads)
box_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const BoxTileArgs args) {
  static_assert(!kDenseLoads || VIN > 1, "dense loads move whole vectors");
  static_assert(!kPeriodicStores || VOUT > 1, "periodic stores move whole vectors");
  constexpr int kInFlight = VIN > 1 ? 4 : 8;  // loads issued per thread before the first use
  T* tile = reinterpret_cast<T*>(dynamic_smem());
  const BoxSide& ld = args.load;
  const BoxSide& st = args.store;

  // Periodic stores: this thread's shared offsets for its first vector (every tile's layout is
  // the same); threads past the last whole period store nothing.
  int periodic_offset[kPeriodicStores ? VOUT : 1] = {};
  uint32_t first_store = threadIdx.x;
  if constexpr (kPeriodicStores) {
    if (threadIdx.x < args.periodic_lanes) {
      box_walk<VOUT>(st, box_locate(st, threadIdx.x * VOUT), [&](int j, int s) { periodic_offset[j] = s; });
    } else {
      first_store = st.vectors;
    }
  }

  for (uint32_t t = blockIdx.x; t < args.total_tiles; t += gridDim.x) {
    int64_t in_off, out_off;
    args.batch.offsets(t, in_off, out_off);
    const T* src = in + in_off;
    T* dst = out + out_off;

    for (uint32_t base = 0; base < ld.vectors; base += kThreads * kInFlight) {
      Vec<T, VIN> v[kInFlight];
      if constexpr (kDenseLoads) {
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
          const uint32_t k = base + u * kThreads + threadIdx.x;
          if (k >= ld.vectors) break;
          v[u] = box_load_vector<T, VIN, kEvictLast>(src + k * VIN);
        }
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
          const uint32_t k = base + u * kThreads + threadIdx.x;
          if (k >= ld.vectors) break;
          reinterpret_cast<Vec<T, VIN>*>(tile)[k] = v[u];
        }
      } else {
        BoxSpot spot[kInFlight];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
          const uint32_t k = base + u * kThreads + threadIdx.x;
          if (k >= ld.vectors) break;
          spot[u] = box_locate(ld, k * VIN);
          v[u] = box_load_vector<T, VIN, kEvictLast>(src + spot[u].g);
        }
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
          if (base + u * kThreads + threadIdx.x >= ld.vectors) break;
          box_walk<VIN>(ld, spot[u], [&](int j, int s) { tile[s] = v[u].v[j]; });
        }
      }
    }
    __syncthreads();

    if constexpr (kPeriodicStores) {
      int shift = 0;
      for (uint32_t k = first_store; k < st.vectors; k += args.periodic_lanes, shift += args.periodic_shift) {
        Vec<T, VOUT> w;
#pragma unroll
        for (int j = 0; j < VOUT; ++j) w.v[j] = tile[periodic_offset[j] + shift];
        box_store_vector<T, VOUT>(dst + k * VOUT, w);
      }
    } else {
      for (uint32_t k = threadIdx.x; k < st.vectors; k += kThreads) {
        const BoxSpot spot = box_locate(st, k * VOUT);
        Vec<T, VOUT> w;
        box_walk<VOUT>(st, spot, [&](int j, int s) { w.v[j] = tile[s]; });
        box_store_vector<T, VOUT>(dst + spot.g, w);
      }
    }
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

// ---- host side: which batch dim joins the tile, and each side's walk ----------------------------

namespace box_tile_detail {

// A side's view of the three tile dims: extent and stride, in its walk order.
struct SideDims {
  int dim[3] = {};
  int64_t extent[3] = {}, stride[3] = {};
};

inline SideDims order_side(const int dims[3], const int64_t extents[3], const int64_t strides[3]) {
  SideDims side;
  int order[3] = {0, 1, 2};
  // d0 stays first (the side's unit-stride fast dim); the other two by increasing stride.
  if (strides[order[2]] < strides[order[1]]) std::swap(order[1], order[2]);
  for (int k = 0; k < 3; ++k) {
    side.dim[k] = dims[order[k]];
    side.extent[k] = extents[order[k]];
    side.stride[k] = strides[order[k]];
  }
  return side;
}

// Elements from a run's start that are contiguous in global memory.
inline int64_t run_length(const SideDims& s) {
  int64_t run = s.extent[0];
  if (s.stride[1] != run) return run;
  run *= s.extent[1];
  if (s.stride[2] != run) return run;
  return run * s.extent[2];
}

// The widest vector (16 bytes or 1 element) for a side: its runs a multiple of V long and every
// run start aligned, which needs the base, every batch stride (c's chunk step included, as in
// `chunked`) and the strides of the tile dims that do not continue a run to be multiples of V.
inline int side_vector_elems(const SideDims& s, const LayoutPlan& chunked, const int64_t* chunked_strides,
                             uintptr_t address) {
  const int e = chunked.element_bytes, full = e >= 16 ? 1 : 16 / e;
  if (full == 1) return 1;
  bool ok = run_length(s) % full == 0 && address % 16 == 0;
  int64_t contiguous = s.extent[0];
  for (int k = 1; k < 3; ++k) {
    if (s.stride[k] != contiguous) ok = ok && s.stride[k] % full == 0;
    contiguous *= s.extent[k];
  }
  return ok && chunked.batch_strides_multiple_of(chunked_strides, full) ? full : 1;
}

inline BoxSide make_side(const SideDims& s, const int64_t smem_stride_of_dim[], int vector_elems, int64_t tile_elems) {
  BoxSide side;
  side.e0 = static_cast<int>(s.extent[0]);
  side.e1 = static_cast<int>(s.extent[1]);
  side.g1 = static_cast<int32_t>(s.stride[1]);
  side.g2 = static_cast<int32_t>(s.stride[2]);
  side.s0 = static_cast<int>(smem_stride_of_dim[0]);
  side.s1 = static_cast<int>(smem_stride_of_dim[1]);
  side.s2 = static_cast<int>(smem_stride_of_dim[2]);
  side.by_e0 = FastDivmod(static_cast<uint32_t>(side.e0));
  side.by_e1 = FastDivmod(static_cast<uint32_t>(side.e1));
  side.vectors = static_cast<uint32_t>(tile_elems / vector_elems);
  side.rows_whole = side.e0 % vector_elems == 0;
  return side;
}

inline int64_t odd_at_least(int64_t x) { return x % 2 == 0 ? x + 1 : x; }

// Both sides' walks of the tile (a whole, b whole, `chunk` items of batch dim c).
struct BoxSides {
  SideDims load, store;
};

inline BoxSides box_sides(const LayoutPlan& plan, int c, int64_t chunk) {
  const FastDims f = FastDims::from_plan(plan);
  const int in_dims[3] = {plan.in_fast_dim, plan.out_fast_dim, c};
  const int64_t in_extents[3] = {f.size_a, f.size_b, chunk};
  const int64_t in_strides[3] = {1, f.in_sb, plan.in_strides[c]};
  const int out_dims[3] = {plan.out_fast_dim, plan.in_fast_dim, c};
  const int64_t out_extents[3] = {f.size_b, f.size_a, chunk};
  const int64_t out_strides[3] = {1, f.out_sa, plan.out_strides[c]};
  return {order_side(in_dims, in_extents, in_strides), order_side(out_dims, out_extents, out_strides)};
}

// The chunk of batch dim c: the largest divisor of its size in (cap - 64, cap] whose tile's runs
// are whole 16-byte vectors on both sides, else the largest such divisor down to half the cap,
// else the largest divisor in the first window (its sides then move element by element).
inline int64_t box_chunk(const LayoutPlan& plan, int c, int64_t cap) {
  const int64_t n = plan.sizes[c], top = std::min(n, cap);
  const int full = plan.element_bytes >= 16 ? 1 : 16 / plan.element_bytes;
  auto whole_vectors = [&](int64_t chunk) {
    const BoxSides sides = box_sides(plan, c, chunk);
    return run_length(sides.load) % full == 0 && run_length(sides.store) % full == 0;
  };
  int64_t largest = 1;
  for (int64_t chunk = top; chunk > 1 && chunk > top - 64; --chunk) {
    if (n % chunk != 0) continue;
    if (largest == 1) largest = chunk;
    if (!box_vector_chunks()) return largest;
    if (whole_vectors(chunk)) return chunk;
  }
  // Half a budget's tile of whole vectors beats a full one element by element (still at least
  // the quarter budget that make_box_tile_args asks for).
  if (box_vector_chunks()) {
    for (int64_t chunk = top - 64; chunk > 1 && chunk >= top / 2; --chunk) {
      if (n % chunk == 0 && whole_vectors(chunk)) return chunk;
    }
  }
  return largest;
}

// Periodic stores (BoxTileArgs) where the store side is one run in global memory of whole
// vectors and its period in vectors, lcm(e0 * e1, V) / V, leaves at most a quarter of a block's
// threads idle (the 7 x 9 matrices: 63 vectors, so 252 threads store).
inline void set_periodic_stores(const SideDims& store, int vector_elems, BoxTileArgs& args) {
  args.periodic_lanes = 0;
  args.periodic_shift = 0;
  const int64_t item = store.extent[0] * store.extent[1];
  if (!box_periodic_stores_enabled() || vector_elems < 2 || store.stride[1] != store.extent[0] ||
      store.stride[2] != item)
    return;
  const int64_t period_elems = std::lcm(item, static_cast<int64_t>(vector_elems));
  const int64_t period = period_elems / vector_elems;
  const int64_t lanes = period <= kThreads ? kThreads / period * period : 0;
  if (lanes * 4 < kThreads * 3) return;
  args.periodic_lanes = static_cast<uint32_t>(lanes);
  args.periodic_shift = static_cast<int32_t>(lanes * vector_elems / item * args.store.s2);
}

}  // namespace box_tile_detail

// Whether the plan fits this kernel, and its arguments. Needs a transpose with 32-bit in-tile
// offsets, unit strides on both fast dims, a x b within the shared-memory budget and a batch dim
// (positive strides on both sides) whose chunk makes a tile of at least a quarter of the budget.
// Among the batch dims it takes the one whose tile has the longest contiguous run on its worse
// side. *_vector_elems receive each side's vector width (16 bytes or 1 element).
inline bool make_box_tile_args(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address, BoxTileArgs& args,
                               int& load_vector_elems, int& store_vector_elems) {
  using namespace box_tile_detail;
  if (!box_tile_enabled() || plan.kind != PlanKind::Transpose || plan.needs_64bit_index) return false;
  const FastDims f = FastDims::from_plan(plan);
  if (f.in_sa != 1 || f.out_sb != 1) return false;
  const int64_t capacity = flat_tile_bytes() / plan.element_bytes;
  const int64_t ab = f.size_a * f.size_b;
  if (ab > capacity) return false;

  int c = -1;
  int64_t chunk = 1, best_run = 0;
  BoxSides sides;
  for (int d : plan.batch_dims()) {
    if (plan.in_strides[d] <= 0 || plan.out_strides[d] <= 0) continue;
    const int64_t items = box_chunk(plan, d, capacity / ab);
    if (ab * items * 4 < capacity) continue;
    const BoxSides candidate = box_sides(plan, d, items);
    const int64_t run = std::min(run_length(candidate.load), run_length(candidate.store));
    if (run > best_run || (run == best_run && items > chunk)) {
      c = d;
      chunk = items;
      best_run = run;
      sides = candidate;
    }
  }
  if (c < 0) return false;

  // c in chunks: the batch indexer then yields one tile per item, its offsets the tile's base.
  LayoutPlan chunked = plan;
  chunked.sizes[c] = plan.sizes[c] / chunk;
  chunked.in_strides[c] = plan.in_strides[c] * chunk;
  chunked.out_strides[c] = plan.out_strides[c] * chunk;
  args.batch.assign(chunked);
  const int64_t tiles = args.batch.count();
  if (!args.batch.fits_32 || tiles >= (int64_t{1} << 31)) return false;

  const int64_t limit = std::numeric_limits<int32_t>::max();
  for (const SideDims* s : {&sides.load, &sides.store}) {
    int64_t last = 0;
    for (int k = 0; k < 3; ++k) last += (s->extent[k] - 1) * s->stride[k];
    if (last >= limit) return false;
  }

  // Shared strides in load order, the two outer ones odd; the store side looks its dims up.
  const SideDims& load = sides.load;
  int64_t load_smem[3];
  load_smem[0] = 1;
  load_smem[1] = odd_at_least(load.extent[0]);
  load_smem[2] = odd_at_least(load.extent[1] * load_smem[1]);
  int64_t store_smem[3];
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      if (sides.store.dim[k] == load.dim[j]) store_smem[k] = load_smem[j];

  load_vector_elems = side_vector_elems(load, chunked, chunked.in_strides, in_address);
  store_vector_elems = side_vector_elems(sides.store, chunked, chunked.out_strides, out_address);
  if (box_half_stores() && store_vector_elems > 2 && sides.store.extent[0] % store_vector_elems != 0 &&
      sides.store.extent[0] % (store_vector_elems / 2) == 0)
    store_vector_elems /= 2;
  const int64_t tile_elems = ab * chunk;
  args.load = make_side(load, load_smem, load_vector_elems, tile_elems);
  args.store = make_side(sides.store, store_smem, store_vector_elems, tile_elems);
  // Dense loads: the load walk's global run and its shared layout are both the whole tile, which
  // needs odd extents a and b (the shared strides are rounded up to odd numbers) and the chunk
  // continuing the input's run (tiny odd matrices: 7 x 9).
  const BoxSide& ld = args.load;
  args.dense_loads = box_dense_loads_enabled() && load_vector_elems > 1 && ld.s1 == ld.e0 && ld.s2 == ld.e0 * ld.e1 &&
                     ld.g1 == ld.e0 && ld.g2 == ld.e0 * ld.e1;
  set_periodic_stores(sides.store, store_vector_elems, args);
  args.total_tiles = static_cast<uint32_t>(tiles);
  args.smem_elems = static_cast<uint32_t>(load.extent[2] * load_smem[2]);
  // The odd padding grows a tile with a short d0 by up to half: stay within the 48 KB that a
  // launch may take without opting in (flat_tile_bytes allows budgets to 40 KB).
  return static_cast<int64_t>(args.smem_elems) * plan.element_bytes <= 48 * 1024;
}

}  // namespace torch_transpose
