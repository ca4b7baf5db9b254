// The Python extension module torch_transpose._C. Importing it loads this shared library,
// whose static initialisers register the operators (csrc/ops.cpp); it also exposes `explain`,
// which returns text and so is no operator.
#include <torch/extension.h>

#include "include/torch_transpose/torch_transpose.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_transpose compiled operators (registered on import) and the plan explainer";
  m.def("explain", &torch_transpose::explain, pybind11::arg("self"), pybind11::arg("dims"),
        pybind11::arg("out") = std::nullopt,
        "The kernel plan for self.permute(dims) into out (or a new contiguous tensor), as text.");
#ifdef TORCH_TRANSPOSE_WITH_CUDA
  m.attr("with_cuda") = true;
#else
  m.attr("with_cuda") = false;
#endif
}
