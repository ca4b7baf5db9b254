// The realign window family: 1- and 2-byte rows off the 16-byte grid.
#include <type_traits>

#include "realign_window_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// Calls launch(shifted, byte quads, aligned input) as std::integral_constant<bool, ..> triples:
// the realign window kernel's instantiations for elements of type T, shifted windows, unshifted
// ones, and for 1-byte T unshifted ones stored as byte quads (which the caller asks for only for
// unshifted tiles; for wider T that pair is never spelled, so no kernel exists for it), each for
// inputs that need realigning and for inputs on the 16-byte grid.
template <typename T, typename Launch>
void with_realign_store(bool shifted, bool byte_quads, bool aligned_input, Launch&& launch) {
  with_bool(aligned_input, [&](auto kAlignedInput) {
    if constexpr (sizeof(T) == 1) {  // byte quads exist for 1-byte tiles only
      if (byte_quads) return launch(std::false_type{}, std::true_type{}, kAlignedInput);
    }
    with_bool(shifted, [&](auto kShifted) { launch(kShifted, std::false_type{}, kAlignedInput); });
  });
}

// Calls launch(std::integral_constant<RealignLoads, policy>{}): the realign window kernel's
// instantiations over its load policy.
template <typename Launch>
void with_realign_loads(RealignLoads policy, Launch&& launch) {
  switch (policy) {
    case RealignLoads::kPlain: return launch(std::integral_constant<RealignLoads, RealignLoads::kPlain>{});
    case RealignLoads::kEvictLast: return launch(std::integral_constant<RealignLoads, RealignLoads::kEvictLast>{});
    default: return launch(std::integral_constant<RealignLoads, RealignLoads::kEvictLastFetch256>{});
  }
}

// The realign window kernel for 1- and 2-byte plans without 16-byte vectors on both sides (V
// elements a vector); false when the switch (realign_window_by_default where unset) or the plan
// does not take it.
template <typename T>
bool launch_realign_window_tile(const LayoutPlan& plan, int vector, const T* in, T* out, cudaStream_t stream,
                                int sm_count) {
  using Shape = RealignWindowShape<sizeof(T)>;
  const Override setting = realign_window_override();
  if (setting == Override::Never || !realign_window_fits(plan, Shape::kTileB, Shape::kShift)) return false;
  const bool shifted = !window_rows_on_sector_grid(plan, reinterpret_cast<uintptr_t>(out), Shape::kShift);
  RealignWindowArgs args;
  // Shifted windows start up to kShift - 1 elements before their tile: one more tile may be needed.
  static_cast<SquareTileArgs&>(args) = SquareTileArgs::make_rect(plan, Shape::kTileA, Shape::kTileB, shifted ? Shape::kShift - 1 : 0);
  const SidesOffGrid off = sides_off_grid(plan, reinterpret_cast<uintptr_t>(in), reinterpret_cast<uintptr_t>(out));
  if (!decide(setting, realign_window_by_default(sizeof(T), vector, off.output && !off.input, args.order.total, sm_count)))
    return false;
  input_byte_span(plan, reinterpret_cast<uintptr_t>(in), args.in_lo, args.in_hi);
  const bool aligned_input =
      realign_aligned_input_enabled() && input_rows_on_chunk_grid(plan, reinterpret_cast<uintptr_t>(in));
  const bool small_tiles =
      decide(realign_small_tiles_override(),
             realign_small_tiles_by_default(sizeof(T), args.order.total, args.order.tiles_b, aligned_input, sm_count));
  if (small_tiles)
    static_cast<SquareTileArgs&>(args) =
        SquareTileArgs::make_rect(plan, kSmallRealignTileA, Shape::kTileB, shifted ? Shape::kShift - 1 : 0);
  const unsigned int grid = grid_for(args.order.total, sm_count);
  const bool byte_quads = sizeof(T) == 1 && !shifted && decide(realign_byte_quads_override(), true);
  with_realign_store<T>(shifted, byte_quads, aligned_input, [&](auto kShifted, auto kByteQuads, auto kAlignedInput) {
    with_realign_loads(realign_load_policy(sizeof(T), shifted, aligned_input), [&](auto kLoadPolicy) {
      with_bool(small_tiles, [&](auto kSmallTiles) {
        constexpr int kTileA = kSmallTiles.value ? kSmallRealignTileA : kRealignTileA;
        launch_kernel<realign_window_tile_transpose_kernel<T, kShifted.value, int32_t, kByteQuads.value, kAlignedInput.value,
                                                           kLoadPolicy.value, kTileA>>(grid, kThreads, 0, stream, in, out, args);
      });
    });
  });
  return true;
}

}  // namespace

bool launch_realign_window_family(const LaunchContext& c) {
  if (c.small_fast_dim()) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto v) -> bool {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    if constexpr (sizeof(T) <= 2) {
      return V < kFullVector<T> &&
             launch_realign_window_tile<T>(c.plan, V, typed_in<T>(c), typed_out<T>(c), c.stream, c.sm_count);
    } else {
      return false;
    }
  });
}

}  // namespace torch_transpose
