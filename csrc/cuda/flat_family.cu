// The flat family: every other layout with a fast dim under 32 elements (a fallback).
#include <type_traits>

#include "flat_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// The flat tile kernel for each pair of side vector widths.
template <typename T>
void launch_flat_tile(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  int load_v = 1, store_v = 1;
  const FlatTileArgs args = make_flat_tile_args(plan, reinterpret_cast<uintptr_t>(in), reinterpret_cast<uintptr_t>(out), load_v, store_v);
  const size_t smem = flat_tile_smem_bytes(args, sizeof(T));
  const unsigned int grid = grid_for(args.total_tiles, sm_count);
  if (plan.needs_64bit_index) {
    launch_kernel<flat_tile_transpose_kernel<T, 1, 1, int64_t, false>>(grid, kThreads, smem, stream, in, out, args);
    return;
  }
  with_side_vectors<kFullVector<T>>(load_v, store_v, [&](auto vin, auto vout) {
    with_bool(l2_evict_last_loads(false), [&](auto kEvictLast) {
      launch_kernel<flat_tile_transpose_kernel<T, vin.value, vout.value, int32_t, kEvictLast.value>>(grid, kThreads, smem,
                    stream, in, out, args);
    });
  });
}

}  // namespace

bool launch_flat_family(const LaunchContext& c) {
  if (!(c.small_fast_dim() && (!c.narrow().narrow || c.narrow().args.n > kNarrowMax))) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto) {
    using T = std::remove_pointer_t<decltype(t)>;
    launch_flat_tile<T>(c.plan, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
    return true;
  });
}

}  // namespace torch_transpose
