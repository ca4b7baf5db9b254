// Window tiles (window_tile_transpose.cuh: odd shapes, `x[1:, 1:]`, 4-byte rows of 8-byte
// vectors) with the least index math around them: up to two batch dims, every offset below
// 2^31, and a 3-D grid (x: tile along b, y: tile along a, z: batch item; the launch order of the
// window kernel's tile walk) so that a block finds its tile and its item's offsets with no
// division (one for two batch dims), no 64-bit arithmetic and no grid loop. The tile itself is
// the window kernel's window_tile, edges included.
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "lean_batch.cuh"
#include "window_tile_transpose.cuh"

namespace torch_transpose {

// What a lean window tile needs besides the base pointers: 32-bit strides and sizes, up to two
// batch dims.
struct LeanWindowArgs {
  int32_t in_sa = 0, in_sb = 0, out_sa = 0;  // the fast dims' strides (out_sb = 1)
  int32_t size_a = 0, size_b = 0;
  LeanBatch batch;
  bool two_batch_dims = false;
};

// lean_window: 0 = never (the window tile kernel takes these plans), 1 or unset
// = whenever the plan fits.
inline Override lean_window_override() {
  const Override setting = switch_override("lean_window");
  return setting;
}

// Five blocks per SM, as the window kernel (its comment says why).
template <typename T, bool kShifted, bool kTwoBatchDims, bool kEvictLast>
__global__ void __launch_bounds__(kThreads, 5)
lean_window_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const LeanWindowArgs args) {
  constexpr int kTile = WindowShape<sizeof(T)>::kTile;
  __shared__ T tile[window_tile_elems<T, kShifted>()];
  const LeanBlock at = locate_lean_block<kTile, kTwoBatchDims>(args.batch);
  window_tile<T, kShifted, int32_t, kEvictLast>(in + at.in_off, out + at.out_off, at.a0, at.b0, args.size_a, args.size_b,
                                                args.in_sa, args.in_sb, args.out_sa, tile);
}

// Whether a window tile plan (the caller has checked that it takes window tiles, with their
// 32-bit margin: window_offsets_fit_32) takes lean ones, and their arguments and grid: the
// switch, at most two batch dims, every element offset of both tensors below 2^31 (the batch
// offsets are 32-bit), and a grid within CUDA's limits (y and z below 2^16). `extra_b`: the
// elements past size_b that shifted windows may need covered (one more tile along b).
template <int kTile>
bool make_lean_window_args(const LayoutPlan& plan, int64_t extra_b, LeanWindowArgs& args, dim3& grid) {
  if (!decide(lean_window_override(), true) || plan.needs_64bit_index || !plan.offsets_fit_32()) return false;
  const FastDims f = FastDims::from_plan(plan);
  const BatchIndexer batch = BatchIndexer::from_plan(plan);
  if (!LeanBatch::from(batch, args.batch)) return false;
  const int64_t tiles_a = ceil_div(f.size_a, kTile), tiles_b = ceil_div(f.size_b + extra_b, kTile), items = batch.count();
  if (tiles_a > 65535 || items > 65535 || tiles_b > 0x7fffffff) return false;
  args.in_sa = static_cast<int32_t>(f.in_sa);
  args.in_sb = static_cast<int32_t>(f.in_sb);
  args.out_sa = static_cast<int32_t>(f.out_sa);
  args.size_a = static_cast<int32_t>(f.size_a);
  args.size_b = static_cast<int32_t>(f.size_b);
  args.two_batch_dims = batch.rank == 2;
  grid = dim3{static_cast<unsigned int>(tiles_b), static_cast<unsigned int>(tiles_a), static_cast<unsigned int>(items)};
  return true;
}

}  // namespace torch_transpose
