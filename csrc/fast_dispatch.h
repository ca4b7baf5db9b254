// What the Python fast entry points (csrc/python_module.cpp) call when a call through the
// dispatcher would reach our CPU or CUDA kernel with nothing in between: the same kernels, without
// the dispatcher's two hops (the autograd kernel, then the backend's) and with the output
// allocated directly.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_transpose {

// True when dispatching an op on `self` (a plain tensor, no gradient wanted: the caller checks)
// would go straight to the CPU or CUDA kernel: no dispatch key is active but the backend's own,
// autograd's and ADInplaceOrView's (so no vmap, functionalization, autocast, dispatch mode,
// tracer, conjugate or negative view, named, sparse, quantized or meta tensor), and no profiler
// or other RecordFunction callback is listening (the dispatcher would record the op for it).
bool dispatch_reaches_kernels(const at::Tensor& self);

// The ops' CPU and CUDA kernels (csrc/ops.cpp), for callers that dispatch_reaches_kernels.
at::Tensor transpose_kernel(const at::Tensor& self, int64_t dim0, int64_t dim1);
at::Tensor permute_kernel(const at::Tensor& self, at::IntArrayRef dims);
at::Tensor to_memory_format_kernel(const at::Tensor& self, at::MemoryFormat memory_format);

}  // namespace torch_transpose
