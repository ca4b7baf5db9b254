// The public C++ API (include/torch_transpose/torch_transpose.h): thin calls through the
// dispatcher, so that C++ callers get the same checks, backends and autograd as Python.
#include <ATen/core/dispatch/Dispatcher.h>

#include "include/torch_transpose/torch_transpose.h"

namespace torch_transpose {
namespace {

c10::OperatorHandle find_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
}

}  // namespace

at::Tensor transpose(const at::Tensor& self, int64_t dim0, int64_t dim1) {
  static auto op = find_op("torch_transpose::transpose").typed<at::Tensor(const at::Tensor&, int64_t, int64_t)>();
  return op.call(self, dim0, dim1);
}

const at::Tensor& transpose_out(const at::Tensor& self, int64_t dim0, int64_t dim1, const at::Tensor& out) {
  static auto op = find_op("torch_transpose::transpose_out")
                       .typed<void(const at::Tensor&, int64_t, int64_t, const at::Tensor&)>();
  op.call(self, dim0, dim1, out);
  return out;
}

at::Tensor permute(const at::Tensor& self, at::IntArrayRef dims) {
  static auto op = find_op("torch_transpose::permute").typed<at::Tensor(const at::Tensor&, at::IntArrayRef)>();
  return op.call(self, dims);
}

const at::Tensor& permute_out(const at::Tensor& self, at::IntArrayRef dims, const at::Tensor& out) {
  static auto op = find_op("torch_transpose::permute_out")
                       .typed<void(const at::Tensor&, at::IntArrayRef, const at::Tensor&)>();
  op.call(self, dims, out);
  return out;
}

at::Tensor to_memory_format(const at::Tensor& self, at::MemoryFormat memory_format) {
  static auto op = find_op("torch_transpose::to_memory_format")
                       .typed<at::Tensor(const at::Tensor&, at::MemoryFormat)>();
  return op.call(self, memory_format);
}

}  // namespace torch_transpose
