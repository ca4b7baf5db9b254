// The gather family: an output fast dim that continues into other output dims (N-D permutes).
#include <type_traits>

#include "gather_tile_transpose.cuh"
#include "tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// Launches gather tiles of side kTile with kV-element vectors on a plan that fits them
// (make_gather_tile_args), with the edge path and loads the rules pick (gather_edges, gather_loads).
template <typename T, int kV, int kTile>
void launch_gather_kernel(const GatherTileArgs& args, dim3 grid, GatherEdgeKind edges, bool ragged_rows, const T* in,
                          T* out, cudaStream_t stream) {
  const size_t smem = lean_tile_smem_bytes(kTile * kTile * sizeof(T));
  with_bool(args.two_batch_dims, [&](auto kTwoBatchDims) {
    auto launch = [&](auto kEvictLast, auto kFetch256) {
      auto launch_with = [&](auto kEdges) {
        launch_kernel<gather_tile_transpose_kernel<T, kV, kTile, kTwoBatchDims.value, kEvictLast.value, kFetch256.value,
                                                   kEdges.value>>(grid, kThreads, smem, stream, in, out, args);
      };
      if (edges == kNoEdges) return launch_with(std::integral_constant<int, kNoEdges>{});
      if constexpr (sizeof(T) == 1) {  // gather_edges gives scalar edges to 1-byte tiles only
        if (edges == kScalarEdges) return launch_with(std::integral_constant<int, kScalarEdges>{});
      }
      launch_with(std::integral_constant<int, kVectorEdges>{});
    };
    // 256-byte fills come with evict_last loads only.
    const GatherLoads loads = gather_loads(sizeof(T), ragged_rows);
    with_bool(loads.evict_last, [&](auto kEvictLast) {
      if constexpr (kEvictLast.value) {
        with_bool(loads.fetch_256, [&](auto kFetch256) { launch(kEvictLast, kFetch256); });
      } else {
        launch(kEvictLast, std::false_type{});
      }
    });
  });
}

// Gather tiles (gather_tile_transpose.cuh) for plans that fit them; false otherwise. ragged_rows:
// the launcher asks for output rows that are not whole tiles (wants_gather_rows), which load
// by a rule of their own (gather_loads). without_vector_edges: only plans whose kernel needs no
// masked-vector edge path (gather_edges) fit. 2-byte plans of the 5-D route whose a is not whole
// 16-byte vectors may take tiles of 8-byte vectors (gather_half_vectors).
template <typename T>
bool launch_gather_tile(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, bool ragged_rows,
                        bool without_vector_edges = false) {
  if constexpr (sizeof(T) > 8) {  // no 16-byte vectors of several elements
    return false;
  } else {
    constexpr int kTile = TileShape<sizeof(T)>::kTile, kV = 16 / sizeof(T);
    const uintptr_t in_address = reinterpret_cast<uintptr_t>(in), out_address = reinterpret_cast<uintptr_t>(out);
    GatherTileArgs args;
    dim3 grid;
    if (make_gather_tile_args<kTile>(plan, in_address, out_address, sizeof(T), args, grid)) {
      const GatherEdgeKind edges = gather_edges(args, kTile, sizeof(T));
      if (without_vector_edges && edges == kVectorEdges) return false;
      launch_gather_kernel<T, kV, kTile>(args, grid, edges, ragged_rows, in, out, stream);
      return true;
    }
    if constexpr (sizeof(T) == 2) {
      constexpr int kHalfTile = kHalfVectorGatherTile;
      if (!ragged_rows && gather_half_vectors() && FastDims::from_plan(plan).size_a % kV != 0 &&
          make_gather_tile_args<kHalfTile>(plan, in_address, out_address, sizeof(T), args, grid, /*vector_bytes=*/8)) {
        launch_gather_kernel<T, 4, kHalfTile>(args, grid, gather_edges(args, kHalfTile, sizeof(T)), ragged_rows, in, out,
                                              stream);
        return true;
      }
    }
    return false;
  }
}

}  // namespace

bool launch_gather_family(const LaunchContext& c) {
  if (!(c.small_fast_dim() && (!c.narrow().narrow || c.narrow().args.n > kNarrowMax))) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto) {
    using T = std::remove_pointer_t<decltype(t)>;
    return launch_gather_tile<T>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream, /*ragged_rows=*/false);
  });
}

bool launch_gather_rows_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    const GatherRows rows = wants_gather_rows(sizeof(T), V == kFullVector<T>, c.fast.size_b, TileShape<sizeof(T)>::kTile);
    return rows != GatherRows::None && launch_gather_tile<T>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream,
                                                             /*ragged_rows=*/true, rows == GatherRows::WithoutVectorEdges);
  });
}

}  // namespace torch_transpose
