// Copies for plans whose input and output share their fastest dim (kind Copy): every batch
// index names a row of `n` elements, strided by in_sb and out_sb.
// * Long rows: each block copies a chunk of one row, 16-byte vectors when aligned.
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "../kernel_switches.h"
#include "cuda_common.cuh"

namespace torch_transpose {

constexpr int kCopyUnroll = 8;  // 8 x 16-byte loads in flight per thread (4 reached 0.94 of copy)

// What every row copy needs; the two argument structs below add the batch indexer after it.
struct CopyShape {
  int64_t n;  // row length
  int64_t in_sb, out_sb;
  int64_t rows, chunks_per_row, total_chunks;
  int lanes_log2;        // short rows: 2^lanes_log2 lanes per row
  int64_t total_groups;  // short rows: passes of kRowsInFlight x (threads / lanes) rows
};

struct CopyArgs : CopyShape {
  DeviceBatchIndexer batch;
};

// Short rows whose groups each lie in one run of the last batch dim (row_group_copy_kernel says
// when): that dim's strides, and a flag the launcher always sets (why: the kernel's comment).
struct CopyRunArgs : CopyShape {
  bool groups_in_one_run = false;
  int64_t inner_in_sb = 0, inner_out_sb = 0;
  DeviceBatchIndexer batch;
};

template <typename T, int V, typename Index>
__global__ void __launch_bounds__(kThreads)
row_chunk_copy_kernel(const T* __restrict__ in, T* __restrict__ out, const CopyArgs args) {
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
    } else if (V > 1) {
      // A row's last chunk, shorter than kChunk: its whole vectors by the same unrolled loads,
      // each guarded, then the few elements after the last whole vector (V > 1 means unit
      // strides and vector-aligned row starts: choose_vector_elems).
      const Index j1 = static_cast<Index>(min(args.n, static_cast<int64_t>(j0) + kChunk));
      const Index whole_end = j0 + (j1 - j0) / V * V;
      Vec<T, V> v[kCopyUnroll];
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u) {
        const Index j = j0 + (u * kThreads + threadIdx.x) * V;
        if (j < whole_end) v[u] = *reinterpret_cast<const Vec<T, V>*>(src + j);
      }
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u) {
        const Index j = j0 + (u * kThreads + threadIdx.x) * V;
        if (j < whole_end) *reinterpret_cast<Vec<T, V>*>(dst + j) = v[u];
      }
      for (Index j = whole_end + threadIdx.x; j < j1; j += kThreads) dst[j] = src[j];
    } else {
      const Index j1 = static_cast<Index>(min(args.n, static_cast<int64_t>(j0) + kChunk));
      for (Index j = j0 + threadIdx.x; j < j1; j += kThreads) dst[j * out_sb] = src[j * in_sb];
    }
  }
}

inline bool row_runs_enabled() {
  const bool enabled = !switch_off("row_runs");
  return enabled;
}

// Rows in flight per thread.
constexpr int kRowsInFlight = 4;

// Each lane owns at most one V-vector of a row (lanes >= vectors per row by construction) and
// handles kRowsInFlight rows at once, so several loads are in flight per thread.
//
// Row runs (Args = CopyRunArgs): when the last batch dim's size is a multiple of a group's rows
// (kRowsInFlight passes of threads / lanes rows), every group lies in one run of that dim and is
// whole, so a thread locates the group's first row once and steps by that dim's strides.
template <typename T, int V, typename Index, typename Args>
__global__ void __launch_bounds__(kThreads)
row_group_copy_kernel(const T* __restrict__ in, T* __restrict__ out, const Args args) {
  constexpr bool kRuns = std::is_same_v<Args, CopyRunArgs>;
  const int lanes = 1 << args.lanes_log2;
  const int lane = threadIdx.x & (lanes - 1);
  const int64_t rows_per_pass = kThreads >> args.lanes_log2;
  const int64_t row_in_pass = threadIdx.x >> args.lanes_log2;
  const Index n = static_cast<Index>(args.n);
  const Index vectors = n / V;  // with V > 1 the plan guarantees unit strides and aligned rows
  const Index in_step = static_cast<Index>(args.in_sb) * V, out_step = static_cast<Index>(args.out_sb) * V;
  for (int64_t g = blockIdx.x; g < args.total_groups; g += gridDim.x) {
    const T* src[kRowsInFlight];
    T* dst[kRowsInFlight];
    bool row_ok[kRowsInFlight];
    Vec<T, V> v[kRowsInFlight];
    int64_t first_in = 0, first_out = 0;  // runs: the group's first row
    if constexpr (kRuns) {
      if (args.groups_in_one_run) args.batch.offsets(g * kRowsInFlight * rows_per_pass, first_in, first_out);
    }
#pragma unroll
    for (int u = 0; u < kRowsInFlight; ++u) {
      const int64_t row = (g * kRowsInFlight + u) * rows_per_pass + row_in_pass;
      int64_t in_off = 0, out_off = 0;
      bool stepped = false;
      if constexpr (kRuns) {
        if (args.groups_in_one_run) {
          row_ok[u] = true;
          const int64_t step = u * rows_per_pass + row_in_pass;
          in_off = first_in + step * args.inner_in_sb;
          out_off = first_out + step * args.inner_out_sb;
          stepped = true;
        }
      }
      if (!stepped) {
        row_ok[u] = row < args.rows;
        if (row_ok[u]) args.batch.offsets(row, in_off, out_off);
      }
      src[u] = in + in_off;
      dst[u] = out + out_off;
      if (row_ok[u] && lane < vectors) v[u] = *reinterpret_cast<const Vec<T, V>*>(src[u] + lane * in_step);
    }
#pragma unroll
    for (int u = 0; u < kRowsInFlight; ++u)
      if (row_ok[u] && lane < vectors) *reinterpret_cast<Vec<T, V>*>(dst[u] + lane * out_step) = v[u];
    if constexpr (V > 1) {  // the last n % V elements of each row
      for (int u = 0; u < kRowsInFlight; ++u)
        if (row_ok[u])
          for (Index j = vectors * V + lane; j < n; j += lanes) dst[u][j] = src[u][j];
    }
  }
}

// Short rows, one V-vector per thread and one pass per block: a thread divides its linear
// index by the vectors per row, then the row index by each batch dim.
struct VectorRowArgs {
  int64_t in_sb, out_sb;  // element stride within a row on each side (1 when V > 1)
  int64_t total_vectors;  // below 2^31 (make_vector_row_args)
  FastDivmod by_vectors;  // vectors per row
  DeviceBatchIndexer batch;
};

template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
row_vector_copy_kernel(const T* __restrict__ in, T* __restrict__ out, const VectorRowArgs args) {
  const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= static_cast<uint64_t>(args.total_vectors)) return;
  uint32_t row, vector;
  args.by_vectors.divmod(i, row, vector);
  int64_t in_off, out_off;
  args.batch.offsets(row, in_off, out_off);
  const int64_t j = static_cast<int64_t>(vector) * V;
  *reinterpret_cast<Vec<T, V>*>(out + out_off + j * args.out_sb) =
      *reinterpret_cast<const Vec<T, V>*>(in + in_off + j * args.in_sb);
}

inline bool medium_rows_enabled() {
  const bool enabled = !switch_off("medium_rows");
  return enabled;
}

inline Override vector_rows_override() {
  const Override setting = switch_override("vector_rows");
  return setting;
}

// The order in which row_vector_copy walks the rows. Its threads take rows in the batch
// indexer's order, last dim fastest: the output's order, so its stores fill whole runs of the
// output while the loads go where the input has those rows.

inline Override row_walk_override() {
  const Override setting = switch_override("row_walk");
  return setting;
}

// The far side's longest contiguous run, in rows, among the rows that a walk has in flight at
// once: the walk's innermost batch dims (last fastest), the last of them perhaps in part, up to
// `window_rows` rows, chained through the far side's strides from one row (`row_pitch` elements:
// the far side's rows must lie back to back to chain at all). A dim held in part ends the chain.
inline int64_t far_run_rows(const BatchIndexer& walk, bool far_is_input, int64_t window_rows, int64_t row_pitch) {
  int64_t held[kMaxPlanRank];  // how many of each dim's indices the window holds
  int first = walk.rank;
  for (int64_t rows = 1; first > 0 && rows < window_rows;) {
    --first;
    held[first] = std::min(walk.sizes[first], window_rows / rows);
    rows *= held[first];
    if (held[first] < walk.sizes[first]) break;
  }
  int64_t run = row_pitch, rows = 1;
  for (bool grew = true; grew;) {
    grew = false;
    for (int d = first; d < walk.rank; ++d) {
      const int64_t stride = far_is_input ? walk.in_strides[d] : walk.out_strides[d];
      if (walk.sizes[d] == 1 || stride != run) continue;
      rows *= held[d];
      if (held[d] < walk.sizes[d]) return rows;
      run *= walk.sizes[d];
      grew = true;
    }
  }
  return rows;
}

// The batch dims sorted by input stride, the smallest fastest (a stable sort: ties keep the
// output's order).
inline BatchIndexer in_input_order(const BatchIndexer& batch) {
  BatchIndexer sorted = batch;
  for (int i = 1; i < sorted.rank; ++i)
    for (int j = i; j > 0 && sorted.in_strides[j] > sorted.in_strides[j - 1]; --j) {
      std::swap(sorted.sizes[j], sorted.sizes[j - 1]);
      std::swap(sorted.in_strides[j], sorted.in_strides[j - 1]);
      std::swap(sorted.out_strides[j], sorted.out_strides[j - 1]);
    }
  return sorted;
}

// Whether row_vector_copy walks a plan's rows in input order: where that walk meets the output in
// longer runs than the output order meets the input, within the rows in flight at once (one
// vector per thread, 2048 threads per SM), counting runs of kLongRowRun bytes or more as long:
constexpr int64_t kLongRowRun = 4096;
inline bool walk_rows_in_input_order(const CopyShape& copy, const BatchIndexer& batch, const BatchIndexer& by_input,
                                     int64_t vectors_per_row, int64_t element_bytes, int sm_count) {
  const Override setting = row_walk_override();
  if (setting != Override::Rule || batch.rank < 2) return setting == Override::Always && batch.rank >= 2;
  if (copy.in_sb != 1 || copy.out_sb != 1) return false;
  const int64_t window_rows = std::max<int64_t>(1, int64_t{sm_count} * 2048 / vectors_per_row);
  auto run_bytes = [&](const BatchIndexer& walk, bool far_is_input) {
    return std::min(kLongRowRun, far_run_rows(walk, far_is_input, window_rows, copy.n) * copy.n * element_bytes);
  };
  return run_bytes(by_input, false) > run_bytes(batch, true);
}

// Arguments for row_vector_copy when it should take the plan (`full_vectors`: V is a whole 16
// bytes or one element of 16 bytes): rows of whole vectors, every index below 2^31.
template <typename T>
inline bool make_vector_row_args(const CopyArgs& copy, int v, bool full_vectors, int sm_count, VectorRowArgs& args) {
  if (copy.n % v != 0 || !copy.batch.fits_32) return false;
  const int64_t vectors_per_row = copy.n / v;
  const int64_t total = vectors_per_row * copy.rows;
  if (total >= (int64_t{1} << 31) || !decide(vector_rows_override(), full_vectors)) return false;
  args.in_sb = copy.in_sb;
  args.out_sb = copy.out_sb;
  args.total_vectors = total;
  args.by_vectors = FastDivmod(static_cast<uint32_t>(vectors_per_row));
  args.batch = copy.batch;
  if (copy.batch.rank >= 2) {
    const BatchIndexer by_input = in_input_order(copy.batch.plain);
    if (walk_rows_in_input_order(copy, copy.batch.plain, by_input, vectors_per_row, sizeof(T), sm_count))
      args.batch.assign(by_input);
  }
  return true;
}

}  // namespace torch_transpose
