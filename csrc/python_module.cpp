// The Python extension module torch_transpose._C. Importing it loads this shared library,
// whose static initialisers register the operators (csrc/ops.cpp). It also exposes `explain`,
// which returns text and so is no operator, and unboxed entry points for the Python wrappers.
//
// Why unboxed entry points: a call through torch.ops converts every argument to an IValue and
// the result back, which cost about 4 of the 9-10 us of a small call on the CPU (2026-11-30,
// `python -m bench.host_overhead`). These functions call the same operators through the dispatcher
// (csrc/api.cpp), so autograd, vmap, fake tensors, dispatch modes, CUDA graphs and the JIT
// tracer see exactly what they see through torch.ops (the functional fast entries skip it only
// where none of these is active: dispatch_reaches_kernels). What they skip is the Python layer:
// __torch_function__ (tensor subclasses and torch-function modes) and Dynamo, which cannot
// trace a C function. The wrappers (torch_transpose/_functions.py) call them only when
// neither can be involved. As torch.ops does, they release the GIL while the op runs.
#include <ATen/PythonTorchFunctionTLS.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/MemoryFormat.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>
#include <torch/version.h>

#include "fast_dispatch.h"
#include "include/torch_transpose/torch_transpose.h"
#include "cpu/simd_transpose.h"
#include "kernel_switches.h"
#include "kernels.h"

namespace {

namespace py = pybind11;
using at::Tensor;

// ---- fast entry points: the wrappers' common call, checked and run in one C++ call ------------
//
// transpose(), permute() and to_memory_format() mostly see a plain tensor (and a plain out=),
// Python ints, no torch-function mode and no gradient wanted. Testing that in Python (five calls) and converting
// dims (list(map(operator.index, dims))) cost 0.7-1 us of a 2.7 us call on the CPU VM; here the
// same tests are a few C API calls. Anything else (a subclass, a mode, a gradient wanted, dims
// that are not exact ints in a list or tuple) gets NotImplemented back, and the wrapper takes its
// general route, which raises PyTorch's own errors for bad arguments. Dynamo never reaches these:
// the wrappers test torch.compiler.is_compiling() first. When nothing would stand between the
// dispatcher and our CPU or CUDA kernel (no vmap, mode, autocast, tracer or profiler:
// dispatch_reaches_kernels), the functional entries call that kernel directly, saving the
// dispatcher's two hops; the out= entries always dispatch (the autograd kernel bumps out's
// version counter, and errors for out= with gradients wanted).

// o's tensor when o is a plain torch.Tensor (not a subclass) that wants no gradient here (out=
// refuses gradients, with the error the general route raises); nullptr otherwise. The caller's
// reference to o keeps the tensor alive.
const Tensor* plain_tensor(PyObject* o) {
  if (!THPVariable_CheckExact(o)) return nullptr;
  const Tensor& t = THPVariable_Unpack(o);
  return t.requires_grad() && at::GradMode::is_enabled() ? nullptr : &t;
}

// self's tensor when it is a plain_tensor and no torch-function mode is active (what the _direct
// entry points below also require of their callers); nullptr otherwise.
const Tensor* plain_call(PyObject* self) {
  return at::impl::torch_function_mode_enabled() ? nullptr : plain_tensor(self);
}

// An exact Python int that fits int64 (bools, numpy ints and other __index__ types go the general
// route, which converts them as Tensor.permute does).
bool exact_int(PyObject* o, int64_t& value) {
  if (!PyLong_CheckExact(o)) return false;
  int overflow = 0;
  value = PyLong_AsLongLongAndOverflow(o, &overflow);
  return overflow == 0;
}

// dims as exact ints from an exact list or tuple; false for anything else (the general route
// converts it as Tensor.permute does, or raises its error).
bool exact_int_sequence(PyObject* seq, c10::SmallVector<int64_t, 8>& values) {
  const bool is_list = PyList_CheckExact(seq);
  if (!is_list && !PyTuple_CheckExact(seq)) return false;
  const Py_ssize_t n = is_list ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq);
  values.resize(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!exact_int(is_list ? PyList_GET_ITEM(seq, i) : PyTuple_GET_ITEM(seq, i), values[i])) return false;
  return true;
}

// Runs a functional op on self without the GIL (as torch.ops does) and wraps its result (a new
// reference): the kernel directly where dispatch_reaches_kernels(self) holds, else the op
// through the dispatcher.
template <typename Kernel, typename Dispatched>
PyObject* run_without_gil(const Tensor& self, Kernel&& kernel, Dispatched&& dispatched) {
  const bool direct = torch_transpose::dispatch_reaches_kernels(self);
  Tensor result;
  {
    py::gil_scoped_release no_gil;
    result = direct ? kernel() : dispatched();
  }
  return THPVariable_Wrap(std::move(result));
}

// Runs an out= op without the GIL and returns the caller's out object itself (a new reference),
// as out= functions do. These go through the dispatcher: its autograd kernel bumps out's
// version counter.
template <typename Op>
PyObject* run_out_without_gil(PyObject* out, Op&& op) {
  {
    py::gil_scoped_release no_gil;
    op();
  }
  Py_INCREF(out);
  return out;
}

PyObject* not_implemented() { Py_RETURN_NOTIMPLEMENTED; }

// The entries are private (only the wrappers call them), but a wrong argument count still gets
// Python's own TypeError rather than a read past the arguments.
bool takes_args(const char* name, Py_ssize_t nargs, Py_ssize_t expected) {
  if (nargs == expected) return true;
  PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments but %zd were given", name, expected, nargs);
  return false;
}

PyObject* transpose_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (!takes_args("transpose_fast", nargs, 3)) return nullptr;
  int64_t d0 = 0, d1 = 0;
  const Tensor* t = plain_call(args[0]);
  if (t == nullptr || !exact_int(args[1], d0) || !exact_int(args[2], d1)) return not_implemented();
  return run_without_gil(*t, [&] { return torch_transpose::transpose_kernel(*t, d0, d1); },
                         [&] { return torch_transpose::transpose(*t, d0, d1); });
  END_HANDLE_TH_ERRORS
}

PyObject* permute_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (!takes_args("permute_fast", nargs, 2)) return nullptr;
  c10::SmallVector<int64_t, 8> perm;
  const Tensor* t = plain_call(args[0]);
  if (t == nullptr || !exact_int_sequence(args[1], perm)) return not_implemented();
  return run_without_gil(*t, [&] { return torch_transpose::permute_kernel(*t, perm); },
                         [&] { return torch_transpose::permute(*t, perm); });
  END_HANDLE_TH_ERRORS
}

PyObject* transpose_out_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (!takes_args("transpose_out_fast", nargs, 4)) return nullptr;
  int64_t d0 = 0, d1 = 0;
  const Tensor* t = plain_call(args[0]);
  const Tensor* o = plain_tensor(args[3]);
  if (t == nullptr || o == nullptr || !exact_int(args[1], d0) || !exact_int(args[2], d1)) return not_implemented();
  return run_out_without_gil(args[3], [&] { torch_transpose::transpose_out(*t, d0, d1, *o); });
  END_HANDLE_TH_ERRORS
}

PyObject* permute_out_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (!takes_args("permute_out_fast", nargs, 3)) return nullptr;
  c10::SmallVector<int64_t, 8> perm;
  const Tensor* t = plain_call(args[0]);
  const Tensor* o = plain_tensor(args[2]);
  if (t == nullptr || o == nullptr || !exact_int_sequence(args[1], perm)) return not_implemented();
  return run_out_without_gil(args[2], [&] { torch_transpose::permute_out(*t, perm, *o); });
  END_HANDLE_TH_ERRORS
}

PyObject* to_memory_format_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (!takes_args("to_memory_format_fast", nargs, 2)) return nullptr;
  const Tensor* t = plain_call(args[0]);
  if (t == nullptr || !THPMemoryFormat_Check(args[1])) return not_implemented();
  const at::MemoryFormat format = reinterpret_cast<THPMemoryFormat*>(args[1])->memory_format;
  return run_without_gil(*t, [&] { return torch_transpose::to_memory_format_kernel(*t, format); },
                         [&] { return torch_transpose::to_memory_format(*t, format); });
  END_HANDLE_TH_ERRORS
}

template <PyObject* (*Entry)(PyObject*, PyObject* const*, Py_ssize_t)>
constexpr PyCFunction fastcall() {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Entry));
}

PyMethodDef fast_entry_points[] = {
    {"transpose_fast", fastcall<transpose_fast>(), METH_FASTCALL,
     "transpose_fast(self, dim0, dim1): transpose() for a plain tensor and int dims, or NotImplemented: see "
     "python_module.cpp."},
    {"permute_fast", fastcall<permute_fast>(), METH_FASTCALL,
     "permute_fast(self, dims): permute() for a plain tensor and a list or tuple of ints, or NotImplemented: see "
     "python_module.cpp."},
    {"transpose_out_fast", fastcall<transpose_out_fast>(), METH_FASTCALL,
     "transpose_out_fast(self, dim0, dim1, out): transpose(out=) for plain tensors and int dims, or "
     "NotImplemented: see python_module.cpp."},
    {"permute_out_fast", fastcall<permute_out_fast>(), METH_FASTCALL,
     "permute_out_fast(self, dims, out): permute(out=) for plain tensors and a list or tuple of ints, or "
     "NotImplemented: see python_module.cpp."},
    {"to_memory_format_fast", fastcall<to_memory_format_fast>(), METH_FASTCALL,
     "to_memory_format_fast(self, memory_format): to_memory_format() for a plain tensor and a "
     "torch.memory_format, or NotImplemented: see python_module.cpp."},
    {nullptr, nullptr, 0, nullptr},
};

void define_fast_entry_points(py::module_& m) {
  if (PyModule_AddFunctions(m.ptr(), fast_entry_points) != 0) throw py::error_already_set();
  m.def("dispatch_reaches_kernels", &torch_transpose::dispatch_reaches_kernels,
        "Whether the fast entry points call the CPU or CUDA kernel directly for this tensor now (fast_dispatch.h).");
}

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
  m.def("kernel_launches", [](const Tensor& self, const std::vector<int64_t>& dims, const std::optional<Tensor>& out,
                           int64_t sm_count, bool candidates) {
    py::list launches;
    for (const auto& launch : torch_transpose::kernel_launches(self, dims, out, sm_count, candidates)) {
      py::dict d;
      d["family"] = launch.family;
      d["kernel"] = launch.kernel;
      d["grid"] = py::make_tuple(launch.grid[0], launch.grid[1], launch.grid[2]);
      d["threads"] = launch.threads;
      d["smem"] = launch.smem;
      launches.append(d);
    }
    return launches;
  }, pybind11::arg("self"), pybind11::arg("dims"), pybind11::arg("out") = std::nullopt, pybind11::arg("sm_count") = 0,
        pybind11::arg("candidates") = false,
        "The CUDA launches for self.permute(dims) into out, made by nobody (a dry run).");
  m.def("set_kernel_switches", [](const std::string& text) {
    try {
      return torch_transpose::set_kernel_switches(text);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
  }, "Replaces the kernel switches in force (TORCH_TRANSPOSE_KERNELS's syntax); returns the text it replaced.");
  m.def("kernel_switches_in_force", [] { return torch_transpose::kernel_switches_text(torch_transpose::current_kernel_switches()); },
        "The kernel switches in force (from TORCH_TRANSPOSE_KERNELS or set_kernel_switches), as name=value text.");
  m.def("kernel_switch_names", [] {
    std::vector<std::string> names(std::begin(torch_transpose::kKnownSwitches), std::end(torch_transpose::kKnownSwitches));
    return names;
  }, "Every name TORCH_TRANSPOSE_KERNELS takes.");
  m.def("build_info", [] {
    py::dict info;
    info["torch_built"] = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                          std::to_string(TORCH_VERSION_PATCH);
#ifdef TORCH_TRANSPOSE_WITH_CUDA
    const int cuda = torch_transpose::cuda_build_runtime_version();
    info["cuda_built"] = std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
    info["cuda_architectures"] = torch_transpose::cuda_build_architectures();
#else
    info["cuda_built"] = py::none();
    info["cuda_architectures"] = "";
#endif
    info["cpu_simd"] = torch_transpose::cpu_avx512_blocks_enabled() ? "avx512"
                       : torch_transpose::cpu_avx2_enabled()        ? "avx2"
                                                                    : "sse2";
    return info;
  }, "What this build was made for and what it runs with (torch_transpose.build_info() adds the rest).");
  m.def("record_layouts", &torch_transpose::record_layouts, "Tests only: record every layout the ops move.");
  m.def("take_recorded_layouts", [] {
    py::list layouts;
    for (const auto& l : torch_transpose::take_recorded_layouts())
      layouts.append(py::make_tuple(l.sizes, l.in_strides, l.out_strides, l.element_bytes, l.in_offset_bytes,
                                    l.out_offset_bytes));
    return layouts;
  }, "Tests only: the layouts recorded since the last call, as (sizes, in_strides, out_strides, element_bytes, "
     "in_offset_bytes, out_offset_bytes) tuples.");
  define_fast_entry_points(m);
  define_direct_entry_points(m);
#ifdef TORCH_TRANSPOSE_WITH_CUDA
  m.attr("with_cuda") = true;
#else
  m.attr("with_cuda") = false;
#endif
}
