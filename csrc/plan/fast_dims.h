// A transpose plan's two fast dims: a (the input's fastest) and b (the output's), with their
// sizes and both sides' strides. Every transpose kernel, CPU and CUDA, starts from these.
#pragma once

#include <cstdint>

#include "layout_plan.h"

namespace torch_transpose {

struct FastDims {
  int64_t size_a = 0, size_b = 0;
  int64_t in_sa = 0, in_sb = 0, out_sa = 0, out_sb = 0;

  static FastDims from_plan(const LayoutPlan& plan) {
    const int a = plan.in_fast_dim, b = plan.out_fast_dim;
    FastDims f;
    f.size_a = plan.sizes[a];
    f.size_b = plan.sizes[b];
    f.in_sa = plan.in_strides[a];
    f.in_sb = plan.in_strides[b];
    f.out_sa = plan.out_strides[a];
    f.out_sb = plan.out_strides[b];
    return f;
  }
};

}  // namespace torch_transpose
