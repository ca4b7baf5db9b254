// Square-tile transpose for plans whose two fast dims are both at least 32 elements long.
//
// Dim `a` is the input's fastest dim, `b` the output's. A block owns a TILE x TILE tile: it
// loads it walking `a` (coalesced reads), parks it in shared memory, and stores it walking `b`
// (coalesced writes); the transpose lives in the index math of the store.
// * V > 1 (aligned, unit-stride fast dims): 16-byte global accesses, one 16-byte shared store
//   per vector, and an XOR swizzle of 16-byte chunks (chunk c of tile row r sits at c ^ (r / V))
//   so that the column gathers of the store phase hit distinct banks. Edge tiles mask whole
//   vectors where both fast dims are multiples of V, else they take the scalar edge path.
// * V == 1: scalar, rows padded against bank conflicts; edge tiles use one bounds predicate,
//   symmetric under the transpose, for load and store.
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"

namespace torch_transpose {

template <int E> struct TileShape { static constexpr int kTile = E <= 2 ? 128 : (E <= 8 ? 64 : 32); };
template <int E> struct TilePad { static constexpr int kPad = E >= 4 ? 1 : 4 / E; };

// On sm_90 and newer, 1-byte plans with 16-byte vectors go to the copy engine's tiles first
// (tma_byte_tile_transpose.cuh); these byte tiles serve the plans it refuses (two or more batch
// dims, older GPUs, TORCH_TRANSPOSE_KERNELS=tma_tile=0).
// 1-byte tiles with 16-byte vectors can be 256 x 256 instead: each tile row is then 256 bytes,
// two lines, on both sides.
constexpr int kWideByteTile = 256;
constexpr int kWideByteTileBlocksPerSm = 2;  // __launch_bounds__ below, and 66.5 KB of shared memory each
constexpr int kWideByteTileMinRounds = 12;

// wide_byte_tile: 0 = never, 1 = whenever the sizes allow (tests), unset = by
// the rule above.
inline Override wide_byte_tile_override() {
  const Override setting = switch_override("wide_byte_tile");
  return setting;
}

// Whether a 1-byte vector plan with these fast dims and `tiles` wide tiles takes wide tiles.
// 1-byte edge tiles are scalar, and a fast dim of n elements leaves an edge strip of n % 256
// with wide tiles but n % 128 with narrow ones: up to 128 more scalar rows. Each fast dim must
// therefore be whole wide tiles or at least 2048 long (the strip then adds at most 1/16).
inline bool wide_byte_tiles_fit(int64_t size_a, int64_t size_b) {
  auto fits = [](int64_t n) { return n % kWideByteTile == 0 || n >= 8 * kWideByteTile; };
  return fits(size_a) && fits(size_b);
}

inline bool wide_byte_tiles_pay_off(int64_t tiles, int sm_count) {
  return tiles >= int64_t{kWideByteTileMinRounds} * kWideByteTileBlocksPerSm * sm_count;
}

// Square tiles of side `tile` a plan would take, without building its SquareTileArgs (whose
// batch indexer the launch needs only once the tile side is chosen): tiles along a and b times
// the batch items.
inline int64_t square_tile_count(const LayoutPlan& plan, int64_t tile) {
  const FastDims f = FastDims::from_plan(plan);
  return ceil_div(f.size_a, tile) * ceil_div(f.size_b, tile) * (plan.numel / (f.size_a * f.size_b));
}

inline bool wants_wide_byte_tiles(int64_t size_a, int64_t size_b, int64_t tiles, int sm_count) {
  return wide_byte_tiles_fit(size_a, size_b) && decide(wide_byte_tile_override(), wide_byte_tiles_pay_off(tiles, sm_count));
}

// Problems with fewer square tiles than SMs (64x64, batched 8x64x64) take tiles of half the
// side: 4x the blocks, each with fewer loads before its barrier, so the few SMs that have work
// finish sooner (these calls are latency, not bandwidth). Full-width vector tiles only.
template <int E> struct SmallTileShape { static constexpr int kTile = TileShape<E>::kTile / 2; };

inline Override small_tile_override() {
  const Override setting = switch_override("small_tile");
  return setting;
}

inline bool wants_small_tiles(int64_t full_size_tiles, int sm_count) {
  return decide(small_tile_override(), full_size_tiles < sm_count);
}

constexpr int kHalfVectorTileBlocksPerSm = 4;

inline Override half_vector_tile_blocks_override() {
  const Override setting = switch_override("half_tile_blocks");
  return setting;
}

inline bool wants_four_block_half_vector_tiles(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address) {
  const SidesOffGrid off = sides_off_grid(plan, in_address, out_address);
  return decide(half_vector_tile_blocks_override(), off.input && !off.output);
}

// Shared memory of one tile (the scalar layout's padded rows; the vector layout needs less).
template <typename T, int kTile> constexpr int tile_smem_bytes() {
  return kTile * (kTile + TilePad<sizeof(T)>::kPad) * static_cast<int>(sizeof(T));
}
constexpr int kStaticSmemBytes = 48 * 1024;  // the most a block may declare statically

// One tile with V-element vectors (V > 1). The plan guarantees in_sa == out_sb == 1 and every
// other stride and both base addresses aligned to V elements. All loads are issued before the
// first shared store (compile-time trip counts), so each thread keeps kIters loads in flight.
template <typename T, int V, int kTile, typename Index, typename Args, int kBlock = kThreads, bool kEvictLast = false,
          bool kFetch256 = false, typename InRow>
__device__ __forceinline__ void vector_tile_rows(bool edge, InRow&& in_row, T* __restrict__ dst, Index a0, Index b0,
                                                 Index out_sa, const Args& args, T* tile, Vec<T, V>* chunks) {
  constexpr int kTx = kTile / V;       // threads (and chunks) per tile row
  constexpr int kTy = kBlock / kTx;    // tile rows per pass
  constexpr int kIters = kTile / kTy;
  static_assert(kTile % V == 0 && kBlock % kTx == 0 && (kTx & (kTx - 1)) == 0, "tile must split evenly");
  const int tx = threadIdx.x % kTx, ty = threadIdx.x / kTx;
  // Whether this thread's vector column is inside dim a (load) and dim b (store).
  const bool a_inside = static_cast<int64_t>(a0) + tx * V < args.size_a;
  const bool b_inside = static_cast<int64_t>(b0) + tx * V < args.size_b;
  Vec<T, V> v[kIters];
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const int row = ty + i * kTy;  // walks b
    // Addresses are formed only for elements inside the tensor: the 32-bit index is proven
    // for those alone.
    if (edge && (static_cast<int64_t>(b0) + row >= args.size_b || !a_inside)) continue;
    v[i] = load_global<kEvictLast, kFetch256>(reinterpret_cast<const Vec<T, V>*>(in_row(row) + a0 + tx * V));
  }
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const int r = ty + i * kTy;
    chunks[r * kTx + (tx ^ ((r / V) % kTx))] = v[i];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kIters; ++i) {  // r walks a; gather V consecutive b from rows tx*V+k
    const int r = ty + i * kTy;
    if (edge && (static_cast<int64_t>(a0) + r >= args.size_a || !b_inside)) continue;
    Vec<T, V> w;
#pragma unroll
    for (int k = 0; k < V; ++k) w.v[k] = tile[(tx * V + k) * kTile + (((r / V) ^ tx) * V) + r % V];
    *reinterpret_cast<Vec<T, V>*>(dst + (a0 + r) * out_sa + b0 + tx * V) = w;
  }
}

// One tile whose input rows are in_sb apart (the square and lean tile kernels).
template <typename T, int V, int kTile, typename Index, typename Args, int kBlock = kThreads, bool kEvictLast = false>
__device__ __forceinline__ void vector_tile(bool edge, const T* __restrict__ src, T* __restrict__ dst, Index a0, Index b0,
                                            Index in_sb, Index out_sa, const Args& args, T* tile,
                                            Vec<T, V>* chunks) {
  vector_tile_rows<T, V, kTile, Index, Args, kBlock, kEvictLast>(
      edge, [&](int row) { return src + (b0 + row) * in_sb; }, dst, a0, b0, out_sa, args, tile, chunks);
}

// An edge tile element by element: one bounds predicate, symmetric under the transpose, for
// load and store; rows padded against bank conflicts.
template <typename T, int kTile, typename Index, typename Args>
__device__ __forceinline__ void scalar_edge_tile(const T* __restrict__ src, T* __restrict__ dst, Index a0, Index b0,
                                                 Index in_sa, Index in_sb, Index out_sa, Index out_sb,
                                                 const Args& args, T* tile) {
  constexpr int kPitch = kTile + TilePad<sizeof(T)>::kPad;
  auto in_bounds = [&](int a_off, int b_off) {
    return static_cast<int64_t>(a0) + a_off < args.size_a && static_cast<int64_t>(b0) + b_off < args.size_b;
  };
  for (int i = threadIdx.x; i < kTile * kTile; i += kThreads) {
    const int r = i / kTile, c = i % kTile;  // r walks b, c walks a: coalesced reads
    if (in_bounds(c, r)) tile[r * kPitch + c] = src[(b0 + r) * in_sb + (a0 + c) * in_sa];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kTile * kTile; i += kThreads) {
    const int r = i / kTile, c = i % kTile;  // r walks a, c walks b: coalesced writes
    if (in_bounds(r, c)) dst[(a0 + r) * out_sa + (b0 + c) * out_sb] = tile[c * kPitch + r];
  }
}

// kTile: TileShape's side, or kWideByteTile for 1-byte vector tiles. Tiles above 48 KB live in
// dynamic shared memory (the launcher opts the kernel in).
template <typename T, int V, typename Index, int kTile = TileShape<sizeof(T)>::kTile, bool kStreams = false,
          bool kEvictLast = false, int kMinBlocks = 0>
__global__ void __launch_bounds__(kThreads, kTile == kWideByteTile ? kWideByteTileBlocksPerSm : kMinBlocks)
tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const SquareTileArgs args) {
  constexpr int kPitch = kTile + TilePad<sizeof(T)>::kPad;  // scalar layout
  constexpr bool kDynamic = tile_smem_bytes<T, kTile>() > kStaticSmemBytes;
  __shared__ __align__(16) unsigned char static_smem[kDynamic ? 16 : tile_smem_bytes<T, kTile>()];
  unsigned char* smem = kDynamic ? dynamic_smem() : static_smem;
  T* tile = reinterpret_cast<T*>(smem);
  Vec<T, V>* chunks = reinterpret_cast<Vec<T, V>*>(smem);

  const Index in_sa = static_cast<Index>(args.in_sa), in_sb = static_cast<Index>(args.in_sb);
  const Index out_sa = static_cast<Index>(args.out_sa), out_sb = static_cast<Index>(args.out_sb);

  for (int64_t slot = blockIdx.x; slot < (kStreams ? args.streams.slots : args.order.total); slot += gridDim.x) {
    const int64_t t = kStreams ? args.streams.tile_of_slot(slot) : slot;
    if (kStreams && t >= args.order.total) continue;  // the last stream's unused slots (whole blocks)
    const TileSpot spot = args.locate(t);
    const T* src = in + spot.in_off;
    T* dst = out + spot.out_off;
    const Index a0 = static_cast<Index>(spot.ta * kTile), b0 = static_cast<Index>(spot.tb * kTile);
    const bool interior = static_cast<int64_t>(a0) + kTile <= args.size_a && static_cast<int64_t>(b0) + kTile <= args.size_b;

    if constexpr (V > 1) {
      constexpr bool kVectorEdges = sizeof(T) == 2 || sizeof(T) == 4;
      if (interior || (kVectorEdges && args.size_a % V == 0 && args.size_b % V == 0)) {
        vector_tile<T, V, kTile, Index, SquareTileArgs, kThreads, kEvictLast>(!interior, src, dst, a0, b0, in_sb, out_sa, args,
                                                                             tile, chunks);
      } else {
        scalar_edge_tile<T, kTile>(src, dst, a0, b0, in_sa, in_sb, out_sa, out_sb, args, tile);
      }
    } else if (interior) {
      constexpr int kSx = kTile < kThreads ? kTile : kThreads, kSy = kThreads / kSx;
      constexpr int kIters = kTile / kSy;
      const int sx = threadIdx.x % kSx, sy = threadIdx.x / kSx;
      T v[kIters];
#pragma unroll
      for (int i = 0; i < kIters; ++i) v[i] = src[(b0 + sy + i * kSy) * in_sb + (a0 + sx) * in_sa];
#pragma unroll
      for (int i = 0; i < kIters; ++i) tile[(sy + i * kSy) * kPitch + sx] = v[i];
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const int r = sy + i * kSy;
        dst[(a0 + r) * out_sa + (b0 + sx) * out_sb] = tile[sx * kPitch + r];
      }
    } else {
      scalar_edge_tile<T, kTile>(src, dst, a0, b0, in_sa, in_sb, out_sa, out_sb, args, tile);
    }
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

}  // namespace torch_transpose
