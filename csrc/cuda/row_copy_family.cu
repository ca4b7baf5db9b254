// The row copy family: plans whose fast dim is the same on both sides. Short rows of whole
// 16-byte vectors take lean rows or one vector per thread, other short rows go in groups per
// block, rows up to a chunk one vector per thread, long rows in chunks; one dense run is the
// runtime's device copy.
#include <type_traits>

#include "kernel_registry.h"
#include "launch_common.cuh"
#include "lean_row_copy.cuh"
#include "row_copy.cuh"

namespace torch_transpose {
namespace {

// Lean rows (lean_row_copy.cuh) for short-row copies of whole 16-byte vectors that fit them;
// false otherwise.
template <typename T, int V>
bool launch_lean_rows(const LayoutPlan& plan, const CopyArgs& copy, const T* in, T* out, cudaStream_t stream) {
  LeanRowArgs args;
  dim3 grid;
  if (!make_lean_row_args(plan, copy, V, args, grid)) return false;
  with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
    launch_kernel<lean_row_copy_kernel<T, V, kEvictLast.value>>(grid, kThreads, 0, stream, in, out, args);
  });
  return true;
}

// The copy's rows, worked out once per call.
const CopyArgs& copy_args(const LaunchContext& c) {
  if (!c.copy_cache) {
    const LayoutPlan& plan = c.plan;
    const int b = plan.out_fast_dim;
    CopyArgs args;
    args.n = plan.sizes[b];
    args.in_sb = plan.in_strides[b];
    args.out_sb = plan.out_strides[b];
    args.batch.assign(plan);
    args.rows = args.batch.count();
    c.copy_cache = args;
  }
  return *c.copy_cache;
}

// Whole 16-byte vectors on both sides (a 16-byte element is one).
template <typename T, int V>
constexpr bool kFullVectors = V == kFullVector<T> || sizeof(T) == 16;

// Rows of at most a block's threads in vectors, and more than one row.
template <int V>
bool short_rows(const CopyArgs& args) {
  return ceil_div(args.n, V) <= kThreads && args.rows > 1;
}

template <typename T, int V>
void launch_vector_rows(const VectorRowArgs& vector_rows, const LaunchContext& c) {
  launch_kernel<row_vector_copy_kernel<T, V>>(static_cast<unsigned int>(ceil_div(vector_rows.total_vectors, kThreads)),
                                              kThreads, 0, c.stream, typed_in<T>(c), typed_out<T>(c), vector_rows);
}

}  // namespace

// One dense run on both sides: the runtime's device-to-device copy, the ceiling itself.
bool launch_device_copy_family(const LaunchContext& c) {
  const LayoutPlan& plan = c.plan;
  if (!(plan.kind == PlanKind::Copy && plan.rank == 1 && plan.in_strides[0] == 1 && plan.out_strides[0] == 1) ||
      switch_off("driver_copy"))
    return false;
  if (LaunchRecorder* recorder = active_launch_recorder) {
    recorder->launches.push_back(LaunchRecord{"device_copy", {1, 1, 1}, 0, 0});
    return true;
  }
  c.error = static_cast<int>(cudaMemcpyAsync(c.out, c.in, static_cast<size_t>(plan.numel) * plan.element_bytes,
                                             cudaMemcpyDeviceToDevice, c.stream));
  return true;
}

bool launch_lean_rows_family(const LaunchContext& c) {
  return with_element_and_vector(c.plan, [&](auto* t, auto v) -> bool {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    if constexpr (kFullVectors<T, V>) {
      const CopyArgs& args = copy_args(c);
      return short_rows<V>(args) && launch_lean_rows<T, V>(c.plan, args, typed_in<T>(c), typed_out<T>(c), c.stream);
    } else {
      return false;
    }
  });
}

bool launch_vector_rows_family(const LaunchContext& c) {
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    const CopyArgs& args = copy_args(c);
    VectorRowArgs vector_rows;
    if (!short_rows<V>(args) || c.plan.needs_64bit_index ||
        !make_vector_row_args<T>(args, V, kFullVectors<T, V>, c.sm_count, vector_rows))
      return false;
    launch_vector_rows<T, V>(vector_rows, c);
    return true;
  });
}

bool launch_row_groups_family(const LaunchContext& c) {
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    if (!short_rows<V>(copy_args(c))) return false;
    CopyArgs args = copy_args(c);
    const LayoutPlan& plan = c.plan;
    const int64_t vectors_per_row = ceil_div(args.n, V);
    int lanes_log2 = 0;
    while ((int64_t{1} << lanes_log2) < vectors_per_row) ++lanes_log2;
    args.lanes_log2 = lanes_log2;
    const int64_t rows_per_group = int64_t{kRowsInFlight} * (kThreads >> lanes_log2);
    args.total_groups = ceil_div(args.rows, rows_per_group);
    const unsigned int grid = grid_for(args.total_groups, c.sm_count);
    const BatchIndexer& batch = args.batch.plain;
    const T* in = typed_in<T>(c);
    T* out = typed_out<T>(c);
    if (plan.needs_64bit_index) {
      launch_kernel<row_group_copy_kernel<T, 1, int64_t, CopyArgs>>(grid, kThreads, 0, c.stream, in, out, args);
    } else if (row_runs_enabled() && batch.rank > 0 && batch.sizes[batch.rank - 1] % rows_per_group == 0) {
      CopyRunArgs runs;
      static_cast<CopyShape&>(runs) = args;
      runs.groups_in_one_run = true;
      runs.inner_in_sb = batch.in_strides[batch.rank - 1];
      runs.inner_out_sb = batch.out_strides[batch.rank - 1];
      runs.batch = args.batch;
      launch_kernel<row_group_copy_kernel<T, V, int32_t, CopyRunArgs>>(grid, kThreads, 0, c.stream, in, out, runs);
    } else {
      launch_kernel<row_group_copy_kernel<T, V, int32_t, CopyArgs>>(grid, kThreads, 0, c.stream, in, out, args);
    }
    return true;
  });
}

bool launch_medium_rows_family(const LaunchContext& c) {
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    const CopyArgs& args = copy_args(c);
    const int64_t vectors_per_row = ceil_div(args.n, V);
    VectorRowArgs vector_rows;
    if (vectors_per_row <= kThreads || vectors_per_row > int64_t{kThreads} * kCopyUnroll || args.rows <= 1 ||
        !medium_rows_enabled() || !kFullVectors<T, V> || c.plan.needs_64bit_index ||
        !make_vector_row_args<T>(args, V, true, c.sm_count, vector_rows))
      return false;
    launch_vector_rows<T, V>(vector_rows, c);
    return true;
  });
}

bool launch_row_chunks_family(const LaunchContext& c) {
  return with_element_and_vector(c.plan, [&](auto* t, auto v) {
    using T = std::remove_pointer_t<decltype(t)>;
    constexpr int V = decltype(v)::value;
    CopyArgs args = copy_args(c);
    args.chunks_per_row = ceil_div(args.n, int64_t{kThreads} * V * kCopyUnroll);
    args.total_chunks = args.rows * args.chunks_per_row;
    const unsigned int grid = grid_for(args.total_chunks, c.sm_count);
    if (c.plan.needs_64bit_index) {
      launch_kernel<row_chunk_copy_kernel<T, 1, int64_t>>(grid, kThreads, 0, c.stream, typed_in<T>(c), typed_out<T>(c), args);
    } else {
      launch_kernel<row_chunk_copy_kernel<T, V, int32_t>>(grid, kThreads, 0, c.stream, typed_in<T>(c), typed_out<T>(c), args);
    }
    return true;
  });
}

}  // namespace torch_transpose
