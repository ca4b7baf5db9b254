"""Autograd for the public Python wrappers.

The operators' own autograd kernels are C++ (csrc/autograd.cpp): they serve plain autograd,
gradcheck, opcheck and torch.compile without a Python call per op. torch.func.grad (and vmap of
grad) refuses op-level autograd of either kind, but accepts a ``torch.autograd.Function`` with a
separate ``setup_context`` and ``generate_vmap_rule`` (checked on torch 2.11; see
shared/DESIGN.md). The wrappers in _functions.py route calls that need a gradient through these.
The gradient of a transpose is the same transpose of the gradient; of a permute, the inverse
permute.
"""
import torch

from ._dims import inverse_permutation, permutation_of

_ops = torch.ops.torch_transpose


class TransposeFunction(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(self, dim0, dim1):
        return _ops.transpose.default(self, dim0, dim1)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, ctx.dim0, ctx.dim1 = inputs

    @staticmethod
    def backward(ctx, grad):
        return TransposeFunction.apply(grad, ctx.dim0, ctx.dim1), None, None


class PermuteFunction(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(self, dims):
        return _ops.permute.default(self, dims)

    @staticmethod
    def setup_context(ctx, inputs, output):
        self, dims = inputs
        ctx.inverse = inverse_permutation(permutation_of(self.dim(), dims))

    @staticmethod
    def backward(ctx, grad):
        return PermuteFunction.apply(grad, ctx.inverse), None
