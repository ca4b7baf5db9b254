// Copies for plans whose input and output share their fastest dim (kind Copy): every batch
// index names a row of `n` elements, strided by in_sb and out_sb.
// * Long rows: each block copies a chunk of one row, 16-byte vectors when aligned.
// * Short rows of whole 16-byte vectors (BSHD -> BHSD has 128-element rows): one vector per
//   thread, each thread finding its row by division (row_vector_copy_kernel).
// * Other short rows: a block copies many rows at once, a power-of-two group of lanes per row,
//   so no lane idles for want of row length (row_group_copy_kernel).
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "../env_switch.h"
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
      // strides and vector-aligned row starts: choose_vector_elems). Rows shorter than one
      // chunk are all last chunk: before, they went element by element, and bf16 video frames
      // (rows of 56 x 56 = 3136 elements) ran at 0.65 of copy (bench/NOTES.md v43).
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

// TORCH_TRANSPOSE_ROW_RUNS=0 locates every row by division (read once; for A/B timing runs and
// tests of that path).
inline bool row_runs_enabled() {
  static const bool enabled = !env_switched_off("TORCH_TRANSPOSE_ROW_RUNS");
  return enabled;
}

// Rows in flight per thread. 8 raised registers from 64 to 104 (16-byte vectors) and dropped
// BSHD->BHSD from 0.95 to 0.71 of copy on the H200 (2026-11-29): occupancy beat depth here.
constexpr int kRowsInFlight = 4;

// Each lane owns at most one V-vector of a row (lanes >= vectors per row by construction) and
// handles kRowsInFlight rows at once, so several loads are in flight per thread.
//
// Row runs (Args = CopyRunArgs): when the last batch dim's size is a multiple of a group's rows
// (kRowsInFlight passes of threads / lanes rows), every group lies in one run of that dim and is
// whole, so a thread locates the group's first row once and steps by that dim's strides. The
// batch indexer otherwise costs a magic-number division per batch dim and row, for one 16-byte
// access per row. H200, 2026-11-30, same-call A/Bs (bench/NOTES.md v10): BSHD->BHSD 0.95 -> 0.98
// of copy, (1, 0, 2) on 1024x1024x64 0.94 -> 0.95.
// Both paths stay in the run kernel behind the run-time flag, although the launcher sets it
// whenever it picks that kernel: compiled as their own instantiation, without the dividing
// path (fewer registers: bf16 47 instead of 70), the runs ran BSHD at 0.88, and the SASS showed
// why: 3 loads, their stores, then the 4th load (here all 4 loads come first). Compiled apart
// from the runs (Args = CopyArgs), the dividing path keeps its own registers: behind the flag
// it took 70 instead of 64 for bf16, and BSHD fell to 0.92 on it.
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
// index by the vectors per row, then the row index by each batch dim. Few registers, so 8
// blocks of 256 threads fit an SM, where row_group_copy's 4 rows in flight per thread (70-74
// registers) held it to 3. ncu, H200 (bench/NOTES.md v14): torch.compile's generated copy for
// BSHD -> BHSD works this way (16 registers, 81% of warps active) and moved the bytes in
// 130.2 us against row_group_copy's 131.6; for (1, 0, 2) on 1024x1024x64, 131.9 against 136.1.
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

// TORCH_TRANSPOSE_MEDIUM_ROWS=0 keeps rows of more vectors than a block has threads (up to one
// chunk) on row_chunk_copy instead of row_vector_copy (read once; A/B runs, tests of that path).
inline bool medium_rows_enabled() {
  static const bool enabled = !env_switched_off("TORCH_TRANSPOSE_MEDIUM_ROWS");
  return enabled;
}

// TORCH_TRANSPOSE_VECTOR_ROWS=0 keeps short rows on row_group_copy, =1 sends every short-row
// plan that the kernel can take to row_vector_copy (A/B runs, tests of either kernel).
inline Override vector_rows_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_VECTOR_ROWS");
  return setting;
}

// The order in which row_vector_copy walks the rows. Its threads take rows in the batch
// indexer's order, last dim fastest: the output's order, so its stores fill whole runs of the
// output while the loads go where the input has those rows. When the rows that are in flight at
// once lie scattered in the input, walking them in the input's order instead can leave both sides
// in long runs. ViT's fused QKV split (bf16 64x197x3x12x64 -> 3x64x12x197x64, 128-byte rows): in
// output order the rows in flight (the inner dims s, h and part of b) meet the input in runs of 12
// rows (h, then t lies outside the window), in input order the output in runs of 2364 (s, h).
// H200, same call, two rounds, ours / copy by GPU time (bench/NOTES.md v51): 0.917 / 0.915 ->
// 0.942 / 0.942; bf16 16x1024x3x12x64 0.919 / 0.915 -> 0.938 / 0.943; fp32 64x197x3x12x64 0.956 /
// 0.953 -> 0.962 / 0.958. Where the output order already meets the input in long runs (ViT-B
// heads 64x197x12x64, video NCTHW -> NTCHW) the input order read level (0.902-0.969 against
// 0.904-0.968), and the rule keeps the output order there.

// TORCH_TRANSPOSE_ROW_WALK: 0 = output order, 1 = input order, unset = the rule
// (walk_rows_in_input_order; read once: A/B runs, tests of each walk).
inline Override row_walk_override() {
  static const Override setting = env_override("TORCH_TRANSPOSE_ROW_WALK");
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
// video NCTHW -> NTCHW (rows of 6 KB) read level in either walk (0.959-0.965 of copy). The rule
// takes rows of unit stride on both sides only (n elements each: a far side's rows chain from
// n); the switch forces either walk on every plan of two or more batch dims. `by_input` is
// in_input_order(batch), which the caller keeps for the walk.
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
