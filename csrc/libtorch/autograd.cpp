// Autograd for C++ callers (LibTorch build only; see CMakeLists.txt).
//
// The Python package registers autograd in Python (torch_transpose/_autograd.py), because
// torch.func refuses C++ autograd Functions at the Autograd key (see shared/DESIGN.md). A
// process without Python would then have no gradients at all, so the LibTorch library, which
// never meets the Python package, registers these C++ equivalents instead:
// d(transpose)/dx is the same transpose of the gradient, d(permute)/dx the inverse permute,
// d(to_memory_format)/dx the gradient itself. Backward calls the ops again through the
// dispatcher, so double backward works too.
#include <torch/autograd.h>
#include <torch/library.h>

#include <vector>

#include "include/torch_transpose/torch_transpose.h"

namespace torch_transpose {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class TransposeFunction : public torch::autograd::Function<TransposeFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self, int64_t dim0, int64_t dim1) {
    ctx->saved_data["dim0"] = dim0;
    ctx->saved_data["dim1"] = dim1;
    at::AutoDispatchBelowADInplaceOrView below;
    return torch_transpose::transpose(self, dim0, dim1);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {torch_transpose::transpose(grads[0], ctx->saved_data["dim0"].toInt(), ctx->saved_data["dim1"].toInt()),
            at::Tensor(), at::Tensor()};
  }
};

class PermuteFunction : public torch::autograd::Function<PermuteFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self, at::IntArrayRef dims) {
    // Inverse permutation, with dims wrapped as the op wraps them (the op validates them).
    std::vector<int64_t> inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) inverse[at::maybe_wrap_dim(dims[i], self.dim())] = static_cast<int64_t>(i);
    ctx->saved_data["inverse"] = inverse;
    at::AutoDispatchBelowADInplaceOrView below;
    return torch_transpose::permute(self, dims);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {torch_transpose::permute(grads[0], ctx->saved_data["inverse"].toIntVector()), at::Tensor()};
  }
};

class ToMemoryFormatFunction : public torch::autograd::Function<ToMemoryFormatFunction> {
 public:
  static at::Tensor forward(AutogradContext*, const at::Tensor& self, at::MemoryFormat memory_format) {
    at::AutoDispatchBelowADInplaceOrView below;
    return torch_transpose::to_memory_format(self, memory_format);
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0], at::Tensor()}; }
};

}  // namespace
}  // namespace torch_transpose

TORCH_LIBRARY_IMPL(torch_transpose, Autograd, m) {
  m.impl("transpose", [](const at::Tensor& self, int64_t dim0, int64_t dim1) {
    return torch_transpose::TransposeFunction::apply(self, dim0, dim1);
  });
  m.impl("permute", [](const at::Tensor& self, at::IntArrayRef dims) {
    return torch_transpose::PermuteFunction::apply(self, dims);
  });
  m.impl("to_memory_format", [](const at::Tensor& self, at::MemoryFormat memory_format) {
    return torch_transpose::ToMemoryFormatFunction::apply(self, memory_format);
  });
}
