// Autograd kernels of the functional operators, for every caller (Python and LibTorch).
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

// The Autograd kernel of one op: `Function` records a node when `self` needs a gradient;
// otherwise the op runs directly below autograd, with no node and no saved state.
template <typename Function, typename Op, typename... Args>
at::Tensor differentiable(Op op, const at::Tensor& self, Args... args) {
  if (at::GradMode::is_enabled() && self.requires_grad()) return Function::apply(self, args...);
  at::AutoDispatchBelowADInplaceOrView below;
  return op(self, args...);
}

}  // namespace
}  // namespace torch_transpose

TORCH_LIBRARY_IMPL(torch_transpose, Autograd, m) {
  namespace tt = torch_transpose;
  m.impl("transpose", [](const at::Tensor& self, int64_t dim0, int64_t dim1) {
    return tt::differentiable<tt::TransposeFunction>(&tt::transpose, self, dim0, dim1);
  });
  m.impl("permute", [](const at::Tensor& self, at::IntArrayRef dims) {
    return tt::differentiable<tt::PermuteFunction>(&tt::permute, self, dims);
  });
  m.impl("to_memory_format", [](const at::Tensor& self, at::MemoryFormat memory_format) {
    return tt::differentiable<tt::ToMemoryFormatFunction>(&tt::to_memory_format, self, memory_format);
  });
}
