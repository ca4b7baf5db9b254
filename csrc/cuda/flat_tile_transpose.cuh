// Transpose for plans with a narrow fast dim (fewer than 32 elements: C = 3 in NCHW -> NHWC,
// 4194304 x 16, batches of 8 x 8 matrices). A square tile would idle most of its lanes, so the
// tile spans the whole narrow dim and as much of the other as fits, plus several batch items
// when both fast dims are narrow. Threads walk the tile flat in input order on load and in
// output order on store: whenever a side is dense over the tile, its accesses form one
// contiguous run, so both sides write full lines.
#pragma once

#include "cuda_common.cuh"

namespace torch_transpose {

constexpr int kFlatTileBytes = 16384;
constexpr int kFlatMaxGroup = 256;  // batch items per tile (their offsets live in shared memory)

struct FlatTileArgs {
  int64_t size_a, size_b;
  int64_t in_sa, in_sb, out_sa, out_sb;
  int tile_a, tile_b, group, pitch;       // tile extent along a and b, batch items per tile, row pitch
  FastDivmod by_tile_a, by_tile_b, by_tile_ab;
  int64_t tiles_a, tiles_b, groups, total_tiles, batch_count;
  DeviceBatchIndexer batch;
};

template <typename T, typename Index>
__global__ void __launch_bounds__(kThreads)
flat_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const FlatTileArgs args) {
  extern __shared__ __align__(16) unsigned char smem[];
  int64_t* in_offsets = reinterpret_cast<int64_t*>(smem);
  int64_t* out_offsets = in_offsets + kFlatMaxGroup;
  T* tile = reinterpret_cast<T*>(out_offsets + kFlatMaxGroup);  // tile[(g * tile_b + b) * pitch + a]
  const uint32_t elems = static_cast<uint32_t>(args.tile_a * args.tile_b), total = elems * args.group;
  const int64_t batch_count = args.batch_count;

  for (int64_t t = blockIdx.x; t < args.total_tiles; t += gridDim.x) {
    const int64_t tb = t % args.tiles_b;
    const int64_t rest = t / args.tiles_b;
    const int64_t ta = rest % args.tiles_a;
    const int64_t g0 = (rest / args.tiles_a) * args.group;
    const int groups_here = static_cast<int>(min(static_cast<int64_t>(args.group), batch_count - g0));
    for (int g = threadIdx.x; g < groups_here; g += kThreads) args.batch.offsets(g0 + g, in_offsets[g], out_offsets[g]);
    __syncthreads();
    const int64_t a0 = ta * args.tile_a, b0 = tb * args.tile_b;
    const int a_here = static_cast<int>(min(static_cast<int64_t>(args.tile_a), args.size_a - a0));
    const int b_here = static_cast<int>(min(static_cast<int64_t>(args.tile_b), args.size_b - b0));
    const T* src = in + a0 * args.in_sa + b0 * args.in_sb;
    T* dst = out + a0 * args.out_sa + b0 * args.out_sb;
    const Index in_sa = static_cast<Index>(args.in_sa), in_sb = static_cast<Index>(args.in_sb);
    const Index out_sa = static_cast<Index>(args.out_sa), out_sb = static_cast<Index>(args.out_sb);

    // One predicate for both phases: (g, a, b) inside this tile's share of the problem.
    auto inside = [&](uint32_t g, uint32_t a, uint32_t b) {
      return static_cast<int>(g) < groups_here && static_cast<int>(a) < a_here && static_cast<int>(b) < b_here;
    };
    // Loads go out kLoadsInFlight at a time before any shared store, so their latencies overlap.
    constexpr int kLoadsInFlight = 8;
    for (uint32_t base = 0; base < total; base += kThreads * kLoadsInFlight) {
      T v[kLoadsInFlight];
      int slot[kLoadsInFlight];
#pragma unroll
      for (int u = 0; u < kLoadsInFlight; ++u) {
        const uint32_t k = base + u * kThreads + threadIdx.x;
        uint32_t g, r, a, b;
        args.by_tile_ab.divmod(k, g, r);
        args.by_tile_a.divmod(r, b, a);  // input order: a fastest
        slot[u] = -1;
        if (k < total && inside(g, a, b)) {
          slot[u] = static_cast<int>((g * args.tile_b + b) * args.pitch + a);
          v[u] = src[in_offsets[g] + static_cast<Index>(a) * in_sa + static_cast<Index>(b) * in_sb];
        }
      }
#pragma unroll
      for (int u = 0; u < kLoadsInFlight; ++u)
        if (slot[u] >= 0) tile[slot[u]] = v[u];
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < total; k += kThreads) {
      uint32_t g, r, a, b;
      args.by_tile_ab.divmod(k, g, r);
      args.by_tile_b.divmod(r, a, b);  // output order: b fastest
      if (inside(g, a, b))
        dst[out_offsets[g] + static_cast<Index>(a) * out_sa + static_cast<Index>(b) * out_sb] = tile[(g * args.tile_b + b) * args.pitch + a];
    }
    __syncthreads();  // the next tile reuses the shared buffers
  }
}

// Picks the tile: the narrow dim whole, the other as long as the byte budget allows (a
// multiple of 32 elements), then as many batch items as still fit.
inline FlatTileArgs make_flat_tile_args(const LayoutPlan& plan) {
  const int a = plan.in_fast_dim, b = plan.out_fast_dim;
  FlatTileArgs args;
  args.size_a = plan.sizes[a];
  args.size_b = plan.sizes[b];
  args.in_sa = plan.in_strides[a];
  args.in_sb = plan.in_strides[b];
  args.out_sa = plan.out_strides[a];
  args.out_sb = plan.out_strides[b];
  const int64_t capacity = kFlatTileBytes / plan.element_bytes;
  const int64_t narrow = std::min(args.size_a, args.size_b);
  const int64_t wide_cap = std::max<int64_t>(32, (capacity / narrow) / 32 * 32);
  if (args.size_a <= args.size_b) {
    args.tile_a = static_cast<int>(args.size_a);
    args.tile_b = static_cast<int>(std::min(args.size_b, wide_cap));
  } else {
    args.tile_b = static_cast<int>(args.size_b);
    args.tile_a = static_cast<int>(std::min(args.size_a, wide_cap));
  }
  args.batch = DeviceBatchIndexer::from_plan(plan);
  args.batch_count = args.batch.count();
  const int64_t per_tile = static_cast<int64_t>(args.tile_a) * args.tile_b;
  args.group = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({kFlatMaxGroup, capacity / per_tile, args.batch.count()})));
  args.pitch = args.tile_a + (args.tile_a % 2 == 0 ? 1 : 0);  // odd pitch: column reads spread over banks
  args.by_tile_a = FastDivmod(args.tile_a);
  args.by_tile_b = FastDivmod(args.tile_b);
  args.by_tile_ab = FastDivmod(static_cast<uint32_t>(per_tile));
  args.tiles_a = ceil_div(args.size_a, args.tile_a);
  args.tiles_b = ceil_div(args.size_b, args.tile_b);
  args.groups = ceil_div(args.batch.count(), args.group);
  args.total_tiles = args.groups * args.tiles_a * args.tiles_b;
  return args;
}

inline size_t flat_tile_smem_bytes(const FlatTileArgs& args, int element_bytes) {
  return 2 * kFlatMaxGroup * sizeof(int64_t) +
         static_cast<size_t>(args.group) * args.tile_b * args.pitch * element_bytes;
}

}  // namespace torch_transpose
