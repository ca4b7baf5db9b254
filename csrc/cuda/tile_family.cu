// The square tile family: shared-memory tiles with 16-byte vectors, the general transpose.
// Variants by plan: wide 1-byte tiles, small tiles for small grids, compact tiles for 2-byte
// edge plans, lean tiles for whole-tile plans, and the square kernel for the rest.
#include <type_traits>

#include "tile_transpose.cuh"
#include "lean_tile_transpose.cuh"
#include "compact_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// 1-byte tiles of kWideByteTile x kWideByteTile (tile_transpose.cuh says why), in dynamic shared
// memory above the 48 KB that a launch gets without asking; the kernel is opted in once per device.
// false when the plan does not take them (wants_wide_byte_tiles) or the device refuses the opt-in.
template <typename T>
bool launch_wide_byte_tiles(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  constexpr int kTile = kWideByteTile, kV = 16 / sizeof(T);
  constexpr int smem = tile_smem_bytes<T, kTile>();
  static PerDeviceAnswer opted_in;
  const FastDims f = FastDims::from_plan(plan);
  if (plan.needs_64bit_index ||
      !wants_wide_byte_tiles(f.size_a, f.size_b, square_tile_count(plan, kWideByteTile), sm_count) ||
      !opted_in.get([](int) {
        return cudaFuncSetAttribute(tile_transpose_kernel<T, kV, int32_t, kTile>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, smem) == cudaSuccess;
      }))
    return false;
  const SquareTileArgs args = SquareTileArgs::make(plan, kTile);
  launch_kernel<tile_transpose_kernel<T, kV, int32_t, kTile>>(grid_for(args.order.total, sm_count), kThreads, smem, stream,
                in, out, args);
  return true;
}

// Lean tiles (lean_tile_transpose.cuh) for full-vector plans that fit them and would not walk
// tile streams; false otherwise.
template <typename T, int V, int kTile>
bool launch_lean_tile(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream) {
  LeanTileArgs args;
  dim3 grid;
  if (tile_stream_shift(square_tile_count(plan, kTile), sizeof(T)) != 0 || !make_lean_tile_args<kTile>(plan, args, grid))
    return false;
  const size_t smem = lean_tile_smem_bytes(kTile * kTile * sizeof(T));
  with_bool(args.two_batch_dims, [&](auto kTwoBatchDims) {
    with_bool(l2_evict_last_loads(sizeof(T) != 2 || plan.batch_rank() > 0), [&](auto kEvictLast) {
      launch_kernel<lean_tile_transpose_kernel<T, V, kTile, kTwoBatchDims.value, kEvictLast.value>>(grid, kThreads, smem,
                    stream, in, out, args);
    });
  });
  return true;
}

// Square tiles for whole-vector plans on grids of fewer tiles than SMs; false otherwise.
template <typename T, int V>
bool launch_small_tiles(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  constexpr int kTile = TileShape<sizeof(T)>::kTile;
  if constexpr (V > 1 && V == kFullVector<T>) {
    if (!plan.needs_64bit_index && wants_small_tiles(square_tile_count(plan, kTile), sm_count)) {
      constexpr int kSmall = SmallTileShape<sizeof(T)>::kTile;
      const SquareTileArgs small = SquareTileArgs::make(plan, kSmall);
      with_bool(l2_evict_last_loads(false), [&](auto kEvictLast) {
        launch_kernel<tile_transpose_kernel<T, V, int32_t, kSmall, false, kEvictLast.value>>(grid_for(small.order.total, sm_count), kThreads, 0, stream, in, out, small);
      });
      return true;
    }
  }
  return false;
}

// Compact tiles for 2-byte whole-vector plans whose usual tiles would have edges; false otherwise.
template <typename T, int V>
bool launch_compact_tiles(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  if constexpr (V > 1 && V == kFullVector<T>) {
    if (wants_compact_tiles<T>(plan)) {
      const SquareTileArgs compact = SquareTileArgs::make(plan, CompactTileShape<sizeof(T)>::kTile);
      with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
        launch_kernel<compact_tile_transpose_kernel<T, V, kEvictLast.value>>(grid_for(compact.order.total, sm_count),
                      kCompactThreads, 0, stream, in, out, compact);
      });
      return true;
    }
  }
  return false;
}

// The square tile kernel: 64-bit indexing, tile streams for the largest 8-byte problems, edges.
template <typename T, int V>
void launch_square_tiles(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  constexpr int kTile = TileShape<sizeof(T)>::kTile;
  SquareTileArgs args = SquareTileArgs::make(plan, kTile);
  const unsigned int grid = grid_for(args.order.total, sm_count);
  if (plan.needs_64bit_index) {
    launch_kernel<tile_transpose_kernel<T, 1, int64_t>>(grid, kThreads, 0, stream, in, out, args);
    return;
  }
  if constexpr (V == kFullVector<T>) {
    args.streams = TileStreams::make(args.order.total, tile_stream_shift(args.order.total, sizeof(T)));
    if (args.streams.shift != 0) {
      with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
        launch_kernel<tile_transpose_kernel<T, V, int32_t, kTile, true, kEvictLast.value>>(grid_for(args.streams.slots, sm_count), kThreads, 0, stream, in, out, args);
      });
      return;
    }
  }
  constexpr bool kHalfVectors = sizeof(T) == 2 && V == kFullVector<T> / 2;
  const bool four_blocks =
      kHalfVectors && wants_four_block_half_vector_tiles(plan, reinterpret_cast<uintptr_t>(in), reinterpret_cast<uintptr_t>(out));
  with_bool(V > 1 && l2_evict_last_loads(sizeof(T) == 2), [&](auto kEvictLast) {
    if constexpr (kHalfVectors) {
      if (four_blocks) {
        launch_kernel<tile_transpose_kernel<T, V, int32_t, kTile, false, kEvictLast.value, kHalfVectorTileBlocksPerSm>>(grid,
                      kThreads, 0, stream, in, out, args);
        return;
      }
    }
    launch_kernel<tile_transpose_kernel<T, V, int32_t, kTile, false, kEvictLast.value>>(grid, kThreads, 0, stream, in, out,
                  args);
  });
}

}  // namespace

bool launch_wide_byte_tile_family(const LaunchContext& c) {
  if (c.small_fast_dim() || c.plan.element_bytes != 1 || c.plan.vector_elems < 16) return false;
  return launch_wide_byte_tiles<uint8_t>(c.plan, typed_in<uint8_t>(c), typed_out<uint8_t>(c), c.stream, c.sm_count);
}

bool launch_small_tile_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    return launch_small_tiles<T, decltype(v)::value>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
  });
}

bool launch_compact_tile_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    return launch_compact_tiles<T, decltype(v)::value>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
  });
}

bool launch_lean_tile_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) -> bool {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    if constexpr (V > 1 && V == kFullVector<T>) {
      return launch_lean_tile<T, V, TileShape<sizeof(T)>::kTile>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream);
    } else {
      return false;
    }
  });
}

bool launch_tile_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    launch_square_tiles<T, decltype(v)::value>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
    return true;
  });
}

}  // namespace torch_transpose
