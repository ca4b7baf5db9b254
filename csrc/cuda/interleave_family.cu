// The interleave family: a packed fast dim of 2-15 elements against planes of whole vectors.
#include <type_traits>

#include "interleave_transpose.cuh"
#include "lean_interleave_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// Calls f(std::integral_constant<int, C>) for the C in [kC, kMaxC] that equals `c` (kMaxC for
// any larger c; wants_interleave has bounded it).
template <int kMaxC, int kC = kInterleaveMinC, typename F>
void with_interleave_c(int c, F&& f) {
  if constexpr (kC < kMaxC) {
    if (c != kC) return with_interleave_c<kMaxC, kC + 1>(c, f);
  }
  f(std::integral_constant<int, kC>{});
}

// The interleave kernel for a narrow plan that wants_interleave, one instantiation per C: lean
// launches (lean_interleave_transpose.cuh) where the plan fits them, else the looping kernel.
template <typename T>
void launch_interleave(const LayoutPlan& plan, const NarrowArgs& narrow, bool dense_in, const T* in, T* out,
                       cudaStream_t stream, int sm_count) {
  if constexpr (sizeof(T) <= 8) {  // wants_interleave refuses wider elements
    // Packed lines (interleave_transpose.cuh) run on the looping kernel: lean launches take one
    // item per grid z.
    const bool packed = wants_packed_lines(narrow, sizeof(T));
    LeanInterleaveArgs lean;
    dim3 lean_grid;
    const bool lean_fits = !packed && make_lean_interleave_args(plan, narrow, sizeof(T), lean, lean_grid);
    // Launches one instantiation for the direction, C and load flags: lean (lean_interleave_takes,
    // instantiated for those only) or looping. The looping kernel's arguments (a 640-byte copy of
    // the batch indexer) are built only when it runs: these calls are host-bound.
    auto launch = [&](auto c, auto kPlanarIn, auto kEvictLast, auto kDirect) {
      if constexpr (c.value <= kPackedLinesMaxC) {
        if (packed) {
          const InterleaveArgs args = interleave_args(narrow, dense_in, sizeof(T), true);
          const unsigned int grid = grid_for(ceil_div(args.total_chunks, kInterleaveWarps), sm_count);
          return launch_kernel<interleave_transpose_kernel<T, c.value, kPlanarIn.value, kEvictLast.value, kDirect.value, true>>(grid, kThreads, 0, stream, in, out, args);
        }
      }
      if constexpr (lean_interleave_takes(sizeof(T), c.value)) {
        if (lean_fits) {
          return with_bool(lean.two_batch_dims, [&](auto kTwoBatchDims) {
            launch_kernel<lean_interleave_kernel<T, c.value, kPlanarIn.value, kEvictLast.value, kDirect.value,
                                                 kTwoBatchDims.value>>(lean_grid, kThreads, 0, stream, in, out, lean);
          });
        }
      }
      const InterleaveArgs args = interleave_args(narrow, dense_in, sizeof(T), false);
      const unsigned int grid = grid_for(ceil_div(args.total_chunks, kInterleaveWarps), sm_count);
      launch_kernel<interleave_transpose_kernel<T, c.value, kPlanarIn.value, kEvictLast.value, kDirect.value>>(grid,
                    kThreads, 0, stream, in, out, args);
    };
    // evict_last loads by interleave_evict_last_rule (interleave_transpose.cuh says why); lean_fits
    // already includes lean_interleave_takes, so it says which kernel runs.
    const int64_t bytes_moved = 2 * plan.numel * static_cast<int64_t>(sizeof(T));
    with_bool(l2_evict_last_loads(interleave_evict_last_rule(sizeof(T), dense_in, lean_fits, bytes_moved)),
              [&](auto kEvictLast) {
      if (!dense_in) {
        with_interleave_c<interleave_max_c(sizeof(T), true)>(narrow.n, [&](auto c) {
          launch(c, std::true_type{}, kEvictLast, std::false_type{});
        });
      } else {
        with_interleave_c<interleave_max_c(sizeof(T), false)>(narrow.n, [&](auto c) {
          with_bool(interleave_direct_loads(sizeof(T), narrow.n),
                    [&](auto kDirect) { launch(c, std::false_type{}, kEvictLast, kDirect); });
        });
      }
    });
  }
}

}  // namespace

bool launch_interleave_family(const LaunchContext& c) {
  if (!c.small_fast_dim()) return false;
  const NarrowView& n = c.narrow();
  if (!n.narrow || !wants_interleave(n.args, c.plan.element_bytes, n.dense_in)) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto) {
    using T = std::remove_pointer_t<decltype(t)>;
    launch_interleave<T>(c.plan, n.args, n.dense_in, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
    return true;
  });
}

}  // namespace torch_transpose
