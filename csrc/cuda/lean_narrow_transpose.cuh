#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "narrow_block_transpose.cuh"

namespace torch_transpose {

// What a lean narrow tile needs besides the base pointers.
struct LeanNarrowArgs {
  int32_t line_stride = 0;            // lines side: elements between consecutive lines
  int32_t in_item = 0, out_item = 0;  // the batch dim's strides (blockIdx.y walks it)
};

// lean_narrow: 0 = never (the narrow block or warp-pair kernel takes these plans),
// 1 or unset = whenever the plan fits.
inline Override lean_narrow_override() {
  const Override setting = switch_override("lean_narrow");
  return setting;
}

constexpr int kLeanNarrowWide = 64, kLeanNarrowThreads = 128;

template <bool kDenseIn, bool kEvictLast>
__global__ void __launch_bounds__(kLeanNarrowThreads, 2048 / kLeanNarrowThreads)
lean_narrow_transpose_kernel(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, const LeanNarrowArgs args) {
  __shared__ __align__(16) uint32_t tile[kNarrowBlockN * kLeanNarrowWide];
  const int32_t w0 = static_cast<int32_t>(blockIdx.x) * kLeanNarrowWide;
  const int32_t in_off = static_cast<int32_t>(blockIdx.y) * args.in_item + (kDenseIn ? w0 * kNarrowBlockN : w0);
  const int32_t out_off = static_cast<int32_t>(blockIdx.y) * args.out_item + (kDenseIn ? w0 : w0 * kNarrowBlockN);
  narrow_block_tile<kDenseIn, kLeanNarrowWide, kLeanNarrowThreads, kEvictLast>(in + in_off, out + out_off, args.line_stride,
                                                                                tile);
}

// Whether a narrow plan (make_narrow_args) takes lean narrow tiles, and their arguments and grid:
// the switch, N = 16, whole tiles along the wide dim, at most one batch dim, every element offset
// of both tensors below 2^31, at most 65535 batch items (grid y).
inline bool make_lean_narrow_args(const LayoutPlan& plan, const NarrowArgs& narrow, LeanNarrowArgs& args, dim3& grid) {
  if (!decide(lean_narrow_override(), true) || narrow.n != kNarrowBlockN || narrow.wide % kLeanNarrowWide != 0) return false;
  const BatchIndexer& batch = narrow.batch.plain;
  if (batch.rank > 1 || batch.count() > 65535) return false;
  if (!plan.offsets_fit_32()) return false;
  args.line_stride = static_cast<int32_t>(narrow.line_stride);
  if (batch.rank == 1) {
    args.in_item = static_cast<int32_t>(batch.in_strides[0]);
    args.out_item = static_cast<int32_t>(batch.out_strides[0]);
  }
  grid = dim3{static_cast<unsigned int>(narrow.wide / kLeanNarrowWide), static_cast<unsigned int>(batch.count()), 1};
  return true;
}

}  // namespace torch_transpose
