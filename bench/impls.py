"""Implementations under comparison. Each factory returns a no-argument callable that
materialises the case's layout, or None where it does not apply.

eager and compile use .clone(memory_format=torch.contiguous_format), which is .contiguous()
except that it also copies when the view is already contiguous (.contiguous() would return
the input itself and move nothing).
"""
import torch
from torch._dynamo.utils import counters

import torch_transpose as tt

from . import triton_ref


def _native(op):
    if op[0] == "transpose":
        return lambda t: t.transpose(op[1], op[2]).clone(memory_format=torch.contiguous_format)
    return lambda t: t.permute(op[1]).clone(memory_format=torch.contiguous_format)


def ours(case, x):
    if case.op[0] == "transpose":
        _, d0, d1 = case.op
        return lambda: tt.transpose(x, d0, d1)
    dims = list(case.op[1])
    return lambda: tt.permute(x, dims)


def eager(case, x):
    f = _native(case.op)
    return lambda: f(x)


def compiled(case, x):
    # Dynamo keeps compiled code per code object, and every case's function shares _native's
    # lambdas: without a reset, the ninth case in one process met config.recompile_limit (8)
    # and Dynamo ran it, and every later case, in eager mode, without an error (found
    # 2026-11-30: every H200 suite before then measured "compile" as eager from fp8 8192² on).
    # Each case gets a fresh Dynamo; the previous case's compiled function is not called again.
    # The first call compiles here, and a case that Dynamo did not capture stops the run: an
    # anchor that quietly runs eager must never be timed under the name "compile" again.
    torch._dynamo.reset()
    f = torch.compile(_native(case.op), dynamic=False)
    graphs = counters["stats"]["unique_graphs"]
    f(x)
    if counters["stats"]["unique_graphs"] == graphs:
        raise RuntimeError(f"torch.compile captured no graph for {case.name}: the 'compile' anchor would time eager")
    return lambda: f(x)


def copy(case, x):
    src = torch.empty(x.numel() * x.element_size(), dtype=torch.uint8, device=x.device)
    dst = torch.empty_like(src)
    src.random_(0, 255)
    return lambda: dst.copy_(src)


def view_copy(case, x):
    """dst.copy_(the same strided view): the copy ceiling for strided inputs, no transpose."""
    if x.is_contiguous():
        return None
    dst = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return lambda: dst.copy_(x)


def triton(case, x):
    is_last_two = case.op[0] == "transpose" and {case.op[1] % x.dim(), case.op[2] % x.dim()} == {x.dim() - 2, x.dim() - 1}
    if not (triton_ref.available() and x.is_cuda and x.dim() in (2, 3) and is_last_two):
        return None
    return lambda: triton_ref.transpose_last_two(x)


def cublas(case, x):
    """cuBLAS geam (C = op(A)) through CuPy, for 2-D float32/float64/complex64 inputs."""
    if not (x.is_cuda and x.dim() == 2 and x.is_contiguous() and case.op[0] == "transpose"):
        return None
    if x.dtype not in (torch.float32, torch.float64, torch.complex64):
        return None
    try:
        import cupy
        from cupy import cublas as cupy_cublas
    except Exception:
        return None
    a = cupy.asarray(x)
    out = cupy.empty((x.shape[1], x.shape[0]), dtype=a.dtype)

    def run():
        cupy_cublas.geam("T", "N", 1.0, a, 0.0, out, out=out)
        return out

    try:
        run()
        cupy.cuda.runtime.deviceSynchronize()
        if not torch.equal(torch.as_tensor(out, device=x.device), x.t()):
            return None
    except Exception:
        return None
    return run


IMPLS = {
    "torch_transpose": ours,
    "copy": copy,
    "view_copy": view_copy,
    "eager": eager,
    "compile": compiled,
    "triton": triton,
    "cublas": cublas,
}
ANCHORS = ("eager", "compile", "triton", "cublas")
