// torch_transpose C++ API. Each function calls the registered operator through the
// dispatcher, so C++ callers get the same argument checks and CPU/CUDA kernels as Python.
// Link torch_transpose::torch_transpose; loading the library registers the operators, so
// TorchScript and AOTInductor artefacts that call them also run.
// Autograd: C++ autograd kernels (csrc/autograd.cpp) are part of the library. Fake (meta)
// kernels exist only under Python.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "launch_record.h"

namespace torch_transpose {

// self.transpose(dim0, dim1).contiguous(), always a new tensor. Negative dims wrap.
at::Tensor transpose(const at::Tensor& self, int64_t dim0 = -2, int64_t dim1 = -1);

// Writes self.transpose(dim0, dim1) into `out` (any strides; same shape, dtype and device as
// the result; no overlap with self or with itself). Returns `out`.
const at::Tensor& transpose_out(const at::Tensor& self, int64_t dim0, int64_t dim1, const at::Tensor& out);

// self.permute(dims).contiguous(), always a new tensor.
at::Tensor permute(const at::Tensor& self, at::IntArrayRef dims);

// Writes self.permute(dims) into `out`. Returns `out`.
const at::Tensor& permute_out(const at::Tensor& self, at::IntArrayRef dims, const at::Tensor& out);

// self.contiguous(memory_format), always a new tensor (channels_last, channels_last_3d, ...).
at::Tensor to_memory_format(const at::Tensor& self, at::MemoryFormat memory_format);

// The plan the kernels would run for self.permute(dims) into `out` (or into a new contiguous
// tensor), as one line of text: kind (empty, copy, transpose), merged sizes and strides,
// fast dims, vector width and index width.
std::string explain(const at::Tensor& self, at::IntArrayRef dims, const std::optional<at::Tensor>& out = std::nullopt);

// The kernel launches a call would make, without making them: for a CPU tensor the CPU family,
// for a CUDA tensor the CUDA launches on its device, for a meta tensor the CUDA launches on a
// described device (compute capability 9.0, `sm_count` SMs, 132 by default).
// sm_count > 0 overrides the device's count. candidates: every kernel family that fits, in the
// registry's order, each with its launches (the first is the one chosen).
std::vector<LaunchRecord> kernel_launches(const at::Tensor& self, at::IntArrayRef dims,
                                        const std::optional<at::Tensor>& out = std::nullopt, int64_t sm_count = 0,
                                        bool candidates = false);

}  // namespace torch_transpose
