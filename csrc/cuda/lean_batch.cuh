// The batch of the lean kernels (lean_tile_transpose.cuh, lean_window_tile_transpose.cuh,
// gather_tile_transpose.cuh, lean_interleave_transpose.cuh): up to two batch dims with 32-bit
// strides, one batch item per blockIdx.z, located with at most one magic-number division (none
// for a single batch dim).
#pragma once

#include "cuda_common.cuh"

namespace torch_transpose {

struct LeanBatch {
  int32_t in_s0 = 0, out_s0 = 0;  // batch dim 0 (outer; the only one when rank 1)
  int32_t in_s1 = 0, out_s1 = 0;  // batch dim 1 (inner: varies fastest)
  FastDivmod by_inner;            // item -> (outer, inner) when there are two batch dims

  // The plan's batch dims (BatchIndexer order: outer first); false for more than two. The caller
  // has proven every element offset below 2^31, which bounds every stride and item offset too.
  static bool from(const BatchIndexer& batch, LeanBatch& lean) {
    if (batch.rank > 2) return false;
    if (batch.rank >= 1) {
      lean.in_s0 = static_cast<int32_t>(batch.in_strides[0]);
      lean.out_s0 = static_cast<int32_t>(batch.out_strides[0]);
    }
    if (batch.rank == 2) {
      lean.in_s1 = static_cast<int32_t>(batch.in_strides[1]);
      lean.out_s1 = static_cast<int32_t>(batch.out_strides[1]);
      lean.by_inner = FastDivmod(static_cast<uint32_t>(batch.sizes[1]));
    }
    return true;
  }

  // Batch item `item`'s element offsets on both sides.
  template <bool kTwoBatchDims>
  __device__ __forceinline__ void offsets(uint32_t item, int32_t& in_off, int32_t& out_off) const {
    if constexpr (kTwoBatchDims) {
      uint32_t outer, inner;
      by_inner.divmod(item, outer, inner);
      in_off = static_cast<int32_t>(outer) * in_s0 + static_cast<int32_t>(inner) * in_s1;
      out_off = static_cast<int32_t>(outer) * out_s0 + static_cast<int32_t>(inner) * out_s1;
    } else {
      in_off = static_cast<int32_t>(item) * in_s0;
      out_off = static_cast<int32_t>(item) * out_s0;
    }
  }
};

// Where a block of a lean grid works: its batch item's offsets (blockIdx.z) and its tile's first
// a and b (blockIdx.y and blockIdx.x, in tiles of kTile), the grid every lean tile kernel
// launches (x: tiles along b, y: along a, z: batch items). items_first: the grid's x and z swap
// roles (x: batch items, z: tiles along b), so that blocks launched together take neighbouring
// items of one tile column (lean_tile_transpose.cuh says when).
struct LeanBlock {
  int32_t in_off, out_off, a0, b0;
};

template <int kTile, bool kTwoBatchDims>
__device__ __forceinline__ LeanBlock locate_lean_block(const LeanBatch& batch, bool items_first = false) {
  LeanBlock block;
  batch.offsets<kTwoBatchDims>(items_first ? blockIdx.x : blockIdx.z, block.in_off, block.out_off);
  block.a0 = static_cast<int32_t>(blockIdx.y) * kTile;
  block.b0 = static_cast<int32_t>(items_first ? blockIdx.z : blockIdx.x) * kTile;
  return block;
}

}  // namespace torch_transpose
