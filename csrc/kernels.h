// Kernel entry points, one per backend. Each takes a plan and raw pointers (already offset to
// the first element) and moves the bytes; none of them validates arguments: the op layer does.
#pragma once

#include <string>
#include <vector>

#include "include/torch_transpose/launch_record.h"
#include "plan/layout_plan.h"

namespace torch_transpose {

// A layout one call moved, as the op layer saw it: result-dim order, element strides, each
// side's byte offset into its storage. Recorded for tests only (record_layouts).
struct RecordedLayout {
  std::vector<int64_t> sizes, in_strides, out_strides;
  int element_bytes = 0;
  int64_t in_offset_bytes = 0, out_offset_bytes = 0;
};

void record_layouts(bool on);
std::vector<RecordedLayout> take_recorded_layouts();

// CPU: cache-blocked tiles, parallel over tiles with at::parallel_for.
void run_layout_plan_cpu(const LayoutPlan& plan, const void* in, void* out);

// The CPU family and variant run_layout_plan_cpu would run, without running it.
std::vector<LaunchRecord> dry_run_layout_plan_cpu(const LayoutPlan& plan, const void* in, const void* out);

// The CUDA architectures this build holds code for ("900" or "800,900,1000"), and the CUDA runtime
// version it was compiled against (CUDART_VERSION).
std::string cuda_build_architectures();
int cuda_build_runtime_version();

// CUDA: launches on `stream` (a cudaStream_t) and never synchronises. Returns the cudaError_t of
// the launch as an int so that this header needs no CUDA include; 0 means success.
int run_layout_plan_cuda(const LayoutPlan& plan, const void* in, void* out, void* stream, int sm_count);

// The launches run_layout_plan_cuda would make on `device`, made by nobody: a dry run that needs
// no GPU. The pointers are used for their alignment only.
std::vector<LaunchRecord> dry_run_layout_plan_cuda(const LayoutPlan& plan, const void* in, const void* out,
                                                   const DeviceDescription& device);

// Every family that fits the plan on `device`, each with the launches it would make, in the
// registry's order (the first is the one run_layout_plan_cuda takes).
std::vector<LaunchRecord> dry_run_candidates_cuda(const LayoutPlan& plan, const void* in, const void* out,
                                                  const DeviceDescription& device);

}  // namespace torch_transpose
