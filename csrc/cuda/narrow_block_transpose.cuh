// Narrow transposes of N = 16 four-byte elements from 16 lines into dense rows (16x4194304 ->
// 4194304x16), shaped like Inductor's kernel for that case (XBLOCK 16, YBLOCK 128, 8 warps, 26
// registers, 100% theoretical occupancy; ncu, H200, session 15: 126.7 us where our warp-pair
// narrow kernel took 131.2). A block of 256 threads owns one 128 x 16 tile (8 KB), the warp
// tile of narrow_transpose.cuh, and each thread moves two 16-byte vectors per side: no loops,
// one barrier, 32 registers, 8 blocks per SM.
// H200, same-call A/Bs in two calls, two rounds each (bench/NOTES.md v17): 16x4194304 0.972-0.975
// -> 0.977-0.979. The other direction lost (4194304x16 0.959-0.962 -> 0.949-0.950), so dense
// inputs stay with the warp-pair kernel. Loads through ld.global or ld.global.L1::evict_last
// (Triton's L1 hint, without its L2 policy) instead of the read-only path: no change (0.977
// all three). Since v29 the lean narrow kernel (lean_narrow_transpose.cuh: this tile at 64 wide,
// no grid loop) takes the plans of whole tiles and at most one batch dim in both directions;
// this kernel keeps the dense outputs it refuses.
//
// Shared memory holds the 16 lines (of 128 elements here) unpadded; 16-byte chunk c of line i sits at
// chunk c ^ (2 * ((i / 4) % 4)). A dense-side vector (position w, lines 4a..4a+3) then reads or
// writes element k at line 4a + k, column w ^ 8a: over a warp (8 positions x 4 line groups)
// that is 32 distinct banks for every k, while the lines side moves whole chunks.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "narrow_transpose.cuh"

namespace torch_transpose {

constexpr int kNarrowBlockN = 16;
constexpr int kNarrowBlockWide = 128;
static_assert(kNarrowBlockWide == NarrowShape<uint32_t>::kWide, "NarrowArgs counts tiles of this width");

// TORCH_TRANSPOSE_NARROW_BLOCK: 0 = never, 1 = both directions (tests), unset = dense outputs only.
inline Override narrow_block_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_NARROW_BLOCK");
  return setting;
}

// Where 16-byte chunk `chunk` of line `line` sits in shared memory, in chunks (the swizzle above),
// for lines of kWide elements (32 or more, so that the swizzle stays inside the line).
template <int kWide = kNarrowBlockWide>
__device__ __forceinline__ unsigned narrow_block_chunk(unsigned line, unsigned chunk) {
  return line * (kWide / 4) + (chunk ^ (2 * ((line / 4) % 4)));
}

// One tile of 16 lines x kWide four-byte elements, by a block of kBlockThreads, each moving
// kPer = kWide * 16 / 4 / kBlockThreads 16-byte vectors per side. `src` and `dst` point at the
// tile's first element on each side; lines lie `stride` elements apart. Ends with the tile
// stored, not with a barrier: a caller that reuses `tile` syncs first. Shared by this kernel and
// the lean narrow kernel (lean_narrow_transpose.cuh). Indices are unsigned: signed ones cost a
// sign fix-up per division by a power of two.
template <bool kDenseIn, int kWide, int kBlockThreads, bool kEvictLast = false>
__device__ __forceinline__ void narrow_block_tile(const uint32_t* __restrict__ src, uint32_t* __restrict__ dst,
                                                  int32_t stride, uint32_t* tile) {
  constexpr unsigned kChunksPerLine = kWide / 4, kPer = kWide * kNarrowBlockN / 4 / kBlockThreads;
  static_assert(kWide >= 32 && kPer >= 1 && kPer * kBlockThreads * 4 == kWide * kNarrowBlockN, "whole chunks per thread");
  using Chunk = Vec<uint32_t, 4>;
  Chunk* chunks = reinterpret_cast<Chunk*>(tile);
  Chunk v[kPer];
  if (kDenseIn) {
#pragma unroll
    for (unsigned u = 0; u < kPer; ++u) v[u] = load_global<kEvictLast>(reinterpret_cast<const Chunk*>(src) + u * kBlockThreads + threadIdx.x);
#pragma unroll
    for (unsigned u = 0; u < kPer; ++u) {
      const unsigned d = u * kBlockThreads + threadIdx.x, w = d / 4, a = d % 4;
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) tile[(4 * a + k) * kWide + (w ^ (8 * a))] = v[u].v[k];
    }
  } else {
#pragma unroll
    for (unsigned u = 0; u < kPer; ++u) {
      const unsigned q = u * kBlockThreads + threadIdx.x, line = q / kChunksPerLine, c = q % kChunksPerLine;
      v[u] = load_global<kEvictLast>(reinterpret_cast<const Chunk*>(src + static_cast<int32_t>(line) * stride + c * 4));
    }
#pragma unroll
    for (unsigned u = 0; u < kPer; ++u) {
      const unsigned q = u * kBlockThreads + threadIdx.x;
      chunks[narrow_block_chunk<kWide>(q / kChunksPerLine, q % kChunksPerLine)] = v[u];
    }
  }
  __syncthreads();
  if (kDenseIn) {
#pragma unroll
    for (unsigned u = 0; u < kPer; ++u) {
      const unsigned q = u * kBlockThreads + threadIdx.x, line = q / kChunksPerLine, c = q % kChunksPerLine;
      *reinterpret_cast<Chunk*>(dst + static_cast<int32_t>(line) * stride + c * 4) = chunks[narrow_block_chunk<kWide>(line, c)];
    }
  } else {
#pragma unroll
    for (unsigned u = 0; u < kPer; ++u) {
      const unsigned d = u * kBlockThreads + threadIdx.x, w = d / 4, a = d % 4;
      Chunk c;
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) c.v[k] = tile[(4 * a + k) * kWide + (w ^ (8 * a))];
      reinterpret_cast<Chunk*>(dst)[d] = c;
    }
  }
}

template <bool kDenseIn, bool kEvictLast>
__global__ void __launch_bounds__(kThreads, 8)
narrow_block_transpose_kernel(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, const NarrowArgs args) {
  __shared__ __align__(16) uint32_t tile[kNarrowBlockN * kNarrowBlockWide];
  const int32_t stride = static_cast<int32_t>(args.line_stride);
  for (uint32_t t = blockIdx.x; t < args.total_tiles; t += gridDim.x) {
    uint32_t item, wt;
    args.by_tiles.divmod(t, item, wt);
    int64_t in_off, out_off;
    args.batch.offsets(item, in_off, out_off);
    const int32_t w0 = static_cast<int32_t>(wt) * kNarrowBlockWide;
    const uint32_t* src = in + in_off + (kDenseIn ? w0 * kNarrowBlockN : w0);
    uint32_t* dst = out + out_off + (kDenseIn ? w0 : w0 * kNarrowBlockN);
    narrow_block_tile<kDenseIn, kNarrowBlockWide, kThreads, kEvictLast>(src, dst, stride, tile);
    __syncthreads();  // the next tile reuses the buffer
  }
}

// Whether a narrow plan of 4-byte elements (make_narrow_args) takes this kernel: N = 16, the wide
// dim whole tiles, and by the rule above.
inline bool wants_narrow_block(const NarrowArgs& args, bool dense_in) {
  return args.n == kNarrowBlockN && args.wide % kNarrowBlockWide == 0 && decide(narrow_block_override(), !dense_in);
}

}  // namespace torch_transpose
