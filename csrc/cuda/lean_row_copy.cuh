// Short-row copies with the least index math: rows of 2^k whole 16-byte vectors (k <= 8), one
// vector per thread, up to three batch dims, 32-bit offsets. A 3-D grid hands each block its rows:
// x walks the innermost batch dim in runs of 256 / 2^k rows (which must divide it), y and z the
// other two, so a thread finds its vector with shifts and three multiply-adds, no division.
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "row_copy.cuh"

namespace torch_transpose {

struct LeanRowArgs {
  int32_t in_s0 = 0, out_s0 = 0;  // innermost batch dim: rows within blockIdx.x's run
  int32_t in_s1 = 0, out_s1 = 0;  // blockIdx.y
  int32_t in_s2 = 0, out_s2 = 0;  // blockIdx.z
  int lanes_log2 = 0;             // vectors per row = 2^lanes_log2
};

// lean_rows: 0 = never (row_vector_copy takes these plans), 1 or unset = whenever
// the plan fits.
inline Override lean_rows_override() {
  const Override setting = switch_override("lean_rows");
  return setting;
}

template <typename T, int V, bool kEvictLast>
__global__ void __launch_bounds__(kThreads)
lean_row_copy_kernel(const T* __restrict__ in, T* __restrict__ out, const LeanRowArgs args) {
  const int32_t lane = static_cast<int32_t>(threadIdx.x) & ((1 << args.lanes_log2) - 1);
  const int32_t row = static_cast<int32_t>((blockIdx.x * kThreads + threadIdx.x) >> args.lanes_log2);
  const int32_t y = static_cast<int32_t>(blockIdx.y), z = static_cast<int32_t>(blockIdx.z);
  const int32_t in_off = z * args.in_s2 + y * args.in_s1 + row * args.in_s0 + lane * V;
  const int32_t out_off = z * args.out_s2 + y * args.out_s1 + row * args.out_s0 + lane * V;
  *reinterpret_cast<Vec<T, V>*>(out + out_off) = load_global<kEvictLast>(reinterpret_cast<const Vec<T, V>*>(in + in_off));
}

// Whether a short-row copy plan (launch_copy's CopyArgs; the caller passes only full vectors:
// V of 16 bytes, or 16-byte elements) takes lean rows, and their arguments and grid: the switch,
// rows of unit stride on both sides and of 2^k vectors with k <= 8,
// one to three batch dims, the innermost a multiple of a block's rows, every element offset of
// both tensors below 2^31, grid y and z below 2^16.
inline bool make_lean_row_args(const LayoutPlan& plan, const CopyArgs& copy, int v, LeanRowArgs& args, dim3& grid) {
  if (!decide(lean_rows_override(), true) || plan.needs_64bit_index || copy.in_sb != 1 || copy.out_sb != 1) return false;
  if (copy.n % v != 0) return false;
  const int64_t vectors = copy.n / v;
  int lanes_log2 = 0;
  while ((int64_t{1} << lanes_log2) < vectors) ++lanes_log2;
  if ((int64_t{1} << lanes_log2) != vectors || vectors > kThreads) return false;
  const BatchIndexer& batch = copy.batch.plain;
  if (batch.rank < 1 || batch.rank > 3) return false;
  const int64_t rows_per_block = kThreads / vectors, inner = batch.sizes[batch.rank - 1];
  if (inner % rows_per_block != 0 || inner / rows_per_block > 0x7fffffff) return false;
  const int64_t y = batch.rank >= 2 ? batch.sizes[batch.rank - 2] : 1, z = batch.rank == 3 ? batch.sizes[0] : 1;
  if (y > 65535 || z > 65535) return false;
  if (!plan.offsets_fit_32()) return false;
  args.lanes_log2 = lanes_log2;
  args.in_s0 = static_cast<int32_t>(batch.in_strides[batch.rank - 1]);
  args.out_s0 = static_cast<int32_t>(batch.out_strides[batch.rank - 1]);
  if (batch.rank >= 2) {
    args.in_s1 = static_cast<int32_t>(batch.in_strides[batch.rank - 2]);
    args.out_s1 = static_cast<int32_t>(batch.out_strides[batch.rank - 2]);
  }
  if (batch.rank == 3) {
    args.in_s2 = static_cast<int32_t>(batch.in_strides[0]);
    args.out_s2 = static_cast<int32_t>(batch.out_strides[0]);
  }
  grid = dim3{static_cast<unsigned int>(inner / rows_per_block), static_cast<unsigned int>(y), static_cast<unsigned int>(z)};
  return true;
}

}  // namespace torch_transpose
