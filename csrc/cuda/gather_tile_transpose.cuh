// Gather tiles: square tiles over (a, q), where q walks the output's run: its fast dim b and the
// dims that continue b in the output's memory, merged into one index. The output is then a plain
// matrix of size_a rows, each of the run's length, and every tile writes kTile whole-vector rows
// of kTile elements, as a lean square tile does; the input row of each q (a's elements, unit
// stride) is found by dividing q into the run's dims.
//
// Why: the 5-D permute (4,2,0,3,1) of 20x30x40x50x60 has a = 60 and b = 30.
#pragma once

#include "../kernel_switches.h"
#include "cuda_common.cuh"
#include "lean_batch.cuh"
#include "lean_tile_transpose.cuh"  // lean_tile_smem_bytes: the same 4 blocks per SM
#include "tile_transpose.cuh"

namespace torch_transpose {

// gather_tile: 0 = never (box or flat tiles take these plans), 1 = whenever the
// plan fits, unset = the rule in make_gather_tile_args.
inline Override gather_tile_override() {
  const Override setting = switch_override("gather_tile");
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
// that end inside a tile (square tiles idle its last part).
inline Override gather_rows_override() {
  const Override setting = switch_override("gather_rows");
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

// gather_fetch_256: 1 = the evict_last loads ask L2 for 256-byte fills, 0 = they
// do not, unset = gather_loads' rule.
inline bool gather_fetch_256(bool rule) {
  const Override setting = switch_override("gather_fetch_256");
  return decide(setting, rule);
}

// gather_half_vectors: 0 = 2-byte plans of the 5-D route whose a is not whole
// 16-byte vectors go to box tiles, unset (or 1) = gather tiles of side 64 with 8-byte vectors take
// those that fit (a whole 8-byte vectors; rows of 64 elements are 128 bytes, one line, as 4-byte
// tiles' rows of 64 are two).
inline bool gather_half_vectors() {
  const Override setting = switch_override("gather_half_vectors");
  return setting != Override::Never;
}
constexpr int kHalfVectorGatherTile = 64;

// How gather tiles load, by the route that asked for them: plans with a fast dim below 32 (the
// 5-D permute's, in place of box tiles) or output rows that are not whole tiles
// (wants_gather_rows). The first take the lean tiles' rule (evict_last loads but for 2-byte
// elements) with 256-byte fills.
struct GatherLoads {
  bool evict_last, fetch_256;
};
inline GatherLoads gather_loads(int element_bytes, bool ragged_rows) {
  const bool evict_last = l2_evict_last_loads(ragged_rows || element_bytes != 2);
  return {evict_last, evict_last && gather_fetch_256(!ragged_rows || element_bytes == 2)};
}

// gather_whole_tiles: 0 = gather tiles keep an edge path on every plan (masked
// vectors, or element by element for 1-byte plans: gather_edges), unset (or 1) = plans whose a
// and run are whole tiles take kernels without one.
inline bool gather_whole_tiles(const GatherTileArgs& args, int tile) {
  const Override setting = switch_override("gather_whole_tiles");
  return setting != Override::Never && args.size_a % tile == 0 && args.size_b % tile == 0;
}

// How a gather kernel treats tiles that cross the end of a or of the run (gather_edges):
// kNoEdges: there are none (whole tiles); kVectorEdges: masked vectors (16 bytes, or 8 for
// half-vector tiles; vector_tile_rows); kScalarEdges (1-byte tiles only): element by element (gather_edge_tile),
// 37 registers against the masked vectors' 72 (ptxas -v, sm_90; 2-byte tiles: 47 against 49,
// nothing to gain), but bytes move one at a time, so only plans with few edge tiles take them.
enum GatherEdgeKind : int { kNoEdges, kVectorEdges, kScalarEdges };

inline GatherEdgeKind gather_edges(const GatherTileArgs& args, int tile, int element_bytes) {
  const Override scalar = switch_override("gather_scalar_edges");
  if (gather_whole_tiles(args, tile)) return kNoEdges;
  const int64_t tiles_a = ceil_div(args.size_a, tile), tiles_q = ceil_div(args.size_b, tile);
  const int64_t edge_tiles = tiles_a * tiles_q - (args.size_a / tile) * (args.size_b / tile);
  const bool few_edge_tiles = edge_tiles * 8 <= tiles_a * tiles_q;
  return element_bytes == 1 && decide(scalar, few_edge_tiles) ? kScalarEdges : kVectorEdges;
}

// An edge tile element by element: each thread loads elements of tile rows (b) from their input
// rows, one run division per element, and stores elements of output rows (a). The tile is the
// vector path's buffer, unpadded: bank conflicts cost only edge tiles.
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
