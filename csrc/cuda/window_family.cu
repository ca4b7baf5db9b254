// The window family: 4- and 8-byte rows that cannot take 16-byte vectors on both sides.
#include <type_traits>

#include "window_tile_transpose.cuh"
#include "lean_window_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// The window tile kernel for 4- and 8-byte elements whose plan allows no vectors (V == 1) but
// whose output fast dim has unit stride; false when it does not apply.
template <typename T>
bool launch_window_tile(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  if constexpr (sizeof(T) != 4 && sizeof(T) != 8) {
    return false;
  } else {
    using Shape = WindowShape<sizeof(T)>;
    if (!window_tile_enabled() || plan.out_strides[plan.out_fast_dim] != 1 ||
        !window_offsets_fit_32(plan, Shape::kTile, Shape::kShift))
      return false;
    const bool shifted = !window_rows_on_sector_grid(plan, reinterpret_cast<uintptr_t>(out), Shape::kShift);
    // Shifted windows start up to kShift - 1 elements before their tile: one more tile may be needed.
    const int64_t extra_b = shifted ? Shape::kShift - 1 : 0;
    LeanWindowArgs lean;
    dim3 lean_grid;
    if (make_lean_window_args<Shape::kTile>(plan, extra_b, lean, lean_grid)) {
      with_bool(shifted, [&](auto kShifted) {
        with_bool(lean.two_batch_dims, [&](auto kTwoBatchDims) {
          with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
            launch_kernel<lean_window_tile_transpose_kernel<T, kShifted.value, kTwoBatchDims.value, kEvictLast.value>>(lean_grid, kThreads, 0, stream, in, out, lean);
          });
        });
      });
      return true;
    }
    const SquareTileArgs args = SquareTileArgs::make(plan, Shape::kTile, extra_b);
    const unsigned int grid = grid_for(args.order.total, sm_count);
    with_bool(shifted, [&](auto kShifted) {
      launch_kernel<window_tile_transpose_kernel<T, kShifted.value, int32_t>>(grid, kThreads, 0, stream, in, out, args);
    });
    return true;
  }
}

}  // namespace

bool launch_window_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    return (V == 1 || (V < kFullVector<T> && window_for_half_vectors())) &&
           launch_window_tile<T>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
  });
}

}  // namespace torch_transpose
