// Probe (not the library, not the suite): the host cost of planning a CUDA call and choosing its
// kernel, on any machine. The CUDA launchers (csrc/cuda/cuda_kernels.cu) build as plain C++ under
// host emulation with every launch counted instead of run (TORCH_TRANSPOSE_HOST_DRY_LAUNCH), so
// the loop below times plan_layout_copy and run_layout_plan_cuda's choice and argument building
// alone, per suite case.
//
// Why: on the GPU machine the out= op's CUDA function queues in about 1.1 us more than an empty
// launch, of which guard, properties and stream are about 0.4 (bench/NOTES.md v40); this splits
// the rest between the plan and the kernel choice, and times changes to either here rather than
// in the GPU machine's host noise. That host runs such code about 3.5 times slower than the CPU
// development VM (v33), so the ratios carry over, not the microseconds.
//
//   g++ -std=c++17 -O2 -Icsrc scripts/plan_cost_probe.cpp csrc/plan/layout_plan.cpp -o /tmp/plan_cost_probe
//   /tmp/plan_cost_probe [calls]
#define TORCH_TRANSPOSE_CUDA_ON_HOST
#define TORCH_TRANSPOSE_HOST_DRY_LAUNCH
#include "cuda/cuda_kernels.cu"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "plan/layout_plan.h"

using namespace torch_transpose;

namespace {

struct Case {
  const char* name;
  int element_bytes;
  std::vector<int64_t> shape;  // the input's, contiguous
  std::vector<int> dims;       // the permutation
};

// The problem ops.cpp's plan_for builds for x.permute(dims) into a contiguous result.
LayoutProblem problem_of(const Case& c, uintptr_t in_address, uintptr_t out_address) {
  const size_t rank = c.shape.size();
  std::vector<int64_t> in_strides(rank);
  int64_t step = 1;
  for (size_t d = rank; d-- > 0;) {
    in_strides[d] = step;
    step *= c.shape[d];
  }
  LayoutProblem p;
  p.element_bytes = c.element_bytes;
  std::vector<int64_t> out_strides(rank);
  step = 1;
  for (size_t i = rank; i-- > 0;) {
    out_strides[i] = step;
    step *= c.shape[c.dims[i]];
  }
  for (size_t i = 0; i < rank; ++i) {
    p.sizes.push_back(c.shape[c.dims[i]]);
    p.in_strides.push_back(in_strides[c.dims[i]]);
    p.out_strides.push_back(out_strides[i]);
  }
  p.in_address = in_address;
  p.out_address = out_address;
  return p;
}

template <typename F>
double ns_per_call(long calls, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 200000;
  const std::vector<Case> cases = {
      {"bf16 NHWC->NCHW 32x224x224x3", 2, {32, 224, 224, 3}, {0, 3, 1, 2}},
      {"bf16 NCHW->NHWC 32x3x224x224", 2, {32, 3, 224, 224}, {0, 2, 3, 1}},
      {"fp32 NHWC->NCHW 32x224x224x3", 4, {32, 224, 224, 3}, {0, 3, 1, 2}},
      {"fp32 64x64", 4, {64, 64}, {1, 0}},
      {"fp32 batched 8x64x64", 4, {8, 64, 64}, {0, 2, 1}},
      {"fp32 8192x8192", 4, {8192, 8192}, {1, 0}},
  };
  // Addresses as the caching allocator gives them (512-byte aligned); never dereferenced.
  const uintptr_t in_address = 0x7f0000000000, out_address = 0x7f4000000000;
  std::printf("host ns per call, %ld calls, best of 5 (plan = plan_layout_copy; choice = run_layout_plan_cuda, "
              "launch counted only)\n", calls);
  for (const Case& c : cases) {
    const LayoutProblem problem = problem_of(c, in_address, out_address);
    const LayoutPlan plan = plan_layout_copy(problem);
    double plan_ns = 1e30, choice_ns = 1e30;
    volatile int sink = 0;
    for (int round = 0; round < 5; ++round) {
      plan_ns = std::min(plan_ns, ns_per_call(calls, [&] { sink = sink + plan_layout_copy(problem).rank; }));
      choice_ns = std::min(choice_ns, ns_per_call(calls, [&] {
                             sink = sink + run_layout_plan_cuda(plan, reinterpret_cast<const void*>(in_address),
                                                                reinterpret_cast<void*>(out_address), nullptr, 132);
                           }));
    }
    std::printf("  %-32s plan %7.1f   choice %7.1f\n", c.name, plan_ns, choice_ns);
  }
  std::printf("(%lld launches counted)\n", ::host_emulation::dry_launches);
  return 0;
}
