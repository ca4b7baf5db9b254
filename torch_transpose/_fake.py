"""Fake (meta) kernels: exact output sizes, strides, dtype and device, symbolic sizes allowed."""
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


def _check_out(op, self, expected_shape, out):
    torch._check(out.dtype == self.dtype, lambda: f"{op}: expected out to have dtype {self.dtype}, got {out.dtype}")
    torch._check(out.device == self.device, lambda: f"{op}: expected out on device {self.device}, got {out.device}")
    torch._check(len(out.shape) == len(expected_shape), lambda: f"{op}: expected out to have {len(expected_shape)} dims")
    for got, want in zip(out.shape, expected_shape):
        torch._check(got == want, lambda: f"{op}: expected out to have shape {list(expected_shape)}, got {list(out.shape)}")


@torch.library.register_fake("torch_transpose::transpose_out")
def _transpose_out_fake(self, dim0, dim1, out):
    perm = transpose_permutation(self.dim(), dim0, dim1)
    _check_out("transpose_out", self, [self.shape[p] for p in perm], out)


@torch.library.register_fake("torch_transpose::permute_out")
def _permute_out_fake(self, dims, out):
    perm = permutation_of(self.dim(), dims)
    _check_out("permute_out", self, [self.shape[p] for p in perm], out)
