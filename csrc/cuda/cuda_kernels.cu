// CUDA backend entry point: picks a kernel for the plan and launches it on the given stream.
//   Copy plans:      the runtime's device-to-device copy (one dense run on both sides),
//                    row_vector_copy (short rows of whole 16-byte vectors), row_group_copy
//                    (other short rows) or row_chunk_copy (long rows)
//   Transpose plans: direct_transpose (up to 32768 elements: one thread per element),
//                    narrow_transpose (a packed fast dim of 2..16 elements against aligned
//                    lines; interleave_transpose when the lines are whole 16-byte vectors,
//                    narrow_word_transpose for dense rows of 12 to 64 bytes of 1- or 2-byte
//                    elements, up to 64 lines),
//                    span_tile_transpose (1- and 2-byte plans whose input rows, of up to
//                    256 elements, lie back to back without 16-byte vectors: whole rows a tile),
//                    output_span_tile_transpose (its mirror: short output rows back to back;
//                    item_tile_transpose where a batch item's input rows fit a 128-byte line:
#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "../kernel_switches.h"
#include "../kernels.h"
#include "box_tile_transpose.cuh"
#include "compact_tile_transpose.cuh"
#include "direct_transpose.cuh"
#include "flat_tile_transpose.cuh"
#include "gather_tile_transpose.cuh"
#include "interleave_transpose.cuh"
#include "item_tile_transpose.cuh"
#include "lean_interleave_transpose.cuh"
#include "lean_narrow_transpose.cuh"
#include "lean_row_copy.cuh"
#include "lean_tile_transpose.cuh"
#include "lean_window_tile_transpose.cuh"
#include "narrow_block_transpose.cuh"
#include "narrow_transpose.cuh"
#include "narrow_word_transpose.cuh"
#include "output_span_tile_transpose.cuh"
#include "realign_window_tile_transpose.cuh"
#include "row_copy.cuh"
#include "span_tile_transpose.cuh"
#include "tile_transpose.cuh"
#include "tma_byte_tile_transpose.cuh"
#include "window_tile_transpose.cuh"

namespace torch_transpose {
namespace {

constexpr int64_t kNarrowDim = 32;

bool driver_copy_enabled() {
  const bool enabled = !switch_off("driver_copy");
  return enabled;
}

// A copy plan whose dims all merged into one run with unit stride on both sides: one dense
// block of bytes to another.
bool is_dense_copy(const LayoutPlan& plan) {
  return plan.kind == PlanKind::Copy && plan.rank == 1 && plan.in_strides[0] == 1 && plan.out_strides[0] == 1;
}

bool grids_capped() {
  const bool capped = switch_off("one_block_per_item");
  return capped;
}

// Blocks for `work_items` tiles, groups or chunks: one block per item, so the blocks resident at
// any moment work on neighbouring items. Every kernel still loops over items a grid apart, for
// the switch above and for grids past the launch limit.
unsigned int grid_for(int64_t work_items, int sm_count) {
  const int64_t cap = grids_capped() ? static_cast<int64_t>(std::max(sm_count, 1)) * 64 : std::numeric_limits<int32_t>::max();
  return static_cast<unsigned int>(std::max<int64_t>(1, std::min(work_items, cap)));
}

// Calls launch(std::integral_constant<int, VIN>, std::integral_constant<int, VOUT>) with each
// side's vector width, 16 bytes (kFull elements) or one element: the flat and box tile kernels
// are instantiated for those four pairs only. kHalfStores (the box kernel, kFull >= 4): a store
// width of kFull / 2 (8 bytes) is passed on too, with either load width.
template <int kFull, bool kHalfStores = false, typename Launch>
void with_side_vectors(int load_v, int store_v, Launch&& launch) {
  using Full = std::integral_constant<int, kFull>;
  using One = std::integral_constant<int, 1>;
  if constexpr (kHalfStores && kFull >= 4) {
    using Half = std::integral_constant<int, kFull / 2>;
    if (store_v == Half::value) return load_v > 1 ? launch(Full{}, Half{}) : launch(One{}, Half{});
  }
  if (load_v > 1 && store_v > 1) {
    launch(Full{}, Full{});
  } else if (load_v > 1) {
    launch(Full{}, One{});
  } else if (store_v > 1) {
    launch(One{}, Full{});
  } else {
    launch(One{}, One{});
  }
}

template <typename T> constexpr int kFullVector = 16 / sizeof(T) > 1 ? 16 / sizeof(T) : 1;

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

// Calls launch(std::integral_constant<bool, value>{}): a kernel's two instantiations over a
// run-time flag (windows shifted to each output row's sector grid, a dense input, two batch dims).
template <typename Launch>
void with_bool(bool value, Launch&& launch) {
  if (value) {
    launch(std::true_type{});
  } else {
    launch(std::false_type{});
  }
}

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

// Narrow word tiles (narrow_word_transpose.cuh) for the 1- and 2-byte plans that fit them; false
// otherwise.
template <typename T>
bool launch_narrow_words(const NarrowArgs& narrow, bool dense_in, const T* in, T* out, cudaStream_t stream) {
  dim3 grid;
  if (!make_narrow_word_grid(narrow, sizeof(T), grid)) return false;
  const bool evict_last = l2_evict_last_loads(true), fetch_256 = evict_last && narrow_word_fetch_256(dense_in);
  const int threads = narrow_word_threads(narrow.n);
  const size_t smem = narrow_word_smem_bytes(narrow.n);
  const bool fixed = narrow_word_fixed_lines();
  auto with_lines = [&](auto launch_for) {
    if (fixed && narrow.n == kNarrowWordFixedLines) return launch_for(std::integral_constant<int, kNarrowWordFixedLines>{});
    launch_for(std::integral_constant<int, 0>{});
  };
  with_bool(dense_in, [&](auto kDenseIn) {
    with_lines([&](auto kLines) {
      if (!evict_last)
        return launch_kernel<narrow_word_transpose_kernel<T, kDenseIn.value, false, false, kLines.value>>(
            grid, threads, smem, stream, in, out, narrow);
      with_bool(fetch_256, [&](auto kFetch256) {
        launch_kernel<narrow_word_transpose_kernel<T, kDenseIn.value, true, kFetch256.value, kLines.value>>(
            grid, threads, smem, stream, in, out, narrow);
      });
    });
  });
  return true;
}

// Narrow word tiles for a plan whose narrow dim is past the narrow kernel's (dense rows of 32 to
// 64 bytes: kNarrowDim and more elements); false when the plan is not theirs.
template <typename T>
bool launch_wide_narrow_words(const LayoutPlan& plan, const FastDims& f, const T* in, T* out, cudaStream_t stream) {
  if constexpr (sizeof(T) > 2) {
    return false;
  } else {
    if (std::min(f.size_a, f.size_b) * static_cast<int64_t>(sizeof(T)) > kNarrowWordMaxRowBytes) return false;
    NarrowArgs args;
    bool dense_in = false;
    return make_narrow_args(plan, reinterpret_cast<uintptr_t>(in), reinterpret_cast<uintptr_t>(out), args, dense_in,
                            narrow_word_max_lines(sizeof(T))) &&
           launch_narrow_words<T>(args, dense_in, in, out, stream);
  }
}

// For a narrow plan (make_narrow_args): the interleave kernel (C up to interleave_max_c against
// lines of whole vectors), narrow word tiles (dense rows of 12 to 64 bytes of 1- or 2-byte
// elements), the narrow block kernels (16 four-byte lines) or the narrow kernel (up to 16 lines);
// for other plans with a fast dim under 32, gather tiles, the box tile kernel, else the flat tile
// kernel.
template <typename T>
void launch_narrow_or_flat(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  NarrowArgs args;
  bool dense_in = false;
  // Narrow plans of 17 to 31 lines (narrow_word_max_lines) are for narrow word tiles only.
  const bool narrow = make_narrow_args(plan, reinterpret_cast<uintptr_t>(in), reinterpret_cast<uintptr_t>(out), args,
                                       dense_in, narrow_word_max_lines(sizeof(T)));
  if (narrow && wants_interleave(args, sizeof(T), dense_in))
    return launch_interleave<T>(plan, args, dense_in, in, out, stream, sm_count);
  if constexpr (sizeof(T) <= 2) {
    if (narrow && launch_narrow_words<T>(args, dense_in, in, out, stream)) return;
  }
  if (!narrow || args.n > kNarrowMax) {
    if (launch_gather_tile<T>(plan, in, out, stream, /*ragged_rows=*/false)) return;
    if (launch_box_tile<T>(plan, in, out, stream, sm_count)) return;
    return launch_flat_tile<T>(plan, in, out, stream, sm_count);
  }
  if constexpr (std::is_same_v<T, uint32_t>) {  // the narrow block kernels are 4-byte only
    if (launch_lean_narrow(plan, args, dense_in, in, out, stream)) return;
    if (wants_narrow_block(args, dense_in)) {
      const unsigned int grid = grid_for(args.total_tiles, sm_count);
      with_bool(dense_in, [&](auto kDenseIn) {
        with_bool(l2_evict_last_loads(false), [&](auto kEvictLast) {
          launch_kernel<narrow_block_transpose_kernel<kDenseIn.value, kEvictLast.value>>(grid, kThreads, 0, stream, in, out,
                        args);
        });
      });
      return;
    }
  }
  const int parts = narrow_warps_per_tile(args.n);
  const unsigned int grid = grid_for(ceil_div(args.total_tiles, kNarrowWarps / parts), sm_count);
  const size_t smem = narrow_smem_bytes<T>(args, parts);
  with_bool(dense_in, [&](auto kDenseIn) {
    with_bool(l2_evict_last_loads(false), [&](auto kEvictLast) {
      if (parts == 2)
        return launch_kernel<narrow_transpose_kernel<T, kDenseIn.value, 2, kEvictLast.value>>(
            grid, kNarrowWarps * 32, smem, stream, in, out, args);
      launch_kernel<narrow_transpose_kernel<T, kDenseIn.value, 1, kEvictLast.value>>(grid, kNarrowWarps * 32, smem, stream,
                                                                                    in, out, args);
    });
  });
}

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

// A yes or no about the current device, worked out by `check` once per device and remembered
// (bit d of each mask: device d). A CUDA error that a refusing check leaves is cleared, so that
// it cannot fail the launch check of the call that asked; that call takes another kernel.
class PerDeviceAnswer {
 public:
  template <typename Check>
  bool get(Check&& check) {
    if (active_launch_recorder != nullptr) return true;  // a dry run describes a device that says yes
    int device = 0;
    cudaGetDevice(&device);
    const uint64_t bit = uint64_t{1} << (device & 63);
    if (yes_.load(std::memory_order_acquire) & bit) return true;
    if (no_.load(std::memory_order_acquire) & bit) return false;
    const bool ok = check(device);
    if (!ok) cudaGetLastError();
    (ok ? yes_ : no_).fetch_or(bit, std::memory_order_acq_rel);
    return ok;
  }

 private:
  std::atomic<uint64_t> yes_{0}, no_{0};
};

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

// Whether the current device runs the TMA tile kernel: compute capability 9.0 or newer, the
// kernel compiled for 9.0 or newer (built for an older architecture its body traps), and its
// shared memory above 48 KB opted in. Asked once per device and pipeline.
// Whether the build holds sm_90 code (nvcc lists the architectures it compiles for).
#if defined(__CUDA_ARCH_LIST__)
constexpr bool built_for_sm90(std::initializer_list<int> archs) {
  for (int arch : archs)
    if (arch >= 900) return true;
  return false;
}
constexpr bool kBuiltForSm90 = built_for_sm90({__CUDA_ARCH_LIST__});
#else
constexpr bool kBuiltForSm90 = true;
#endif

template <typename Pipe, bool kEvictLast>
bool tma_tile_kernel_ready() {
  if (const LaunchRecorder* recorder = active_launch_recorder) return recorder->device.capability_major >= 9 && kBuiltForSm90;
  static PerDeviceAnswer ready;
  return ready.get([](int device) {
    int major = 0;
    cudaFuncAttributes attributes{};
    return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9 &&
           cudaFuncGetAttributes(&attributes, tma_byte_tile_transpose_kernel<Pipe, kEvictLast>) == cudaSuccess &&
           attributes.binaryVersion >= 90 && attributes.ptxVersion >= 90 &&
           cudaFuncSetAttribute(tma_byte_tile_transpose_kernel<Pipe, kEvictLast>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(Pipe::kSmemBytes)) == cudaSuccess;
  });
}

template <typename Pipe, bool kEvictLast>
bool launch_tma_pipeline(const LayoutPlan& plan, const void* in, void* out, cudaStream_t stream, int sm_count) {
  if (!tma_tile_kernel_ready<Pipe, kEvictLast>()) return false;
  TmaMap in_map, out_map;
  TmaTileArgs args;
  if (!make_tma_byte_tile_args(plan, in, out, /*wide_fills=*/!Pipe::kPersistent, in_map, out_map, args)) return false;
  const int64_t blocks = Pipe::kPersistent ? int64_t{Pipe::kBlocks} * std::max(sm_count, 1) : args.order.total;
  launch_kernel<tma_byte_tile_transpose_kernel<Pipe, kEvictLast>>(static_cast<unsigned int>(std::min(args.order.total, blocks)),
                kThreads, Pipe::kSmemBytes, stream, in_map, out_map, args);
  return true;
}

// 1-byte plans through the copy engine (tma_byte_tile_transpose.cuh); false when the switch,
// the device or the plan does not take them.
template <typename T>
bool launch_tma_byte_tiles(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  if (!decide(tma_tile_override(), true)) return false;
  const bool persistent = wants_tma_persistent(plan.numel);
  bool launched = false;
  with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
    launched = persistent ? launch_tma_pipeline<TmaPersistentTiles, kEvictLast.value>(plan, in, out, stream, sm_count)
                          : launch_tma_pipeline<TmaOneTilePerBlock, kEvictLast.value>(plan, in, out, stream, sm_count);
  });
  return launched;
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

// Calls launch(std::integral_constant<int, L>) for span tiles of L = 1, 2 or 4 lines per output row.
template <typename Launch>
void with_span_lines(int lines, Launch&& launch) {
  if (lines == 4) return launch(std::integral_constant<int, 4>{});
  if (lines == 2) return launch(std::integral_constant<int, 2>{});
  launch(std::integral_constant<int, 1>{});
}

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

template <typename T, int V>
void launch_transpose(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  if (wants_direct_transpose(plan)) {
    const DirectArgs args = make_direct_args(plan);
    launch_kernel<direct_transpose_kernel<T>>(static_cast<unsigned int>(ceil_div(args.total, kThreads)), kThreads, 0,
                  stream, in, out, args);
    return;
  }
  const FastDims f = FastDims::from_plan(plan);
  if (std::min(f.size_a, f.size_b) < kNarrowDim) return launch_narrow_or_flat<T>(plan, in, out, stream, sm_count);
  if (launch_wide_narrow_words<T>(plan, f, in, out, stream)) return;
  if (launch_span_tiles<T, V>(plan, f, in, out, stream, sm_count)) return;
  if (launch_output_span_tiles<T, V>(plan, f, in, out, stream, sm_count)) return;
  // Output rows that are not whole tiles, over an output run of several dims: gather tiles write
  // whole tile rows of the run (wants_gather_rows says what that gained).
  const GatherRows gather_rows = wants_gather_rows(sizeof(T), V == kFullVector<T>, f.size_b, TileShape<sizeof(T)>::kTile);
  if (gather_rows != GatherRows::None &&
      launch_gather_tile<T>(plan, in, out, stream, /*ragged_rows=*/true, gather_rows == GatherRows::WithoutVectorEdges))
    return;
  // Window tiles for rows without 16-byte vectors (4- and 8-byte elements; partial vectors:
  // window_for_half_vectors says why).
  if ((V == 1 || (V < kFullVector<T> && window_for_half_vectors())) && launch_window_tile<T>(plan, in, out, stream, sm_count))
    return;
  if constexpr (sizeof(T) <= 2) {  // the same for 1- and 2-byte elements (realign_window_by_default)
    if (V < kFullVector<T> && launch_realign_window_tile<T>(plan, V, in, out, stream, sm_count))
      return;
  }
  if constexpr (sizeof(T) == 1 && V == 16) {
    if (launch_tma_byte_tiles<T>(plan, in, out, stream, sm_count)) return;
    if (launch_wide_byte_tiles<T>(plan, in, out, stream, sm_count)) return;
  }
  constexpr int kTile = TileShape<sizeof(T)>::kTile;
  if constexpr (V > 1 && V == kFullVector<T>) {
    if (!plan.needs_64bit_index && wants_small_tiles(square_tile_count(plan, kTile), sm_count)) {
      constexpr int kSmall = SmallTileShape<sizeof(T)>::kTile;
      const SquareTileArgs small = SquareTileArgs::make(plan, kSmall);
      with_bool(l2_evict_last_loads(false), [&](auto kEvictLast) {
        launch_kernel<tile_transpose_kernel<T, V, int32_t, kSmall, false, kEvictLast.value>>(grid_for(small.order.total, sm_count), kThreads, 0, stream, in, out, small);
      });
      return;
    }
  }
  if constexpr (V > 1 && V == kFullVector<T>) {
    if (wants_compact_tiles<T>(plan)) {
      const SquareTileArgs compact = SquareTileArgs::make(plan, CompactTileShape<sizeof(T)>::kTile);
      with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
        launch_kernel<compact_tile_transpose_kernel<T, V, kEvictLast.value>>(grid_for(compact.order.total, sm_count),
                      kCompactThreads, 0, stream, in, out, compact);
      });
      return;
    }
  }
  if constexpr (V > 1 && V == kFullVector<T>) {
    if (launch_lean_tile<T, V, kTile>(plan, in, out, stream)) return;
  }
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

// Lean rows (lean_row_copy.cuh) for short-row copies of whole 16-byte vectors that fit them;
// false otherwise.
template <typename T, int V>
bool launch_lean_rows(const LayoutPlan& plan, const CopyArgs& copy, const T* in, T* out, cudaStream_t stream) {
  LeanRowArgs args;
  dim3 grid;
  if (!make_lean_row_args(plan, copy, V, args, grid)) return false;
  with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
    launch_kernel<lean_row_copy_kernel<T, V, kEvictLast.value>>(grid, kThreads, 0, stream, in, out, args);
  });
  return true;
}

template <typename T, int V>
void launch_copy(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  const int b = plan.out_fast_dim;
  CopyArgs args;
  args.n = plan.sizes[b];
  args.in_sb = plan.in_strides[b];
  args.out_sb = plan.out_strides[b];
  args.batch.assign(plan);
  args.rows = args.batch.count();
  const int64_t vectors_per_row = ceil_div(args.n, V);
  constexpr bool kFullVectors = V == kFullVector<T> || sizeof(T) == 16;  // 16 bytes a vector
  if (vectors_per_row <= kThreads && args.rows > 1) {
    if constexpr (kFullVectors) {
      if (launch_lean_rows<T, V>(plan, args, in, out, stream)) return;
    }
    VectorRowArgs vector_rows;
    if (!plan.needs_64bit_index && make_vector_row_args<T>(args, V, kFullVectors, sm_count, vector_rows)) {
      launch_kernel<row_vector_copy_kernel<T, V>>(static_cast<unsigned int>(ceil_div(vector_rows.total_vectors, kThreads)),
                    kThreads, 0, stream, in, out, vector_rows);
      return;
    }
    int lanes_log2 = 0;
    while ((int64_t{1} << lanes_log2) < vectors_per_row) ++lanes_log2;
    args.lanes_log2 = lanes_log2;
    const int64_t rows_per_group = int64_t{kRowsInFlight} * (kThreads >> lanes_log2);
    args.total_groups = ceil_div(args.rows, rows_per_group);
    const unsigned int grid = grid_for(args.total_groups, sm_count);
    const BatchIndexer& batch = args.batch.plain;
    if (plan.needs_64bit_index) {
      launch_kernel<row_group_copy_kernel<T, 1, int64_t, CopyArgs>>(grid, kThreads, 0, stream, in, out, args);
    } else if (row_runs_enabled() && batch.rank > 0 && batch.sizes[batch.rank - 1] % rows_per_group == 0) {
      CopyRunArgs runs;
      static_cast<CopyShape&>(runs) = args;
      runs.groups_in_one_run = true;
      runs.inner_in_sb = batch.in_strides[batch.rank - 1];
      runs.inner_out_sb = batch.out_strides[batch.rank - 1];
      runs.batch = args.batch;
      launch_kernel<row_group_copy_kernel<T, V, int32_t, CopyRunArgs>>(grid, kThreads, 0, stream, in, out, runs);
    } else {
      launch_kernel<row_group_copy_kernel<T, V, int32_t, CopyArgs>>(grid, kThreads, 0, stream, in, out, args);
    }
    return;
  }
  if (vectors_per_row <= int64_t{kThreads} * kCopyUnroll && args.rows > 1 && medium_rows_enabled()) {
    VectorRowArgs vector_rows;
    if (kFullVectors && !plan.needs_64bit_index && make_vector_row_args<T>(args, V, true, sm_count, vector_rows)) {
      launch_kernel<row_vector_copy_kernel<T, V>>(static_cast<unsigned int>(ceil_div(vector_rows.total_vectors, kThreads)),
                    kThreads, 0, stream, in, out, vector_rows);
      return;
    }
  }
  args.chunks_per_row = ceil_div(args.n, int64_t{kThreads} * V * kCopyUnroll);
  args.total_chunks = args.rows * args.chunks_per_row;
  const unsigned int grid = grid_for(args.total_chunks, sm_count);
  if (plan.needs_64bit_index) {
    launch_kernel<row_chunk_copy_kernel<T, 1, int64_t>>(grid, kThreads, 0, stream, in, out, args);
  } else {
    launch_kernel<row_chunk_copy_kernel<T, V, int32_t>>(grid, kThreads, 0, stream, in, out, args);
  }
}

template <int E, int V>
void launch_with_vector(const LayoutPlan& plan, const void* in, void* out, cudaStream_t stream, int sm_count) {
  using T = typename ElementOf<E>::type;
  if constexpr (V > 1) {
    if (plan.vector_elems < V) return launch_with_vector<E, V / 2>(plan, in, out, stream, sm_count);
  }
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  if (plan.kind == PlanKind::Copy) {
    launch_copy<T, V>(plan, src, dst, stream, sm_count);
  } else {
    launch_transpose<T, V>(plan, src, dst, stream, sm_count);
  }
}

}  // namespace

int run_layout_plan_cuda(const LayoutPlan& plan, const void* in, void* out, void* stream_ptr, int sm_count) {
  if (plan.kind == PlanKind::Empty) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  if (is_dense_copy(plan) && driver_copy_enabled()) {
    if (LaunchRecorder* recorder = active_launch_recorder) {
      recorder->launches.push_back(LaunchRecord{"device_copy", {1, 1, 1}, 0, 0});
      return 0;
    }
    return static_cast<int>(cudaMemcpyAsync(out, in, static_cast<size_t>(plan.numel) * plan.element_bytes,
                                            cudaMemcpyDeviceToDevice, stream));
  }
  switch (plan.element_bytes) {
    case 1: launch_with_vector<1, 16>(plan, in, out, stream, sm_count); break;
    case 2: launch_with_vector<2, 8>(plan, in, out, stream, sm_count); break;
    case 4: launch_with_vector<4, 4>(plan, in, out, stream, sm_count); break;
    case 8: launch_with_vector<8, 2>(plan, in, out, stream, sm_count); break;
    case 16: launch_with_vector<16, 1>(plan, in, out, stream, sm_count); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  if (active_launch_recorder != nullptr) return 0;
  return static_cast<int>(cudaGetLastError());
}

std::vector<LaunchRecord> dry_run_layout_plan_cuda(const LayoutPlan& plan, const void* in, const void* out,
                                                   const DeviceDescription& device) {
  LaunchRecorder recorder;
  recorder.device = device;
  RecordLaunches recording(recorder);
  run_layout_plan_cuda(plan, in, const_cast<void*>(out), nullptr, device.sm_count);
  return std::move(recorder.launches);
}

}  // namespace torch_transpose
