"""The public Python API: typed, documented wrappers over ``torch.ops.torch_transpose``."""
import operator
from typing import Optional, Sequence

import torch

from . import _C
from ._autograd import PermuteFunction, TransposeFunction

_ops = torch.ops.torch_transpose


def _needs_grad(op: str, t: torch.Tensor) -> bool:
    # Checked here because attribute access on a non-tensor would raise AttributeError first.
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(t).__name__}")
    return t.requires_grad and torch.is_grad_enabled()


def transpose(input: torch.Tensor, dim0: int = -2, dim1: int = -1, *, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Returns ``input.transpose(dim0, dim1).contiguous()`` as a new tensor, bit for bit.

    With ``out``, writes the same values into ``out`` (any strides: slices, steps, transposed
    views of a larger buffer) and returns ``out``; nothing outside ``out``'s view is touched.
    ``out`` must have the result's shape, ``input``'s dtype and device, and must not overlap
    ``input`` or itself. Like PyTorch's out= functions, it does not support autograd.

    Raises IndexError for dims out of range (as ``Tensor.transpose`` does) and RuntimeError for
    a mismatched or overlapping ``out``.
    """
    needs_grad = _needs_grad("transpose", input)
    # operator.index gives Python's TypeError for non-integers, as Tensor.transpose does.
    dim0, dim1 = operator.index(dim0), operator.index(dim1)
    if out is not None:
        _ops.transpose_out.default(input, dim0, dim1, out)
        return out
    if needs_grad:
        return TransposeFunction.apply(input, dim0, dim1)
    return _ops.transpose.default(input, dim0, dim1)


def permute(input: torch.Tensor, dims: Sequence[int], *, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Returns ``input.permute(dims).contiguous()`` as a new tensor, bit for bit.

    ``dims`` lists every dim of ``input`` once (negative dims wrap). With ``out``, writes into
    ``out`` (any strides) and returns it; with identity ``dims`` and a channels-last ``out``
    this converts layout. Raises IndexError for dims out of range and RuntimeError for a
    wrong-length or repeated ``dims`` or a mismatched ``out``.
    """
    needs_grad = _needs_grad("permute", input)
    dims = [operator.index(d) for d in dims]
    if out is not None:
        _ops.permute_out.default(input, dims, out)
        return out
    if needs_grad:
        return PermuteFunction.apply(input, dims)
    return _ops.permute.default(input, dims)


def to_memory_format(input: torch.Tensor, memory_format: torch.memory_format) -> torch.Tensor:
    """Returns ``input.contiguous(memory_format=memory_format)`` as a new tensor (never ``input``).

    ``memory_format`` is ``torch.channels_last`` (4-D), ``torch.channels_last_3d`` (5-D),
    ``torch.contiguous_format`` or ``torch.preserve_format``.
    """
    return _ops.to_memory_format.default(input, memory_format)


def explain(input: torch.Tensor, dims: Sequence[int], out: Optional[torch.Tensor] = None) -> str:
    """The plan the kernels run for ``input.permute(dims)`` into ``out`` (or a new tensor)."""
    return _C.explain(input, list(dims), out)
