#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "narrow_transpose.cuh"

namespace torch_transpose {

constexpr int kNarrowBlockN = 16;
constexpr int kNarrowBlockWide = 128;
static_assert(kNarrowBlockWide == NarrowShape<uint32_t>::kWide, "NarrowArgs counts tiles of this width");

// narrow_block: 0 = never, 1 = both directions (tests), unset = dense outputs only.
inline Override narrow_block_override() {
  const Override setting = switch_override("narrow_block");
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
