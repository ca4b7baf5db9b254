// A batch walk for the CPU kernels (the CUDA kernels locate each tile or row by BatchIndexer).
#pragma once

#include <cstdint>

#include "batch_indexer.h"

namespace torch_transpose {

struct BatchCursor {
  const BatchIndexer& batch;
  int64_t index[kMaxPlanRank];
  int64_t in_offset = 0, out_offset = 0;

  BatchCursor(const BatchIndexer& indexer, int64_t linear) : batch(indexer) {
    for (int d = batch.rank - 1; d >= 0; --d) {
      index[d] = linear % batch.sizes[d];
      linear /= batch.sizes[d];
      in_offset += index[d] * batch.in_strides[d];
      out_offset += index[d] * batch.out_strides[d];
    }
  }

  // To the next item: the last dim steps, and a dim that passes its end goes back to 0 and
  // carries into the one before it.
  void next() {
    for (int d = batch.rank - 1; d >= 0; --d) {
      in_offset += batch.in_strides[d];
      out_offset += batch.out_strides[d];
      if (++index[d] < batch.sizes[d]) return;
      index[d] = 0;
      in_offset -= batch.sizes[d] * batch.in_strides[d];
      out_offset -= batch.sizes[d] * batch.out_strides[d];
    }
  }
};

}  // namespace torch_transpose
