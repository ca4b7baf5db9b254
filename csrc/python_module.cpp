// The Python extension module torch_transpose._C. Importing it loads this shared library,
// whose static initialisers register the operators (csrc/ops.cpp). It also exposes `explain`,
// which returns text and so is no operator, and unboxed entry points for the Python wrappers.
//
// Why unboxed entry points: a call through torch.ops converts every argument to an IValue and
// the result back, which cost about 4 of the 9-10 us of a small call on the CPU (2026-11-30,
// `python -m bench.host_overhead`). These functions call the same operators through the dispatcher
// (csrc/api.cpp), so autograd, vmap, fake tensors, dispatch modes, CUDA graphs and the JIT
// tracer see exactly what they see through torch.ops. What they skip is the Python layer:
// __torch_function__ (tensor subclasses and torch-function modes) and Dynamo, which cannot
// trace a pybind function. The wrappers (torch_transpose/_functions.py) call them only when
// neither can be involved. As torch.ops does, they release the GIL while the op runs.
#include <torch/extension.h>

#include "include/torch_transpose/torch_transpose.h"

namespace {

namespace py = pybind11;
using at::Tensor;

void define_direct_entry_points(py::module_& m) {
  const auto no_gil = py::call_guard<py::gil_scoped_release>();
  m.def("transpose_direct", [](const Tensor& self, int64_t dim0, int64_t dim1) {
    return torch_transpose::transpose(self, dim0, dim1);
  }, no_gil, "torch.ops.torch_transpose.transpose without boxing (plain tensors only).");
  m.def("transpose_out_direct", [](const Tensor& self, int64_t dim0, int64_t dim1, const Tensor& out) {
    torch_transpose::transpose_out(self, dim0, dim1, out);
  }, no_gil, "torch.ops.torch_transpose.transpose_out without boxing (plain tensors only).");
  m.def("permute_direct", [](const Tensor& self, const std::vector<int64_t>& dims) {
    return torch_transpose::permute(self, dims);
  }, no_gil, "torch.ops.torch_transpose.permute without boxing (plain tensors only).");
  m.def("permute_out_direct", [](const Tensor& self, const std::vector<int64_t>& dims, const Tensor& out) {
    torch_transpose::permute_out(self, dims, out);
  }, no_gil, "torch.ops.torch_transpose.permute_out without boxing (plain tensors only).");
  m.def("to_memory_format_direct", [](const Tensor& self, at::MemoryFormat memory_format) {
    return torch_transpose::to_memory_format(self, memory_format);
  }, no_gil, "torch.ops.torch_transpose.to_memory_format without boxing (plain tensors only).");
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_transpose compiled operators (registered on import) and the plan explainer";
  m.def("explain", &torch_transpose::explain, pybind11::arg("self"), pybind11::arg("dims"),
        pybind11::arg("out") = std::nullopt,
        "The kernel plan for self.permute(dims) into out (or a new contiguous tensor), as text.");
  define_direct_entry_points(m);
#ifdef TORCH_TRANSPOSE_WITH_CUDA
  m.attr("with_cuda") = true;
#else
  m.attr("with_cuda") = false;
#endif
}
