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

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "tile_order.cuh"

namespace torch_transpose {

// Tile side in elements: each tile row is at least one 128-byte line for every width, and
// 2-byte tiles are 128 wide so that each thread keeps 8 vector loads in flight (64x64 bf16
// tiles left only 2 and reached 0.81 of copy on the H200, 2026-11-29).
// 8-byte tiles are 64 wide for the same reason (32x32 left 2 loads in flight: 0.88 of copy).
template <int E> struct TileShape { static constexpr int kTile = E <= 2 ? 128 : (E <= 8 ? 64 : 32); };
template <int E> struct TilePad { static constexpr int kPad = E >= 4 ? 1 : 4 / E; };

// On sm_90 and newer, 1-byte plans with 16-byte vectors go to the copy engine's tiles first
// (tma_byte_tile_transpose.cuh); these byte tiles serve the plans it refuses (two or more batch
// dims, older GPUs, TORCH_TRANSPOSE_TMA_TILE=0).
// 1-byte tiles with 16-byte vectors can be 256 x 256 instead: each tile row is then 256 bytes,
// two lines, on both sides. The 128-byte rows of 128 x 128 byte tiles were the one thing 1-byte
// tiles (0.91-0.93 of copy) did not share with 2- and 4-byte tiles (256-byte rows, 0.95-0.97);
// more bytes in flight per SM and byte permutes in the store phase had gained nothing
// (bench/NOTES.md). Measured on the H200 (A/B, one call): int8 16384^2 0.897 -> 0.936, but
// int8 8192^2 0.915 -> 0.845. Only the 16384^2 case has many tiles per resident block (4096
// tiles, 2 blocks per SM: 15 rounds; 8192^2: 4), so wide tiles are kept to plans with at
// least 12 rounds; why fewer rounds lose is not known.
constexpr int kWideByteTile = 256;
constexpr int kWideByteTileBlocksPerSm = 2;  // __launch_bounds__ below, and 66.5 KB of shared memory each
constexpr int kWideByteTileMinRounds = 12;

// TORCH_TRANSPOSE_WIDE_BYTE_TILE: 0 = never, 1 = whenever the sizes allow (tests), unset = by
// the rule above.
inline Override wide_byte_tile_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_WIDE_BYTE_TILE");
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
// H200, 2026-11-30, same-call A/B (GPU time per call by CUDA events, two rounds): fp32 64x64
// 4.66-4.80 -> 4.38-4.42 us, 256x256 4.74-4.80 -> 4.61-4.67, 8x64x64 4.80-4.99 -> 4.61-4.64
// (eager: 4.22-4.45, 4.99-5.09, 4.42-4.67). On large problems they lose badly (batched
// 4096x64x64 0.97 -> 0.70 of copy), hence the rule.
// TORCH_TRANSPOSE_SMALL_TILE: 0 = never, 1 = whenever the plan takes full-width vector tiles
// (tests), unset = by this rule.
template <int E> struct SmallTileShape { static constexpr int kTile = TileShape<E>::kTile / 2; };

inline Override small_tile_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_SMALL_TILE");
  return setting;
}

inline bool wants_small_tiles(int64_t full_size_tiles, int sm_count) {
  return decide(small_tile_override(), full_size_tiles < sm_count);
}

// 2-byte square tiles of 8-byte vectors (V = 4: one side's rows or base are off the 16-byte
// grid) at 4 blocks per SM by launch bounds, where ptxas alone takes 80 registers and so 3
// blocks (64 with the bounds, no spills; 5 blocks spilled and lost everywhere, 0.69-0.74 of
// copy). H200, same-call A/B by GPU time, two rounds, 3 -> 4 blocks (bench/NOTES.md v45,
// results/h200-ab-session42.md section 3): where the input side is the one off the grid, fp16
// Whisper conv out 32x768x1500 -> (0, 2, 1) 0.914 -> 0.925 and fp16 8192x8188 0.93 -> 0.94;
// where the output side is, bf16 32x1500x768 0.90 -> 0.85 and fp16 16x4100x4096 0.90 -> 0.80.
// Hence the rule: 4 blocks when the input side alone is off the grid. Ten cases in v46
// (results/h200-ab-session43.md section 1) held it: the rule's cases gained up to 0.01 or were
// level, 4 blocks lost 0.05-0.10 on every large case with the output side or both off the grid.
// TORCH_TRANSPOSE_HALF_TILE_BLOCKS: 0 = never (3 blocks), 1 = every 2-byte plan of 8-byte
// vectors on square tiles (tests, A/B runs), unset = the rule.
constexpr int kHalfVectorTileBlocksPerSm = 4;

inline Override half_vector_tile_blocks_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_HALF_TILE_BLOCKS");
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
// edge: the tile crosses the end of dim a or b, whose sizes are multiples of V (the caller
// checks): vectors are then masked whole, so edge tiles keep 16-byte accesses (bf16
// NCHW->NHWC at 64x128x56x56, one edge tile in 25, ran at 0.6 of copy with scalar edge tiles;
// 0.91 with these). Register cost, from ptxas for sm_90: 2-byte 64 -> 79 with a run-time
// `edge` (106 as a template flag), 4-byte 62 -> 64; but 1-byte 62 -> 126 (int8 fell from 0.91
// to 0.72 of copy) and 8-byte 64 -> 121 (fp64 fell from 0.97 to 0.83), so those keep scalar
// edges (kVectorEdges).
// in_row(row): where input row b0 + row of the tile starts (its element a = 0); the square
// kernels' rows are in_sb apart (vector_tile below), the gather tiles' are found by an indexer.
// kFetch256 (with kEvictLast only): the loads ask L2 for 256-byte fills (load_global says why).
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
// dynamic shared memory (the launcher opts the kernel in). A minimum of 0 blocks per SM leaves
// ptxas its own register choice; an explicit 1 let it take 98-254 registers (int8 fell from 0.91
// to 0.75 of copy, bench/NOTES.md v9). kStreams: blocks walk args.streams' slots (tile_order.cuh).
// kMinBlocks: a minimum of blocks per SM for the other tiles (kHalfVectorTileBlocksPerSm).
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
