// Kernel entry points, one per backend. Each takes a plan and raw pointers (already offset to
// the first element) and moves the bytes; none of them validates arguments: the op layer does.
#pragma once

#include "plan/layout_plan.h"

namespace torch_transpose {

// CPU: cache-blocked tiles, parallel over tiles with at::parallel_for.
void run_layout_plan_cpu(const LayoutPlan& plan, const void* in, void* out);

// CUDA: launches on `stream` (a cudaStream_t) and never synchronises. Returns the cudaError_t of
// the launch as an int so that this header needs no CUDA include; 0 means success.
int run_layout_plan_cuda(const LayoutPlan& plan, const void* in, void* out, void* stream, int sm_count);

}  // namespace torch_transpose
