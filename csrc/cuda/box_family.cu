// The box family: both fast dims whole in a tile, with a chunk of a batch dim.
#include <type_traits>

#include "box_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// The box tile kernel for each pair of side vector widths; false when the plan does not fit it.
template <typename T>
bool launch_box_tile(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  BoxTileArgs args;
  int load_v = 1, store_v = 1;
  if (!make_box_tile_args(plan, reinterpret_cast<uintptr_t>(in), reinterpret_cast<uintptr_t>(out), args, load_v, store_v))
    return false;
  const size_t smem = static_cast<size_t>(args.smem_elems) * sizeof(T);
  const unsigned int grid = grid_for(args.total_tiles, sm_count);
  // 8-byte stores where make_box_tile_args chose them; dense loads and periodic stores where it
  // set them (both need whole vectors on their side).
  with_side_vectors<kFullVector<T>, /*kHalfStores=*/true>(load_v, store_v, [&](auto vin, auto vout) {
    with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
      auto launch = [&](auto kDenseLoads, auto kPeriodicStores) {
        launch_kernel<box_tile_transpose_kernel<T, vin.value, vout.value, kEvictLast.value, kDenseLoads.value,
                                                kPeriodicStores.value>>(grid, kThreads, smem, stream, in, out, args);
      };
      auto with_stores = [&](auto kDenseLoads) {
        if constexpr (vout.value > 1) {
          if (args.periodic_lanes > 0) return launch(kDenseLoads, std::true_type{});
        }
        launch(kDenseLoads, std::false_type{});
      };
      if constexpr (vin.value > 1) {
        if (args.dense_loads) return with_stores(std::true_type{});
      }
      with_stores(std::false_type{});
    });
  });
  return true;
}

}  // namespace

bool launch_box_family(const LaunchContext& c) {
  if (!(c.small_fast_dim() && (!c.narrow().narrow || c.narrow().args.n > kNarrowMax))) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto) {
    using T = std::remove_pointer_t<decltype(t)>;
    return launch_box_tile<T>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
  });
}

}  // namespace torch_transpose
