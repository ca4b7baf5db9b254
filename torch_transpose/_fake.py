"""Fake (meta) kernels: exact output sizes, strides, dtype and device, symbolic sizes allowed."""
import warnings

import torch

from ._dims import permutation_of, transpose_permutation


@torch.library.register_fake("torch_transpose::transpose")
def _transpose_fake(self, dim0=-2, dim1=-1):
    perm = transpose_permutation(self.dim(), dim0, dim1)
    return self.new_empty([self.shape[p] for p in perm])


@torch.library.register_fake("torch_transpose::permute")
def _permute_fake(self, dims):
    perm = permutation_of(self.dim(), dims)
    return self.new_empty([self.shape[p] for p in perm])


@torch.library.register_fake("torch_transpose::to_memory_format")
def _to_memory_format_fake(self, memory_format):
    return torch.empty_like(self, memory_format=memory_format)


def _scalar_type_names():
    """dtype -> the name C++ messages give it (c10's, "Float" for torch.float32): a CPU tensor's
    type() carries it ("torch.FloatTensor")."""
    names = {}
    for value in vars(torch).values():
        if isinstance(value, torch.dtype) and value not in names:
            try:
                with warnings.catch_warnings():  # ComplexHalf warns that it is experimental
                    warnings.simplefilter("ignore")
                    names[value] = torch.empty(0, dtype=value).type().removeprefix("torch.").removesuffix("Tensor")
            except (RuntimeError, TypeError):
                pass
    return names


_SCALAR_TYPE_NAMES = _scalar_type_names()


def _check_out(op, self, expected_shape, out):
    """The C++ op layer's out checks (csrc/ops.cpp, check_out), in its order and with its messages."""
    expected_shape = list(expected_shape)
    def shape_message():
        return f"{op}: expected out to have shape {expected_shape} (the result's shape), but got {list(out.shape)}"
    torch._check(len(out.shape) == len(expected_shape), shape_message)
    for got, want in zip(out.shape, expected_shape):
        torch._check(got == want, shape_message)  # one check per dim: symbolic sizes stay symbolic
    name = _SCALAR_TYPE_NAMES.get
    torch._check(out.dtype == self.dtype, lambda: f"{op}: expected out to have dtype {name(self.dtype, self.dtype)} "
                                                  f"(the dtype of self), but got {name(out.dtype, out.dtype)}")
    torch._check(out.device == self.device,
                 lambda: f"{op}: expected out on device {self.device} (the device of self), but got {out.device}")


@torch.library.register_fake("torch_transpose::transpose_out")
def _transpose_out_fake(self, dim0, dim1, out):
    perm = transpose_permutation(self.dim(), dim0, dim1)
    _check_out("transpose_out", self, [self.shape[p] for p in perm], out)


@torch.library.register_fake("torch_transpose::permute_out")
def _permute_out_fake(self, dims, out):
    perm = permutation_of(self.dim(), dims, "permute_out")
    _check_out("permute_out", self, [self.shape[p] for p in perm], out)
