// Turns a linear batch index into input and output element offsets. Shared by the CPU and CUDA
// kernels: the batch dims are every dim of a plan except its fast ones, and their offsets are
// computed once per tile (or per row), always in 64 bits, so only in-tile math can be 32-bit.
#pragma once

#include <cstdint>

#include "layout_plan.h"

#if defined(__CUDACC__)
#define TT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TT_HOST_DEVICE inline
#endif

namespace torch_transpose {

struct BatchIndexer {
  int rank = 0;
  int64_t sizes[kMaxPlanRank];
  int64_t in_strides[kMaxPlanRank];
  int64_t out_strides[kMaxPlanRank];

  // The plan's batch dims in order (plan.batch_dims(), without building its vector: this runs
  // several times per call on the CUDA path, where host time per call matters).
  static BatchIndexer from_plan(const LayoutPlan& plan) {
    BatchIndexer indexer;
    indexer.assign(plan);
    return indexer;
  }

  void assign(const LayoutPlan& plan) {
    rank = 0;
    for (int d = 0; d < plan.rank; ++d) {
      if (!plan.is_batch_dim(d)) continue;
      sizes[rank] = plan.sizes[d];
      in_strides[rank] = plan.in_strides[d];
      out_strides[rank] = plan.out_strides[d];
      ++rank;
    }
  }

  int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }

  // The last batch dim varies fastest, matching the output's dim order.
  TT_HOST_DEVICE void offsets(int64_t linear, int64_t& in_offset, int64_t& out_offset) const {
    in_offset = 0;
    out_offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t i = linear % sizes[d];
      linear /= sizes[d];
      in_offset += i * in_strides[d];
      out_offset += i * out_strides[d];
    }
  }
};

}  // namespace torch_transpose
