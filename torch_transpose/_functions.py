"""The public Python API: typed, documented wrappers over ``torch.ops.torch_transpose``."""
import operator
from typing import Optional, Sequence

import torch

from . import _C
from ._autograd import PermuteFunction, TransposeFunction

_ops = torch.ops.torch_transpose
_torch_function_mode_enabled = torch._C._is_torch_function_mode_enabled
# Bound once: the fast paths below run on every call.
_is_compiling = torch.compiler.is_compiling  # the same function object, which Dynamo folds to True
_index = operator.index


def _check_tensor(op: str, name: str, t: Optional[torch.Tensor], optional: bool = False) -> None:
    # PyTorch's own TypeError for a non-tensor argument; torch.ops would raise RuntimeError,
    # and attribute access on a non-tensor AttributeError.
    if not (isinstance(t, torch.Tensor) or (optional and t is None)):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")


def _needs_grad(t: torch.Tensor) -> bool:
    return t.requires_grad and torch.is_grad_enabled()


def _direct(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> bool:
    """Whether the unboxed entry points in _C may serve this call (python_module.cpp says why
    they exist): never while Dynamo traces (it cannot trace a pybind function), and only for
    plain tensors with no torch-function mode active, since only torch.ops honours
    __torch_function__. The order matters: under Dynamo the first test ends the expression.
    The fast entries (_C.*_fast) make the same tests in C++ (plain_call and plain_tensor in
    python_module.cpp): keep the two in step."""
    if torch.compiler.is_compiling() or _torch_function_mode_enabled():
        return False
    return type(input) is torch.Tensor and (out is None or type(out) is torch.Tensor)


def transpose(input: torch.Tensor, dim0: int = -2, dim1: int = -1, *, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Returns ``input.transpose(dim0, dim1).contiguous()`` as a new tensor, bit for bit.

    With ``out``, writes the same values into ``out`` (any strides: slices, steps, transposed
    views of a larger buffer) and returns ``out``; nothing outside ``out``'s view is touched.
    ``out`` must have the result's shape, ``input``'s dtype and device, and must not overlap
    ``input`` or itself. Like PyTorch's out= functions, it does not support autograd.

    Args:
        input: the tensor, of any dtype, strides and device (CPU or CUDA).
        dim0, dim1: the dims to swap (negative dims wrap); the last two by default.
        out: optional; the tensor to write the result into.

    Raises IndexError for dims out of range (as ``Tensor.transpose`` does) and RuntimeError for
    a mismatched or overlapping ``out``.

    Example::

        >>> x = torch.arange(6.).view(2, 3)
        >>> torch_transpose.transpose(x)
        tensor([[0., 3.],
                [1., 4.],
                [2., 5.]])
        >>> buf = torch.zeros(4, 5)
        >>> _ = torch_transpose.transpose(x, 0, 1, out=buf[1:, 2:4])   # only buf[1:, 2:4] changes
    """
    # The common call (eager, plain tensors, int dims, no gradient wanted): _C's fast entry
    # points make _direct's and _needs_grad's tests themselves and run the op, or answer
    # NotImplemented (python_module.cpp says why: 0.7-1.2 us a call, out= or not). Dynamo
    # must not see them: the is_compiling test, which Dynamo folds to True, comes first, as in
    # _direct.
    if not _is_compiling():
        if out is None:
            result = _C.transpose_fast(input, dim0, dim1)
        else:
            result = _C.transpose_out_fast(input, dim0, dim1, out)
        if result is not NotImplemented:
            return result
    return _transpose(input, dim0, dim1, out)


def _transpose(input, dim0, dim1, out):
    """Every call of transpose() outside its fast path."""
    _check_tensor("transpose", "input", input)
    _check_tensor("transpose", "out", out, optional=True)
    needs_grad = _needs_grad(input)
    dim0, dim1 = _index(dim0), _index(dim1)
    if out is not None:
        (_C.transpose_out_direct if _direct(input, out) else _ops.transpose_out.default)(input, dim0, dim1, out)
        return out
    if needs_grad:
        return TransposeFunction.apply(input, dim0, dim1)
    return (_C.transpose_direct if _direct(input) else _ops.transpose.default)(input, dim0, dim1)


def permute(input: torch.Tensor, dims: Sequence[int], *, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Returns ``input.permute(dims).contiguous()`` as a new tensor, bit for bit.

    ``dims`` lists every dim of ``input`` once (negative dims wrap). With ``out``, writes into
    ``out`` (any strides) and returns it; with identity ``dims`` and a channels-last ``out``
    this converts layout.

    Args:
        input: the tensor, of any dtype, strides and device (CPU or CUDA).
        dims: the permutation, as ``Tensor.permute`` takes it.
        out: optional; the tensor to write the result into.

    Raises IndexError for dims out of range and RuntimeError for a wrong-length or repeated
    ``dims`` or a mismatched ``out``.

    Example::

        >>> nchw = torch.randn(8, 3, 32, 32)
        >>> nhwc = torch_transpose.permute(nchw, (0, 2, 3, 1))
        >>> nhwc.shape, nhwc.is_contiguous()
        (torch.Size([8, 32, 32, 3]), True)
    """
    # The fast paths of transpose(), for permute.
    if not _is_compiling():
        result = _C.permute_fast(input, dims) if out is None else _C.permute_out_fast(input, dims, out)
        if result is not NotImplemented:
            return result
    return _permute(input, dims, out)


def _permute(input, dims, out):
    """Every call of permute() outside its fast path."""
    _check_tensor("permute", "input", input)
    _check_tensor("permute", "out", out, optional=True)
    needs_grad = _needs_grad(input)
    dims = list(map(_index, dims))
    if out is not None:
        (_C.permute_out_direct if _direct(input, out) else _ops.permute_out.default)(input, dims, out)
        return out
    if needs_grad:
        return PermuteFunction.apply(input, dims)
    return (_C.permute_direct if _direct(input) else _ops.permute.default)(input, dims)


def to_memory_format(input: torch.Tensor, memory_format: torch.memory_format) -> torch.Tensor:
    """Returns ``input.contiguous(memory_format=memory_format)`` as a new tensor (never ``input``).

    Args:
        input: the tensor, of any dtype, strides and device (CPU or CUDA).
        memory_format: ``torch.channels_last`` (4-D), ``torch.channels_last_3d`` (5-D),
            ``torch.contiguous_format`` or ``torch.preserve_format``.

    Example::

        >>> y = torch_transpose.to_memory_format(torch.randn(8, 3, 32, 32), torch.channels_last)
        >>> y.is_contiguous(memory_format=torch.channels_last)
        True
    """
    # The common call (a plain tensor, a torch.memory_format, no gradient wanted) takes a fast
    # entry, as in transpose().
    if not _is_compiling():
        result = _C.to_memory_format_fast(input, memory_format)
        if result is not NotImplemented:
            return result
    _check_tensor("to_memory_format", "input", input)
    if not isinstance(memory_format, torch.memory_format):
        raise TypeError("to_memory_format(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(memory_format).__name__}")
    return (_C.to_memory_format_direct if _direct(input) else _ops.to_memory_format.default)(input, memory_format)


def explain(input: torch.Tensor, dims: Sequence[int], out: Optional[torch.Tensor] = None, *,
            sm_count: Optional[int] = None, candidates: bool = False) -> str:
    """The plan and the kernel for ``input.permute(dims)`` into ``out`` (or a new tensor), as text.

    Args:
        input: the tensor to permute. A CPU tensor gets its CPU kernel named, a CUDA tensor its
            CUDA kernels on its device, a meta tensor the CUDA kernels on a device of compute
            capability 9.0 with ``sm_count`` SMs. Nothing runs.
        dims: the permutation, as for ``Tensor.permute``.
        out: the tensor to write into, if any (any strides).
        sm_count: CUDA: the SM count to choose for (default: the device's; 132 for meta tensors).
        candidates: CUDA: also list every kernel family that fits, in the order the selection
            tries them.

    Returns:
        The plan on the first line, then a ``kernel:`` line per launch: the family that chose
        it and the kernel with its template arguments (CUDA: grid, threads, shared memory).

    Example::

        >>> print(torch_transpose.explain(torch.empty(8192, 8192, device="meta"), (1, 0)))
        transpose: sizes=[8192, 8192] ... element_bytes=4 vec=4 index=32
        kernel: lean_tile: lean_tile_transpose_kernel<unsigned int, 4, 64, false, true> grid=(128, 128, 1) ...
    """
    text = _C.explain(input, list(dims), out)
    if input.is_meta or input.is_cuda:
        if not _C.with_cuda:
            return text
    elif not input.is_cpu:
        return text

    def line(prefix, launch):
        where = f" grid={launch['grid']} threads={launch['threads']} smem={launch['smem']}" if launch["threads"] else ""
        return f"\n{prefix}: {launch['family']}: {launch['kernel']}{where}"

    for launch in kernel_launches(input, dims, out, sm_count=sm_count):
        text += line("kernel", launch)
    if candidates and not input.is_cpu:
        for launch in kernel_launches(input, dims, out, sm_count=sm_count, candidates=True):
            text += line("candidate", launch)
    return text


def kernel_launches(input: torch.Tensor, dims: Sequence[int], out: Optional[torch.Tensor] = None, *,
                    sm_count: Optional[int] = None, candidates: bool = False) -> list:
    """The kernel launches ``permute_out(input, dims, out)`` would make, found by a dry run:
    nothing runs, and no GPU is needed for meta tensors.

    Args:
        input: a CPU tensor (its CPU family), a CUDA tensor (its device's CUDA kernels), or a
            meta tensor (the CUDA kernels on a device of compute capability 9.0).
        dims: the permutation.
        out: the tensor to write into, if any.
        sm_count: CUDA: the SM count to choose for (default: the device's; 132 for meta tensors).
        candidates: CUDA: every family that fits, in the registry's order, instead of the chosen one.

    Returns:
        A list of dicts with keys ``family``, ``kernel`` (with template arguments), ``grid``,
        ``threads`` and ``smem`` (0 for CPU families).

    Example::

        >>> torch_transpose.kernel_launches(torch.empty(4194304, 3, device="meta"), (1, 0))[0]["family"]
        'interleave'
    """
    return _C.kernel_launches(input, list(dims), out, int(sm_count or 0), bool(candidates))
