// The narrow word family: 1- and 2-byte lines against dense rows of 12 to 64 bytes.
#include <type_traits>

#include "narrow_word_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

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

}  // namespace

bool launch_narrow_word_family(const LaunchContext& c) {
  return with_element_and_vector(c.plan, [&](auto* t, auto) -> bool {
    using T = std::remove_pointer_t<decltype(t)>;
    if constexpr (sizeof(T) > 2) {
      return false;
    } else {
      if (!c.small_fast_dim()) return launch_wide_narrow_words<T>(c.plan, c.fast, typed_in<T>(c), typed_out<T>(c), c.stream);
      const NarrowView& n = c.narrow();
      return n.narrow && launch_narrow_words<T>(n.args, n.dense_in, typed_in<T>(c), typed_out<T>(c), c.stream);
    }
  });
}

}  // namespace torch_transpose
