// The narrow family: a packed fast dim of 2-16 elements against aligned lines.
#include <type_traits>

#include "narrow_transpose.cuh"
#include "lean_narrow_transpose.cuh"
#include "narrow_block_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// Lean narrow tiles (lean_narrow_transpose.cuh) for the 16-line plans that fit them; false
// otherwise.
inline bool launch_lean_narrow(const LayoutPlan& plan, const NarrowArgs& narrow, bool dense_in, const uint32_t* in,
                               uint32_t* out, cudaStream_t stream) {
  LeanNarrowArgs args;
  dim3 grid;
  if (!make_lean_narrow_args(plan, narrow, args, grid)) return false;
  with_bool(dense_in, [&](auto kDenseIn) {
    with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
      launch_kernel<lean_narrow_transpose_kernel<kDenseIn.value, kEvictLast.value>>(grid, kLeanNarrowThreads, 0, stream, in,
                    out, args);
    });
  });
  return true;
}

}  // namespace

namespace {

// A narrow plan of at most kNarrowMax lines: the narrow family's own.
const NarrowView* narrow_plan(const LaunchContext& c) {
  if (!c.small_fast_dim()) return nullptr;
  const NarrowView& n = c.narrow();
  return n.narrow && n.args.n <= kNarrowMax ? &n : nullptr;
}

}  // namespace

bool launch_lean_narrow_family(const LaunchContext& c) {
  const NarrowView* n = narrow_plan(c);
  return n != nullptr && c.plan.element_bytes == 4 &&
         launch_lean_narrow(c.plan, n->args, n->dense_in, typed_in<uint32_t>(c), typed_out<uint32_t>(c), c.stream);
}

bool launch_narrow_block_family(const LaunchContext& c) {
  const NarrowView* n = narrow_plan(c);
  if (n == nullptr || c.plan.element_bytes != 4 || !wants_narrow_block(n->args, n->dense_in)) return false;
  const unsigned int grid = grid_for(n->args.total_tiles, c.sm_count);
  with_bool(n->dense_in, [&](auto kDenseIn) {
    with_bool(l2_evict_last_loads(false), [&](auto kEvictLast) {
      launch_kernel<narrow_block_transpose_kernel<kDenseIn.value, kEvictLast.value>>(
          grid, kThreads, 0, c.stream, typed_in<uint32_t>(c), typed_out<uint32_t>(c), n->args);
    });
  });
  return true;
}

bool launch_narrow_family(const LaunchContext& c) {
  const NarrowView* n = narrow_plan(c);
  if (n == nullptr) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto) {
    using T = std::remove_pointer_t<decltype(t)>;
    const NarrowArgs& args = n->args;
    const int parts = narrow_warps_per_tile(args.n);
    const unsigned int grid = grid_for(ceil_div(args.total_tiles, kNarrowWarps / parts), c.sm_count);
    const size_t smem = narrow_smem_bytes<T>(args, parts);
    const T* in = typed_in<T>(c);
    T* out = typed_out<T>(c);
    with_bool(n->dense_in, [&](auto kDenseIn) {
      with_bool(l2_evict_last_loads(false), [&](auto kEvictLast) {
        if (parts == 2)
          return launch_kernel<narrow_transpose_kernel<T, kDenseIn.value, 2, kEvictLast.value>>(
              grid, kNarrowWarps * 32, smem, c.stream, in, out, args);
        launch_kernel<narrow_transpose_kernel<T, kDenseIn.value, 1, kEvictLast.value>>(grid, kNarrowWarps * 32, smem,
                                                                                      c.stream, in, out, args);
      });
    });
    return true;
  });
}

}  // namespace torch_transpose
