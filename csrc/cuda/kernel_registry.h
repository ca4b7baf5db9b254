// The kernel registry: every CUDA kernel family as one entry of an ordered table. Selection is
// kernel_registry.cu's two tables read top to bottom: the first family whose launcher takes the
// plan runs it. A launcher returns false, launching nothing, when the plan does not fit its
// family or its rule says no; under a LaunchRecorder (launch_record.h) it records instead of
// launching, which is how explain() names kernels and lists candidates without a GPU.
#pragma once

namespace torch_transpose {

struct LaunchContext;

struct KernelFamily {
  const char* name;   // as explain() prints it and as TORCH_TRANSPOSE_KERNELS may name it
  const char* takes;  // the plans it is for, in a line
  bool (*launch)(const LaunchContext&);
};

bool launch_device_copy_family(const LaunchContext&);
bool launch_lean_rows_family(const LaunchContext&);
bool launch_vector_rows_family(const LaunchContext&);
bool launch_row_groups_family(const LaunchContext&);
bool launch_medium_rows_family(const LaunchContext&);
bool launch_row_chunks_family(const LaunchContext&);

bool launch_direct_family(const LaunchContext&);
bool launch_interleave_family(const LaunchContext&);
bool launch_narrow_word_family(const LaunchContext&);
bool launch_gather_family(const LaunchContext&);
bool launch_box_family(const LaunchContext&);
bool launch_flat_family(const LaunchContext&);
bool launch_lean_narrow_family(const LaunchContext&);
bool launch_narrow_block_family(const LaunchContext&);
bool launch_narrow_family(const LaunchContext&);
bool launch_span_family(const LaunchContext&);
bool launch_output_span_family(const LaunchContext&);
bool launch_gather_rows_family(const LaunchContext&);
bool launch_window_family(const LaunchContext&);
bool launch_realign_window_family(const LaunchContext&);
bool launch_tma_byte_tile_family(const LaunchContext&);
bool launch_wide_byte_tile_family(const LaunchContext&);
bool launch_small_tile_family(const LaunchContext&);
bool launch_compact_tile_family(const LaunchContext&);
bool launch_lean_tile_family(const LaunchContext&);
bool launch_tile_family(const LaunchContext&);

}  // namespace torch_transpose
