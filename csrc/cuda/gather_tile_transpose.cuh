// Gather tiles: square tiles over (a, q), where q walks the output's run: its fast dim b and the
// dims that continue b in the output's memory, merged into one index. The output is then a plain
// matrix of size_a rows, each of the run's length, and every tile writes kTile whole-vector rows
// of kTile elements, as a lean square tile does; the input row of each q (a's elements, unit
// stride) is found by dividing q into the run's dims.
//
// Why: the 5-D permute (4,2,0,3,1) of 20x30x40x50x60 has a = 60 and b = 30. Box tiles
// (box_tile_transpose.cuh) take b whole with a chunk of the dim of 50, so each tile writes 60
// output runs of 240 bytes, half of them starting inside a 32-byte sector that the next tile
// finishes; they run at 0.86 of copy, where lean tiles on (2, 1, 0), whose 64 output rows of 256
// bytes lie as far apart, run at 0.945 (bench/NOTES.md v34: the box kernel also issues 4.7 times
// their instructions per byte). Here the output's run is all of (i2, i0, i3, i1), 1.2 M elements,
// so a tile writes 60 rows of 256 aligned bytes and reads 64 rows of 240 bytes (a whole), with the
// lean tile's instruction stream plus one division per run dim for each row a thread loads.
// The same holds where b is 32 or more but its rows are not whole tiles (wants_gather_rows): the
// 4-D reversal of 63x64x64x256 writes rows of 63 floats, which window tiles shift to the sector
// grid row by row; a gather tile writes 64 aligned elements of the run (63 of one row and one of
// the next) whatever b.
#pragma once

#include "../env_switch.h"
#include "cuda_common.cuh"
#include "lean_batch.cuh"
#include "lean_tile_transpose.cuh"  // lean_tile_smem_bytes: the same 4 blocks per SM
#include "tile_transpose.cuh"

namespace torch_transpose {

// TORCH_TRANSPOSE_GATHER_TILE: 0 = never (box or flat tiles take these plans), 1 = whenever the
// plan fits, unset = the rule in make_gather_tile_args.
inline Override gather_tile_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_GATHER_TILE");
  return setting;
}

constexpr int kMaxGatherDims = 6;  // dims in the output's run, b included

// The output's run: dim 0 is b, each next dim continues it in the output (its output stride is
// the product of the sizes before it). Input strides per dim; sizes as divisors, the last dim's
// unused (q is below the run's length).
struct GatherRun {
  int rank = 0;
  int32_t in_strides[kMaxGatherDims] = {};
  FastDivmod by_size[kMaxGatherDims];

  // Input element offset of run position q.
  __device__ __forceinline__ int32_t in_offset(uint32_t q) const {
    int32_t offset = 0;
#pragma unroll
    for (int d = 0; d < kMaxGatherDims; ++d) {
      if (d + 1 == rank) return offset + static_cast<int32_t>(q) * in_strides[d];
      uint32_t rest, i;
      by_size[d].divmod(q, rest, i);
      offset += static_cast<int32_t>(i) * in_strides[d];
      q = rest;
    }
    return offset;
  }
};

struct GatherTileArgs {
  GatherRun run;
  int32_t out_sa = 0;             // a's output stride (the output matrix's row pitch)
  LeanBatch batch;                // dims outside a and the run (at most two)
  int64_t size_a = 0, size_b = 0;  // size_b: the run's length; vector_tile_rows masks edge tiles by these
  bool two_batch_dims = false;
};

// Plans whose fast dims are both 32 or more and whose output run continues b into other dims
// take gather tiles where their output rows are not whole tiles (1-byte plans: below): rows that
// are not whole 16-byte vectors (window tiles shift each row's window to the sector grid) or
// that end inside a tile (square tiles idle its last part). A gather tile writes whole tile rows
// of the run whatever b. H200, same call, two rounds, ours / copy by GPU time, before -> gather
// tiles (bench/NOTES.md v58): the 4-D reversal of 63x64x64x256 fp32 0.689 -> 0.940, bf16 0.413 ->
// 0.921, fp64 0.860 -> 0.942; fp16 (2, 1, 0) of 50x512x1024 0.352 -> 0.941; whole-vector rows:
// the reversal of 40x64x64x256 fp32 0.823 -> 0.951, bf16 0.63 -> 0.93, fp64 0.555 -> 0.94,
// (2, 1, 0) of 96x256x1024 fp32 0.89 -> 0.975, bf16 0.90 -> 0.94.
// 1-byte gather tiles with an edge path run at 0.55-0.64 of copy whatever the layout: that path
// takes 72 registers (3 blocks per SM; 32 without it). Where a and the run are whole tiles they
// run without it (gather_whole_tiles) and reach 0.86-0.93, and where few tiles are edge tiles
// those go element by element (gather_edges, 37 registers); so 1-byte plans take them there for
// any rows that are not whole tiles, and with masked-vector edges only for rows shorter than a
// tile that are not whole vectors, where realign windows idle most of their 128-byte windows. H200,
// GPU time, two rounds, ratio to copy (bench/NOTES.md v60): the int8 reversal of 63x64x64x512
// (realign windows 0.163) 0.579 -> 0.910 without the edge path, 35x128x64x384 0.589 -> 0.909,
// (2, 1, 0) of 50x512x1024 0.556 -> 0.884; whole-tile plans the rule gave other kernels before
// -> gather tiles: the reversal of 48x64x64x512 (square edge tiles: two batch dims that cannot
// merge, so the copy engine's tiles refuse) 0.081 -> 0.915, of 176x64x64x512 0.247 -> 0.864, of
// 200x32x32x512 (rows longer than a tile, not whole vectors: realign windows) 0.529 -> 0.923,
// (2, 1, 0) of 64x80x8192 (the copy engine's tiles) 0.742 -> 0.928, of 96x256x1024 level
// (0.925-0.937 -> 0.907-0.931). With the edge path they lost (bench/NOTES.md v58, one round):
// (2, 1, 0) of 1000x1000x64 0.573 -> 0.426, of 1000x1000x128 0.693 -> 0.596 (neither is whole tiles).
// TORCH_TRANSPOSE_GATHER_ROWS: 0 = none of them (window, realign window, square and TMA byte
// tiles), 1 = every such plan that fits, whole tiles too (tests, A/B runs), unset = the rule.
inline Override gather_rows_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_GATHER_ROWS");
  return setting;
}
// Which plans the launcher offers gather tiles for their rows: none, those whose kernel has no
// masked-vector edge path (gather_edges: whole tiles, or 1-byte tiles with few edge tiles taken
// element by element; the launcher checks once the run is known), or any that fits.
enum class GatherRows { None, WithoutVectorEdges, Any };
inline GatherRows wants_gather_rows(int element_bytes, bool whole_vector_rows, int64_t size_b, int tile) {
  const Override setting = gather_rows_override();
  if (setting != Override::Rule) return setting == Override::Always ? GatherRows::Any : GatherRows::None;
  if (element_bytes != 1) return !whole_vector_rows || size_b % tile != 0 ? GatherRows::Any : GatherRows::None;
  if (size_b % tile == 0) return GatherRows::None;
  return !whole_vector_rows && size_b < tile ? GatherRows::Any : GatherRows::WithoutVectorEdges;
}

// TORCH_TRANSPOSE_GATHER_FETCH_256: 1 = the evict_last loads ask L2 for 256-byte fills, 0 = they
// do not, unset = gather_loads' rule. Why: the 5-D permute's input rows are 240 bytes at 240-byte
// steps, so most start and end inside a 128-byte line that the neighbouring row (often another
// block's) also reads; fetching both lines at once presumably spares L2 a second miss (not
// measured). A/B (H200, bench/NOTES.md v41, GPU time, 3 rounds): fp32 5-D 0.948 -> 0.959-0.960
// of copy.
inline bool gather_fetch_256(bool rule) {
  static const Override setting = env_override("TORCH_TRANSPOSE_GATHER_FETCH_256");
  return decide(setting, rule);
}

// TORCH_TRANSPOSE_GATHER_HALF_VECTORS: 0 = 2-byte plans of the 5-D route whose a is not whole
// 16-byte vectors go to box tiles, unset (or 1) = gather tiles of side 64 with 8-byte vectors take
// those that fit (a whole 8-byte vectors; rows of 64 elements are 128 bytes, one line, as 4-byte
// tiles' rows of 64 are two). Why: the bf16 5-D permute (4, 2, 0, 3, 1) of 20x30x40x50x60 has
// a = 60, 120 bytes, and ran at 0.455 of copy on box tiles, against 0.956 for fp32 on gather tiles
// (bench/NOTES.md v59, v60).
inline bool gather_half_vectors() {
  static const Override setting = env_override("TORCH_TRANSPOSE_GATHER_HALF_VECTORS");
  return setting != Override::Never;
}
constexpr int kHalfVectorGatherTile = 64;

// How gather tiles load, by the route that asked for them: plans with a fast dim below 32 (the
// 5-D permute's, in place of box tiles) or output rows that are not whole tiles
// (wants_gather_rows). The first take the lean tiles' rule (evict_last loads but for 2-byte
// elements) with 256-byte fills. The second take evict_last loads in every width, and 256-byte
// fills for 2-byte elements only. H200, GPU time, two rounds, ratio to copy, the first rule ->
// this one, measured in one call on one build as switch settings (bench/NOTES.md v59): fills off,
// the 4-D reversal of 63x64x64x256 fp64 0.942 -> 0.950, fp32 0.951 -> 0.961, 40x64x64x256 fp64
// 0.940 -> 0.950, fp32 0.943 -> 0.950, (2, 1, 0) of 96x256x1024 fp32 level (0.977); evict_last
// loads, bf16 63x64x64x256 0.910-0.922 -> 0.924-0.940, fp16 (2, 1, 0) of 50x512x1024 0.942 ->
// 0.950, bf16 of 1000x1000x64 0.850 -> 0.882. 1-byte (another call): fills off, the reversal of
// 63x64x64x512 0.547 -> 0.580, 33x64x64x512 0.575 -> 0.593, 35x128x64x384 0.551 -> 0.588, (2, 1, 0)
// of 50x512x1024 0.576-0.585 -> 0.570.
struct GatherLoads {
  bool evict_last, fetch_256;
};
inline GatherLoads gather_loads(int element_bytes, bool ragged_rows) {
  const bool evict_last = l2_evict_last_loads(ragged_rows || element_bytes != 2);
  return {evict_last, evict_last && gather_fetch_256(!ragged_rows || element_bytes == 2)};
}

// TORCH_TRANSPOSE_GATHER_WHOLE_TILES: 0 = gather tiles keep an edge path on every plan (masked
// vectors, or element by element for 1-byte plans: gather_edges), unset (or 1) = plans whose a
// and run are whole tiles take kernels without one. Why: the masked-vector edge
// path costs 1-byte gather tiles 72 registers against 32-35 without it (ptxas -v, sm_90), 3
// blocks per SM against 4. H200, GPU time, two rounds, ratio to copy, with the edge path ->
// without (bench/NOTES.md v60): the int8 reversal of 63x64x64x512 0.579 -> 0.910, fp16 (2, 1, 0)
// of 50x512x1024 0.946-0.952 -> 0.963-0.967 (2-byte: 49 registers -> 40), fp32 and fp64 level
// to +0.01 (the fp32 reversal of 63x64x64x256 0.957-0.967 -> 0.969).
inline bool gather_whole_tiles(const GatherTileArgs& args, int tile) {
  static const Override setting = env_override("TORCH_TRANSPOSE_GATHER_WHOLE_TILES");
  return setting != Override::Never && args.size_a % tile == 0 && args.size_b % tile == 0;
}

// How a gather kernel treats tiles that cross the end of a or of the run (gather_edges):
// kNoEdges: there are none (whole tiles); kVectorEdges: masked vectors (16 bytes, or 8 for
// half-vector tiles; vector_tile_rows); kScalarEdges (1-byte tiles only): element by element (gather_edge_tile),
// 37 registers against the masked vectors' 72 (ptxas -v, sm_90; 2-byte tiles: 47 against 49,
// nothing to gain), but bytes move one at a time, so only plans with few edge tiles take them.
enum GatherEdgeKind : int { kNoEdges, kVectorEdges, kScalarEdges };

// TORCH_TRANSPOSE_GATHER_SCALAR_EDGES: 0 = 1-byte gather tiles mask 16-byte vectors on edge
// tiles, 1 = they go element by element on every plan with edges, unset = the rule: element by
// element where at most one tile in 8 is an edge tile. The bound is not tuned: H200, GPU time,
// ratio to copy (bench/NOTES.md v60), int8 (2, 1, 0) of 1000x1000x1024 (8 edge tiles in 62504)
// masked vectors 0.582 -> element by element 0.847 (other kernels 0.718), fp8 of 1000x1000x256
// (2 in 15626) 0.583 -> 0.770 (0.710), of 1000x1000x128 (1 in 7813) 0.586 -> 0.692 (0.696); but
// int8 of 1000x1000x192 (every other tile) 0.473 -> 0.131 (0.637).
inline GatherEdgeKind gather_edges(const GatherTileArgs& args, int tile, int element_bytes) {
  static const Override scalar = env_override("TORCH_TRANSPOSE_GATHER_SCALAR_EDGES");
  if (gather_whole_tiles(args, tile)) return kNoEdges;
  const int64_t tiles_a = ceil_div(args.size_a, tile), tiles_q = ceil_div(args.size_b, tile);
  const int64_t edge_tiles = tiles_a * tiles_q - (args.size_a / tile) * (args.size_b / tile);
  const bool few_edge_tiles = edge_tiles * 8 <= tiles_a * tiles_q;
  return element_bytes == 1 && decide(scalar, few_edge_tiles) ? kScalarEdges : kVectorEdges;
}

// An edge tile element by element: each thread loads elements of tile rows (b) from their input
// rows, one run division per element, and stores elements of output rows (a). The tile is the
// vector path's buffer, unpadded: bank conflicts cost only edge tiles.
// It repeats the square tiles' scalar_edge_tile but for how it finds input rows and the tile's
// pitch, on purpose: one body for both (input rows by an offset indexer, bounds in 64 bits) took
// these kernels from 37 to 34 registers and lost on the H200 in two rounds each of two builds,
// alternated in one call (bench/NOTES.md v61): int8 (2, 1, 0) of 1000x1000x1024 0.840 / 0.840 ->
// 0.776 / 0.776, fp8 of 1000x1000x256 0.759 / 0.759 -> 0.710 / 0.710.
template <typename T, int kTile>
__device__ __forceinline__ void gather_edge_tile(const T* __restrict__ src, T* __restrict__ dst, int32_t a0, int32_t b0,
                                                 const GatherTileArgs& args, T* tile) {
  for (int i = threadIdx.x; i < kTile * kTile; i += kThreads) {
    const int r = i / kTile, c = i % kTile;  // r walks b, c walks a: coalesced reads
    if (a0 + c < args.size_a && b0 + r < args.size_b)
      tile[r * kTile + c] = src[args.run.in_offset(static_cast<uint32_t>(b0 + r)) + a0 + c];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kTile * kTile; i += kThreads) {
    const int r = i / kTile, c = i % kTile;  // r walks a, c walks b: coalesced writes
    if (a0 + r < args.size_a && b0 + c < args.size_b) dst[(a0 + r) * args.out_sa + b0 + c] = tile[c * kTile + r];
  }
}

// kEdges: a GatherEdgeKind.
template <typename T, int V, int kTile, bool kTwoBatchDims, bool kEvictLast, bool kFetch256, int kEdges>
__global__ void __launch_bounds__(kThreads)
gather_tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const GatherTileArgs args) {
  __shared__ __align__(16) T tile[kTile * kTile];
  Vec<T, V>* chunks = reinterpret_cast<Vec<T, V>*>(tile);
  const LeanBlock at = locate_lean_block<kTile, kTwoBatchDims>(args.batch);  // b0: the tile's first run position
  const bool edge = kEdges != kNoEdges && (at.a0 + kTile > args.size_a || at.b0 + kTile > args.size_b);
  const T* src = in + at.in_off;
  if constexpr (kEdges == kScalarEdges) {
    if (edge) return gather_edge_tile<T, kTile>(src, out + at.out_off, at.a0, at.b0, args, tile);
  }
  vector_tile_rows<T, V, kTile, int32_t, GatherTileArgs, kThreads, kEvictLast, kFetch256>(
      kEdges == kVectorEdges && edge, [&](int row) { return src + args.run.in_offset(static_cast<uint32_t>(at.b0 + row)); },
      out + at.out_off, at.a0, at.b0, args.out_sa, args, tile, chunks);
}

// Whether the plan takes gather tiles of side kTile with vectors of vector_bytes (16, or 8 for
// half-vector tiles: gather_half_vectors), and their arguments and grid (x: tiles along the run,
// y: along a, z: batch items). Fits: a transpose with unit strides on both fast dims, 32-bit
// offsets, a run of 2..kMaxGatherDims dims, at most two batch dims, a and the run whole vectors,
// every stride and both bases aligned to a vector, a grid within CUDA's limits.
// The rule (where the switch is unset): a at least half a tile, so that input rows are at least
// half a tile row long (the plans this replaces box tiles on, where b < 32; from b = 32 the
// launcher asks only where wants_gather_rows does, under the same rule on a).
template <int kTile>
bool make_gather_tile_args(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address, int element_bytes,
                           GatherTileArgs& args, dim3& grid, int vector_bytes = 16) {
  if (gather_tile_override() == Override::Never || plan.kind != PlanKind::Transpose || plan.needs_64bit_index ||
      element_bytes > 8 || !plan.offsets_fit_32())
    return false;
  const FastDims f = FastDims::from_plan(plan);
  if (f.in_sa != 1 || f.out_sb != 1 || !decide(gather_tile_override(), f.size_a * 2 >= kTile)) return false;
  const int64_t v = vector_bytes / element_bytes;

  // The run: b (the last plan dim), then outward while each dim continues it in the output.
  bool in_run[kMaxPlanRank] = {};
  int64_t length = 1;
  args.run = GatherRun{};
  for (int d = plan.out_fast_dim; d >= 0 && d != plan.in_fast_dim && plan.out_strides[d] == length; --d) {
    if (args.run.rank == kMaxGatherDims) return false;
    in_run[d] = true;
    args.run.in_strides[args.run.rank] = static_cast<int32_t>(plan.in_strides[d]);
    args.run.by_size[args.run.rank] = FastDivmod(static_cast<uint32_t>(plan.sizes[d]));
    if (plan.in_strides[d] % v != 0) return false;
    ++args.run.rank;
    length *= plan.sizes[d];
  }
  if (args.run.rank < 2) return false;  // b alone: square tiles are the kernel for it

  BatchIndexer batch;
  for (int d = 0; d < plan.rank; ++d) {
    if (d == plan.in_fast_dim || in_run[d]) continue;
    if (batch.rank == 2 || plan.in_strides[d] % v != 0 || plan.out_strides[d] % v != 0) return false;
    batch.sizes[batch.rank] = plan.sizes[d];
    batch.in_strides[batch.rank] = plan.in_strides[d];
    batch.out_strides[batch.rank] = plan.out_strides[d];
    ++batch.rank;
  }
  if (f.size_a % v != 0 || length % v != 0 || f.out_sa % v != 0 || in_address % vector_bytes != 0 ||
      out_address % vector_bytes != 0)
    return false;
  const int64_t tiles_q = ceil_div(length, kTile), tiles_a = ceil_div(f.size_a, kTile), items = batch.count();
  if (tiles_q > 0x7fffffff || tiles_a > 65535 || items > 65535 || !LeanBatch::from(batch, args.batch)) return false;
  args.out_sa = static_cast<int32_t>(f.out_sa);
  args.size_a = f.size_a;
  args.size_b = length;
  args.two_batch_dims = batch.rank == 2;
  grid = dim3{static_cast<unsigned int>(tiles_q), static_cast<unsigned int>(tiles_a), static_cast<unsigned int>(items)};
  return true;
}

}  // namespace torch_transpose
