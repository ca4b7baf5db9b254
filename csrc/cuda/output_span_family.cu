// The output span family: short output rows packed back to back (NHWC -> NCHW at small spatial
// grids); item tiles, several small items a tile, are its variant for items that fit a line.
#include <type_traits>

#include "output_span_tile_transpose.cuh"
#include "item_tile_transpose.cuh"
#include "span_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {


// Item tiles (item_tile_transpose.cuh): output span tile plans of small items, parts_per_tile whole
// items a tile, or of items cut into parts (item_parts), parts_per_tile parts a tile.
template <typename T>
void launch_item_tiles(const LayoutPlan& plan, const FastDims& f, int parts_per_tile, bool aligned_input, const T* in,
                       T* out, cudaStream_t stream, int sm_count) {
  const ItemTileArgs args =
      make_item_tile_args(plan, f, parts_per_tile, sizeof(T), reinterpret_cast<uintptr_t>(in), aligned_input);
  with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
    with_bool(args.parts_per_item > 1, [&](auto kParts) {
      launch_kernel<item_tile_transpose_kernel<T, kEvictLast.value, kParts.value>>(grid_for(args.order.total, sm_count),
                    kThreads, item_tile_smem_bytes(args), stream, in, out, args);
    });
  });
}

// Output span tiles (output_span_tile_transpose.cuh) for short output rows packed back to back;
// false when the switches (output_span_tiles_by_default and, for input rows off the 16-byte grid,
// output_span_realign_by_default where unset) or the plan do not take them.
template <typename T, int V>
bool launch_output_span_tiles(const LayoutPlan& plan, const FastDims& f, const T* in, T* out, cudaStream_t stream,
                              int sm_count) {
  if constexpr (sizeof(T) > 8) {
    return false;
  } else {
    if (!decide(output_span_tile_override(), output_span_tiles_by_default(sizeof(T), V)) || !output_span_tiles_fit(plan, f))
      return false;
    const bool aligned_input = output_span_input_on_grid(plan, f, reinterpret_cast<uintptr_t>(in));
    if (!aligned_input && !decide(output_span_realign_override(), output_span_realign_by_default(sizeof(T)))) return false;
    if constexpr (sizeof(T) <= 4) {
      const int64_t items = f.size_a > 0 ? plan.numel / (f.size_a * f.size_b) : 0;
      const int parts_per_tile =
          decide(item_tile_override(), true) ? item_tile_parts(f, items, sizeof(T), aligned_input) : 0;
      if (parts_per_tile > 0) {
        launch_item_tiles<T>(plan, f, parts_per_tile, aligned_input, in, out, stream, sm_count);
        return true;
      }
    }
    const int lines = output_span_tile_lines(f.size_a, f.size_b, sizeof(T));
    with_span_lines(lines, [&](auto kLines) {
      const OutputSpanTileArgs args = make_output_span_tile_args(plan, SpanShape<sizeof(T), kLines.value>::kTileB, f.size_b);
      const unsigned int grid = grid_for(args.order.total, sm_count);
      const size_t smem = output_span_tile_smem_bytes(f.size_b, lines, aligned_input);
      with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
        if (aligned_input) {
          launch_kernel<output_span_tile_transpose_kernel<T, kLines.value, kEvictLast.value>>(grid, kThreads, smem, stream,
                        in, out, args);
          return;
        }
        RealignedOutputSpanTileArgs realigned;
        static_cast<OutputSpanTileArgs&>(realigned) = args;
        input_byte_span(plan, reinterpret_cast<uintptr_t>(in), realigned.in_lo, realigned.in_hi);
        launch_kernel<realigned_output_span_tile_transpose_kernel<T, kLines.value, kEvictLast.value>>(grid, kThreads, smem,
                      stream, in, out, realigned);
      });
    });
    return true;
  }
}

}  // namespace

bool launch_output_span_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    return launch_output_span_tiles<T, decltype(v)::value>(c.plan, c.fast, typed_in<T>(c), typed_out<T>(c), c.stream,
                                                           c.sm_count);
  });
}

}  // namespace torch_transpose
