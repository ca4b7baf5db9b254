// The CUDA backend's entry point and its selection: two ordered tables of kernel families, one
// for copy plans (the fast dim is the same on both sides) and one for transposes. Each family
// checks its own preconditions, so the order below is the whole selection rule: read it top to
// bottom. The last entry of each table takes every plan that reaches it.
#include <iterator>
#include <string>
#include <vector>

#include "../kernels.h"
#include "kernel_registry.h"
#include "launch_common.cuh"
#include "narrow_word_transpose.cuh"

namespace torch_transpose {
namespace {

constexpr KernelFamily kCopyFamilies[] = {
    {"device_copy", "one dense run on both sides: cudaMemcpyAsync", launch_device_copy_family},
    {"lean_rows", "short rows of 2^k whole 16-byte vectors over 1-3 batch dims", launch_lean_rows_family},
    {"vector_rows", "short rows: one vector per thread, rows found by division", launch_vector_rows_family},
    {"row_groups", "other short rows: groups of rows per block", launch_row_groups_family},
    {"medium_rows", "rows of up to one chunk of whole 16-byte vectors", launch_medium_rows_family},
    {"row_chunks", "long rows in chunks (every copy that reaches it)", launch_row_chunks_family},
};

constexpr KernelFamily kTransposeFamilies[] = {
    {"direct", "up to 32768 elements: one thread per element", launch_direct_family},
    // A fast dim under kNarrowDim elements.
    {"interleave", "a packed fast dim of 2-15 against planes of whole 16-byte vectors", launch_interleave_family},
    {"narrow_word", "1- and 2-byte lines against dense rows of 12-64 bytes", launch_narrow_word_family},
    {"gather", "an output fast dim continued by other output dims", launch_gather_family},
    {"box", "both fast dims whole in a tile with a chunk of a batch dim", launch_box_family},
    {"flat", "every other plan with a fast dim under 32 and no narrow lines", launch_flat_family},
    {"lean_narrow", "16 lines of 4-byte elements, whole tiles, at most one batch dim", launch_lean_narrow_family},
    {"narrow_block", "16 lines of 4-byte elements into dense rows", launch_narrow_block_family},
    {"narrow", "a packed fast dim of 2-16 against aligned lines (every narrow plan left)", launch_narrow_family},
    // Both fast dims of kNarrowDim elements or more.
    {"span", "short input rows packed back to back", launch_span_family},
    {"output_span", "short output rows packed back to back; item tiles for small items", launch_output_span_family},
    {"gather_rows", "output rows that are not whole tiles, continued by other output dims", launch_gather_rows_family},
    {"window", "4- and 8-byte rows without 16-byte vectors on both sides", launch_window_family},
    {"realign_window", "1- and 2-byte rows off the 16-byte grid", launch_realign_window_family},
    {"tma_byte_tile", "1-byte rows of whole 16-byte vectors on sm_90: the copy engine", launch_tma_byte_tile_family},
    {"wide_byte_tile", "1-byte rows of whole vectors where 256-wide tiles fill the GPU", launch_wide_byte_tile_family},
    {"small_tile", "whole-vector plans with fewer square tiles than the GPU has SMs", launch_small_tile_family},
    {"compact_tile", "2-byte whole-vector plans whose 128-wide tiles would have edges", launch_compact_tile_family},
    {"lean_tile", "whole-vector plans of whole tiles, at most two batch dims", launch_lean_tile_family},
    {"tile", "square tiles: every plan that reaches it", launch_tile_family},
};

struct Table {
  const KernelFamily* begin;
  const KernelFamily* end;
};

Table table_for(const LayoutPlan& plan) {
  if (plan.kind == PlanKind::Copy) return {std::begin(kCopyFamilies), std::end(kCopyFamilies)};
  return {std::begin(kTransposeFamilies), std::end(kTransposeFamilies)};
}

LaunchContext context_for(const LayoutPlan& plan, const void* in, void* out, cudaStream_t stream, int sm_count) {
  LaunchContext c{plan, in, out, stream, sm_count};
  if (plan.kind == PlanKind::Transpose) c.fast = FastDims::from_plan(plan);
  return c;
}

bool valid_element_bytes(int bytes) { return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16; }

// Names the family on the launches a dry run recorded from `first` on.
void name_family(LaunchRecorder* recorder, size_t first, const char* family) {
  if (recorder == nullptr) return;
  for (size_t i = first; i < recorder->launches.size(); ++i) recorder->launches[i].family = family;
}

#define TT_STRINGIFY_LIST(...) #__VA_ARGS__
#define TT_STRINGIFY(...) TT_STRINGIFY_LIST(__VA_ARGS__)

}  // namespace

std::string cuda_build_architectures() {
#if defined(__CUDA_ARCH_LIST__)
  return TT_STRINGIFY(__CUDA_ARCH_LIST__);
#else
  return "";
#endif
}

int cuda_build_runtime_version() {
#if defined(CUDART_VERSION)
  return CUDART_VERSION;
#else
  return 0;  // the CPU emulation of the tests
#endif
}

const NarrowView& LaunchContext::narrow() const {
  if (!narrow_cache) {
    NarrowView view;
    // Narrow plans of 17 to 31 lines (narrow_word_max_lines) are for narrow word tiles only.
    view.narrow = make_narrow_args(plan, reinterpret_cast<uintptr_t>(in), reinterpret_cast<uintptr_t>(out), view.args,
                                   view.dense_in, narrow_word_max_lines(plan.element_bytes));
    narrow_cache = view;
  }
  return *narrow_cache;
}

int run_layout_plan_cuda(const LayoutPlan& plan, const void* in, void* out, void* stream, int sm_count) {
  if (plan.kind == PlanKind::Empty) return 0;
  if (!valid_element_bytes(plan.element_bytes)) return static_cast<int>(cudaErrorInvalidValue);
  const LaunchContext c = context_for(plan, in, out, static_cast<cudaStream_t>(stream), sm_count);
  LaunchRecorder* recorder = active_launch_recorder;
  const Table table = table_for(plan);
  for (const KernelFamily* family = table.begin; family != table.end; ++family) {
    const size_t first = recorder != nullptr ? recorder->launches.size() : 0;
    if (family->launch(c)) {
      name_family(recorder, first, family->name);
      break;
    }
  }
  if (recorder != nullptr) return 0;
  return c.error != 0 ? c.error : static_cast<int>(cudaGetLastError());
}

std::vector<LaunchRecord> dry_run_layout_plan_cuda(const LayoutPlan& plan, const void* in, const void* out,
                                                   const DeviceDescription& device) {
  LaunchRecorder recorder;
  recorder.device = device;
  RecordLaunches recording(recorder);
  run_layout_plan_cuda(plan, in, const_cast<void*>(out), nullptr, device.sm_count);
  return std::move(recorder.launches);
}

std::vector<LaunchRecord> dry_run_candidates_cuda(const LayoutPlan& plan, const void* in, const void* out,
                                                  const DeviceDescription& device) {
  std::vector<LaunchRecord> candidates;
  if (plan.kind == PlanKind::Empty || !valid_element_bytes(plan.element_bytes)) return candidates;
  LaunchRecorder recorder;
  recorder.device = device;
  RecordLaunches recording(recorder);
  const LaunchContext c = context_for(plan, in, const_cast<void*>(out), nullptr, device.sm_count);
  const Table table = table_for(plan);
  for (const KernelFamily* family = table.begin; family != table.end; ++family) {
    const size_t first = recorder.launches.size();
    if (family->launch(c)) name_family(&recorder, first, family->name);
  }
  return std::move(recorder.launches);
}

}  // namespace torch_transpose
