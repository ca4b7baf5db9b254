// What every kernel family's launcher shares: the launch context the registry hands it, the
// grid rule, the dispatch over element width and vector width, and small compile-time helpers.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "../kernel_switches.h"
#include "../kernels.h"
#include "cuda_common.cuh"
#include "narrow_transpose.cuh"
#include "row_copy.cuh"

namespace torch_transpose {

// Below this many elements in either fast dim a transpose takes a narrow, box or flat kernel.
constexpr int64_t kNarrowDim = 32;

// A narrow plan (make_narrow_args): a packed fast dim of a few elements against long lines.
struct NarrowView {
  bool narrow = false;
  bool dense_in = false;
  NarrowArgs args;
};

// The call a family's launcher serves: plan, pointers, stream, device. `fast` and narrow() are
// worked out once per call for the transpose families.
struct LaunchContext {
  const LayoutPlan& plan;
  const void* in;
  void* out;
  cudaStream_t stream;
  int sm_count;
  FastDims fast{};
  mutable std::optional<NarrowView> narrow_cache;
  mutable std::optional<CopyArgs> copy_cache;
  mutable int error = 0;  // a cudaError_t the launcher got back (the device copy's)

  // Whether the plan's fast dims are both at least kNarrowDim (the square-tile families) or not.
  bool small_fast_dim() const { return std::min(fast.size_a, fast.size_b) < kNarrowDim; }
  const NarrowView& narrow() const;
};

inline bool grids_capped() {
  const bool capped = switch_off("one_block_per_item");
  return capped;
}

// Blocks for `work_items` tiles, groups or chunks: one block per item, so the blocks resident at
// any moment work on neighbouring items. Every kernel still loops over items a grid apart, for
// the switch above and for grids past the launch limit.
inline unsigned int grid_for(int64_t work_items, int sm_count) {
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

// Elements in a 16-byte vector of T (one for 16-byte elements).
template <typename T> constexpr int kFullVector = 16 / sizeof(T) > 1 ? 16 / sizeof(T) : 1;

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

// Calls f(T*, std::integral_constant<int, V>) for the plan's element type T and vector width V
// (elements per vector on both sides: the plan's, at most 16 bytes) and returns its answer.
template <typename T, int V, typename F>
bool with_vector(const LayoutPlan& plan, F& f) {
  if constexpr (V > 1) {
    if (plan.vector_elems < V) return with_vector<T, V / 2>(plan, f);
  }
  return f(static_cast<T*>(nullptr), std::integral_constant<int, V>{});
}

template <typename F>
bool with_element_and_vector(const LayoutPlan& plan, F&& f) {
  switch (plan.element_bytes) {
    case 1: return with_vector<uint8_t, 16>(plan, f);
    case 2: return with_vector<uint16_t, 8>(plan, f);
    case 4: return with_vector<uint32_t, 4>(plan, f);
    case 8: return with_vector<uint2, 2>(plan, f);
    case 16: return with_vector<uint4, 1>(plan, f);
    default: return false;
  }
}

// The typed pointers of a call, for the launchers' templates.
template <typename T>
const T* typed_in(const LaunchContext& c) { return static_cast<const T*>(c.in); }
template <typename T>
T* typed_out(const LaunchContext& c) { return static_cast<T*>(c.out); }

}  // namespace torch_transpose
