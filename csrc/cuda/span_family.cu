// The span family: short input rows packed back to back (NCHW -> NHWC at small spatial grids).
#include <type_traits>

#include "span_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {


// Span tiles (span_tile_transpose.cuh) for short input rows packed back to back; false when the
// switch (span_tiles_by_default where unset) or the plan does not take them.
template <typename T, int V>
bool launch_span_tiles(const LayoutPlan& plan, const FastDims& f, const T* in, T* out, cudaStream_t stream, int sm_count) {
  if constexpr (sizeof(T) > 8) {
    return false;
  } else {
    if (!decide(span_tile_override(), span_tiles_by_default(sizeof(T), V)) ||
        !span_tiles_fit(plan, f, reinterpret_cast<uintptr_t>(out)))
      return false;
    const int64_t size_a = f.size_a;
    const int lines = span_tile_lines(size_a, kSpanMaxBytes);
    with_span_lines(lines, [&](auto kLines) {
      SpanTileArgs args = make_span_tile_args(plan, size_a, SpanShape<sizeof(T), kLines.value>::kTileB);
      const bool whole_lines =
          decide(span_whole_lines_override(), span_whole_lines_by_default(sizeof(T), args.order.total, sm_count));
      if (whole_lines) args.rotation_step = span_tile_rotation_step(sizeof(T), size_a, lines);
      with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
        with_bool(whole_lines, [&](auto kWholeLines) {
          launch_kernel<span_tile_transpose_kernel<T, kLines.value, kEvictLast.value, kWholeLines.value>>(grid_for(args.order.total, sm_count), kThreads, span_tile_smem_bytes(size_a, lines), stream, in,
                        out, args);
        });
      });
    });
    return true;
  }
}

}  // namespace

bool launch_span_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    return launch_span_tiles<T, decltype(v)::value>(c.plan, c.fast, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
  });
}

}  // namespace torch_transpose
