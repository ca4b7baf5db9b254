// Clear errors for tensors the kernels do not take: sparse, quantized and nested ones. Without
// these registrations the dispatcher answers with its generic "Could not run ... with arguments
// from the 'SparseCPU' backend". A non-strided self is NotImplementedError (as PyTorch says of a
// layout an op lacks); a non-strided out is the RuntimeError every other bad out gets.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>

#include "message.h"

namespace torch_transpose {
namespace {

// What the tensor is, and how a caller turns it into one the op takes.
std::string kind_of(const at::Tensor& t) {
  if (t.is_quantized()) return "quantized tensor (dequantize() it first)";
  if (t.is_nested()) return "nested tensor (to_padded_tensor() or unbind() it first)";
  return c10::str(t.layout(), " tensor (to_dense() it first)");
}

bool strided(const at::Tensor& t) { return t.layout() == at::kStrided && !t.is_quantized() && !t.is_nested(); }

void refuse_layout(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& arguments = op.schema().arguments();
  const size_t first = stack->size() - arguments.size();
  const std::string name = op.schema().name().substr(op.schema().name().find("::") + 2);
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& value = (*stack)[first + i];
    if (!value.isTensor() || strided(value.toTensor())) continue;
    const std::string& argument = arguments[i].name();
    const at::Tensor& t = value.toTensor();
    TORCH_CHECK(argument != "out", message(name, ": expected out to be a dense strided tensor, but got a ",
                                           kind_of(t).substr(0, kind_of(t).find(" (")), ". Pass a dense out."));
    TORCH_CHECK_NOT_IMPLEMENTED(false, message(name, ": ", argument, " must be a dense strided tensor, got a ", kind_of(t)));
  }
  TORCH_CHECK_NOT_IMPLEMENTED(false, message(name, ": no kernel for these tensors"));
}

void refuse_every_op(torch::Library& m) {
  for (const char* op : {"transpose", "transpose_out", "permute", "permute_out", "to_memory_format"})
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&refuse_layout>());
}

}  // namespace
}  // namespace torch_transpose

TORCH_LIBRARY_IMPL(torch_transpose, SparseCPU, m) { torch_transpose::refuse_every_op(m); }
TORCH_LIBRARY_IMPL(torch_transpose, SparseCUDA, m) { torch_transpose::refuse_every_op(m); }
TORCH_LIBRARY_IMPL(torch_transpose, SparseCsrCPU, m) { torch_transpose::refuse_every_op(m); }
TORCH_LIBRARY_IMPL(torch_transpose, SparseCsrCUDA, m) { torch_transpose::refuse_every_op(m); }
TORCH_LIBRARY_IMPL(torch_transpose, QuantizedCPU, m) { torch_transpose::refuse_every_op(m); }
TORCH_LIBRARY_IMPL(torch_transpose, QuantizedCUDA, m) { torch_transpose::refuse_every_op(m); }
TORCH_LIBRARY_IMPL(torch_transpose, NestedTensorCPU, m) { torch_transpose::refuse_every_op(m); }
TORCH_LIBRARY_IMPL(torch_transpose, NestedTensorCUDA, m) { torch_transpose::refuse_every_op(m); }
