// Narrow transposes of 16 four-byte lines (16x4194304 <-> 4194304x16) with no shared memory: the
// lean narrow kernel's plans (whole tiles, at most one batch dim, 32-bit offsets, a 2-D grid), each
// thread moving 4 x 4 blocks through its registers.
//
// Lane (a, c) of a warp (a = lane / 8, c = lane % 8) takes lines 4a..4a+3 at positions
// 4c..4c+3 of its warp's 32 positions of the wide dim (kPer such groups, 32 positions apart):
//   * lines side: four 16-byte accesses, one per line; per instruction the warp covers four
//     whole 128-byte pieces of lines;
//   * in registers: line 4a+j, position 4c+k is component k of the line vector j and component
//     j of the dense vector k, so the 4 x 4 transpose is register renaming;
//   * dense side: four 16-byte accesses, one per position; the four lanes a of a position
//     cover its 64 bytes, so each instruction moves eight whole 64-byte rows.
// No barrier and no shared round trip: each thread stores as soon as its own loads arrive, as a
// copy kernel does, where the tile kernels (narrow_block_tile) wait for the whole block's loads.
//
// Why: 16x4194304 is the one issue-3 case level with torch.compile rather than above it, with the
// lean narrow tile at 0.986-0.996 of cudaMemcpyAsync by placement where a plain copy kernel runs
// 0.995-1.003 (bench/NOTES.md v42). TORCH_TRANSPOSE_NARROW_REGISTERS picks the kernel until an A/B
// decides.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "lean_narrow_transpose.cuh"

namespace torch_transpose {

constexpr int kRegisterNarrowThreads = 128, kRegisterNarrowWarps = kRegisterNarrowThreads / 32;

// TORCH_TRANSPOSE_NARROW_REGISTERS: 0 or unset = lean narrow tiles; 1 or 2 = this kernel with that
// many 32-position groups per warp, wherever the plan fits.
inline int register_narrow_groups() {
  static const int groups = static_cast<int>(env_int_in_range("TORCH_TRANSPOSE_NARROW_REGISTERS", 0, 2, 0));
  return groups;
}

// Positions of the wide dim one block covers.
constexpr int register_narrow_block_wide(int groups) { return 32 * groups * kRegisterNarrowWarps; }

// At most 32 registers a thread for one group (16 blocks of 128 threads fill an SM), 64 for two:
// without the bound ptxas took 36-40 for one group, which leaves 12 blocks.
template <bool kDenseIn, bool kEvictLast, int kPer>
__global__ void __launch_bounds__(kRegisterNarrowThreads, 2048 / kRegisterNarrowThreads / kPer)
register_narrow_transpose_kernel(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, const LeanNarrowArgs args) {
  using Chunk = Vec<uint32_t, 4>;
  const unsigned lane = threadIdx.x % 32;
  const int32_t line0 = 4 * static_cast<int32_t>(lane / 8);
  const int32_t w0 =
      static_cast<int32_t>((blockIdx.x * kRegisterNarrowWarps + threadIdx.x / 32) * 32 * kPer + 4 * (lane % 8));
  const uint32_t* src = in + static_cast<int32_t>(blockIdx.y) * args.in_item;
  uint32_t* dst = out + static_cast<int32_t>(blockIdx.y) * args.out_item;
  // The vector that starts at (line, position w): lines lie line_stride apart, dense rows 16.
  const auto lines_at = [&](int32_t line, int32_t w) { return line * args.line_stride + w; };
  const auto dense_at = [&](int32_t line, int32_t w) { return w * kNarrowBlockN + line; };
  Chunk v[kPer][4];
#pragma unroll
  for (int p = 0; p < kPer; ++p) {
    const int32_t w = w0 + 32 * p;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      v[p][j] = load_global<kEvictLast>(reinterpret_cast<const Chunk*>(src + (kDenseIn ? dense_at(line0, w + j) : lines_at(line0 + j, w))));
  }
  // v[p][j].v[k] is (line0 + j, w + k) for a lines-side input and (line0 + k, w + j) for a dense
  // one; either way output vector k takes component k of the four.
#pragma unroll
  for (int p = 0; p < kPer; ++p) {
    const int32_t w = w0 + 32 * p;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      Chunk o;
#pragma unroll
      for (int j = 0; j < 4; ++j) o.v[j] = v[p][j].v[k];
      *reinterpret_cast<Chunk*>(dst + (kDenseIn ? lines_at(line0 + k, w) : dense_at(line0, w + k))) = o;
    }
  }
}

}  // namespace torch_transpose
