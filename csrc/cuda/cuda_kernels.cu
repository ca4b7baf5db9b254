// CUDA backend: a shared-memory tiled transpose and a strided row copy, templated on element
// size, vector width and index width. Torch-free: it sees a plan, two pointers and a stream.
//
// Tiled transpose (plan kind Transpose). Dim `a` is the input's fastest dim, `b` the output's.
// A block owns a TILE x TILE tile: it loads it walking `a` (coalesced reads), parks it in
// padded shared memory, and stores it walking `b` (coalesced writes). The transpose lives in
// the index math of the store. Interior tiles take an unmasked path with V-element vectors;
// edge tiles take one scalar path whose single bounds predicate serves load and store.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../kernels.h"
#include "../plan/batch_indexer.h"

namespace torch_transpose {
namespace {

constexpr int kThreads = 256;

template <int E> struct ElementOf;
template <> struct ElementOf<1> { using type = uint8_t; };
template <> struct ElementOf<2> { using type = uint16_t; };
template <> struct ElementOf<4> { using type = uint32_t; };
template <> struct ElementOf<8> { using type = uint2; };
template <> struct ElementOf<16> { using type = uint4; };

// V elements moved by one load or store instruction (at most 16 bytes).
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Tile side in elements: at least one 128-byte line per tile row for every element size, and
// at most ~17 KiB of shared memory so that several blocks share an SM.
template <int E> struct TileShape { static constexpr int kTile = E == 1 ? 128 : (E <= 4 ? 64 : 32); };
// Row padding of one 4-byte bank (or one element when elements are wider) breaks the
// bank conflicts of the column-wise reads in the store phase.
template <int E> struct TilePad { static constexpr int kPad = E >= 4 ? 1 : 4 / E; };

struct TransposeArgs {
  int64_t size_a, size_b;
  int64_t in_sa, in_sb, out_sa, out_sb;
  int64_t tiles_a, tiles_b, total_tiles;
  BatchIndexer batch;
};

template <typename T, int V, typename Index>
__global__ void __launch_bounds__(kThreads)
tile_transpose_kernel(const T* __restrict__ in, T* __restrict__ out, const TransposeArgs args) {
  constexpr int kTile = TileShape<sizeof(T)>::kTile;
  constexpr int kPitch = kTile + TilePad<sizeof(T)>::kPad;
  constexpr int kTx = kTile / V;        // threads along a tile row
  constexpr int kTy = kThreads / kTx;   // tile rows per pass
  static_assert(kTile % V == 0 && kThreads % kTx == 0, "tile must split evenly over threads");
  __shared__ T tile[kTile * kPitch];    // tile[r * kPitch + c]: r walks b, c walks a

  const int tx = threadIdx.x % kTx, ty = threadIdx.x / kTx;
  const Index in_sa = static_cast<Index>(args.in_sa), in_sb = static_cast<Index>(args.in_sb);
  const Index out_sa = static_cast<Index>(args.out_sa), out_sb = static_cast<Index>(args.out_sb);

  for (int64_t t = blockIdx.x; t < args.total_tiles; t += gridDim.x) {
    const int64_t tb = t % args.tiles_b;
    const int64_t rest = t / args.tiles_b;
    const int64_t ta = rest % args.tiles_a;
    int64_t in_off, out_off;
    args.batch.offsets(rest / args.tiles_a, in_off, out_off);
    const T* src = in + in_off;
    T* dst = out + out_off;
    const Index a0 = static_cast<Index>(ta * kTile), b0 = static_cast<Index>(tb * kTile);

    if (static_cast<int64_t>(a0) + kTile <= args.size_a && static_cast<int64_t>(b0) + kTile <= args.size_b) {
      // Interior tile: no masks. With V > 1 the plan guarantees in_sa == out_sb == 1 and
      // every other stride and both base addresses aligned to V elements.
#pragma unroll
      for (int r = ty; r < kTile; r += kTy) {
        const Index b = b0 + r, a = a0 + tx * V;
        if constexpr (V > 1) {
          const Vec<T, V> v = *reinterpret_cast<const Vec<T, V>*>(src + b * in_sb + a);
#pragma unroll
          for (int k = 0; k < V; ++k) tile[r * kPitch + tx * V + k] = v.v[k];
        } else {
          tile[r * kPitch + tx] = src[b * in_sb + a * in_sa];
        }
      }
      __syncthreads();
#pragma unroll
      for (int r = ty; r < kTile; r += kTy) {
        const Index a = a0 + r, b = b0 + tx * V;
        if constexpr (V > 1) {
          Vec<T, V> v;
#pragma unroll
          for (int k = 0; k < V; ++k) v.v[k] = tile[(tx * V + k) * kPitch + r];
          *reinterpret_cast<Vec<T, V>*>(dst + a * out_sa + b) = v;
        } else {
          dst[a * out_sa + b * out_sb] = tile[tx * kPitch + r];
        }
      }
    } else {
      // Edge tile: one predicate, symmetric under the transpose, guards both phases.
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
    __syncthreads();  // the next tile reuses the shared buffer
  }
}

// Strided row copy (plan kind Copy): rows are the batch, `b` walks along a row on both sides.
struct CopyArgs {
  int64_t n;  // row length
  int64_t in_sb, out_sb;
  int64_t rows, chunks_per_row, total_chunks;
  BatchIndexer batch;
};

constexpr int kCopyUnroll = 4;

template <typename T, int V, typename Index>
__global__ void __launch_bounds__(kThreads)
row_copy_kernel(const T* __restrict__ in, T* __restrict__ out, const CopyArgs args) {
  constexpr int kChunk = kThreads * V * kCopyUnroll;
  const Index in_sb = static_cast<Index>(args.in_sb), out_sb = static_cast<Index>(args.out_sb);
  for (int64_t t = blockIdx.x; t < args.total_chunks; t += gridDim.x) {
    int64_t in_off, out_off;
    args.batch.offsets(t / args.chunks_per_row, in_off, out_off);
    const T* src = in + in_off;
    T* dst = out + out_off;
    const Index j0 = static_cast<Index>((t % args.chunks_per_row) * kChunk);
    if (V > 1 && static_cast<int64_t>(j0) + kChunk <= args.n) {
      Vec<T, V> v[kCopyUnroll];
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u)
        v[u] = *reinterpret_cast<const Vec<T, V>*>(src + j0 + (u * kThreads + threadIdx.x) * V);
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u)
        *reinterpret_cast<Vec<T, V>*>(dst + j0 + (u * kThreads + threadIdx.x) * V) = v[u];
    } else {
      const Index j1 = static_cast<Index>(min(args.n, static_cast<int64_t>(j0) + kChunk));
      for (Index j = j0 + threadIdx.x; j < j1; j += kThreads) dst[j * out_sb] = src[j * in_sb];
    }
  }
}

// Short rows (below one chunk) would idle most of a block, so they are copied element-wise
// over the whole problem, one batch decomposition per element.
template <typename T>
__global__ void __launch_bounds__(kThreads)
short_row_copy_kernel(const T* __restrict__ in, T* __restrict__ out, const CopyArgs args, int64_t numel) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; i < numel;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t row = i / args.n, j = i % args.n;
    int64_t in_off, out_off;
    args.batch.offsets(row, in_off, out_off);
    out[out_off + j * args.out_sb] = in[in_off + j * args.in_sb];
  }
}

int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

// Enough blocks to fill every SM several times over; kernels loop past that.
unsigned int grid_for(int64_t work_items, int sm_count) {
  const int64_t cap = static_cast<int64_t>(std::max(sm_count, 1)) * 64;
  return static_cast<unsigned int>(std::max<int64_t>(1, std::min(work_items, cap)));
}

template <typename T, int V>
void launch_transpose(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  constexpr int kTile = TileShape<sizeof(T)>::kTile;
  const int a = plan.in_fast_dim, b = plan.out_fast_dim;
  TransposeArgs args;
  args.size_a = plan.sizes[a];
  args.size_b = plan.sizes[b];
  args.in_sa = plan.in_strides[a];
  args.in_sb = plan.in_strides[b];
  args.out_sa = plan.out_strides[a];
  args.out_sb = plan.out_strides[b];
  args.tiles_a = ceil_div(args.size_a, kTile);
  args.tiles_b = ceil_div(args.size_b, kTile);
  args.batch = BatchIndexer::from_plan(plan);
  args.total_tiles = args.batch.count() * args.tiles_a * args.tiles_b;
  const unsigned int grid = grid_for(args.total_tiles, sm_count);
  if (plan.needs_64bit_index) {
    tile_transpose_kernel<T, 1, int64_t><<<grid, kThreads, 0, stream>>>(in, out, args);
  } else {
    tile_transpose_kernel<T, V, int32_t><<<grid, kThreads, 0, stream>>>(in, out, args);
  }
}

template <typename T, int V>
void launch_copy(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  constexpr int kChunk = kThreads * V * kCopyUnroll;
  const int b = plan.out_fast_dim;
  CopyArgs args;
  args.n = plan.sizes[b];
  args.in_sb = plan.in_strides[b];
  args.out_sb = plan.out_strides[b];
  args.batch = BatchIndexer::from_plan(plan);
  args.rows = args.batch.count();
  if (args.n < kThreads && args.rows > 1) {
    const int64_t numel = args.rows * args.n;
    short_row_copy_kernel<T><<<grid_for(ceil_div(numel, kThreads), sm_count), kThreads, 0, stream>>>(in, out, args, numel);
    return;
  }
  args.chunks_per_row = ceil_div(args.n, kChunk);
  args.total_chunks = args.rows * args.chunks_per_row;
  const unsigned int grid = grid_for(args.total_chunks, sm_count);
  if (plan.needs_64bit_index) {
    row_copy_kernel<T, 1, int64_t><<<grid, kThreads, 0, stream>>>(in, out, args);
  } else {
    row_copy_kernel<T, V, int32_t><<<grid, kThreads, 0, stream>>>(in, out, args);
  }
}

template <int E, int V>
void launch_with_vector(const LayoutPlan& plan, const void* in, void* out, cudaStream_t stream, int sm_count) {
  using T = typename ElementOf<E>::type;
  if constexpr (V > 1) {
    if (plan.vector_elems < V) return launch_with_vector<E, V / 2>(plan, in, out, stream, sm_count);
  }
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  if (plan.kind == PlanKind::Copy) {
    launch_copy<T, V>(plan, src, dst, stream, sm_count);
  } else {
    launch_transpose<T, V>(plan, src, dst, stream, sm_count);
  }
}

}  // namespace

int run_layout_plan_cuda(const LayoutPlan& plan, const void* in, void* out, void* stream_ptr, int sm_count) {
  if (plan.kind == PlanKind::Empty) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  switch (plan.element_bytes) {
    case 1: launch_with_vector<1, 16>(plan, in, out, stream, sm_count); break;
    case 2: launch_with_vector<2, 8>(plan, in, out, stream, sm_count); break;
    case 4: launch_with_vector<4, 4>(plan, in, out, stream, sm_count); break;
    case 8: launch_with_vector<8, 2>(plan, in, out, stream, sm_count); break;
    case 16: launch_with_vector<16, 1>(plan, in, out, stream, sm_count); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace torch_transpose
