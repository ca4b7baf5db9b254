"""Autograd for the functional operators.

Two routes, both needed:
* ``register_autograd`` on the operators themselves, so ``torch.ops.torch_transpose.*`` are
  differentiable (plain autograd, gradcheck, opcheck, torch.compile).
* ``torch.autograd.Function`` subclasses, used by the public Python wrappers when a gradient is
  needed: torch.func.grad (and vmap of grad) refuse ops whose autograd comes from
  register_autograd, but accept a Function with a separate setup_context and
  generate_vmap_rule (checked on torch 2.11; see shared/DESIGN.md).
The gradient of a transpose is the same transpose of the gradient; of a permute, the inverse
permute; of a layout conversion, the gradient itself.
"""
import torch

from ._dims import inverse_permutation, permutation_of

_ops = torch.ops.torch_transpose


def _transpose_setup(ctx, inputs, output):
    _, ctx.dim0, ctx.dim1 = inputs


def _transpose_backward(ctx, grad):
    return _ops.transpose.default(grad, ctx.dim0, ctx.dim1), None, None


def _permute_setup(ctx, inputs, output):
    self, dims = inputs
    ctx.inverse = inverse_permutation(permutation_of(self.dim(), dims))


def _permute_backward(ctx, grad):
    return _ops.permute.default(grad, ctx.inverse), None


def _to_memory_format_backward(ctx, grad):
    return grad, None


torch.library.register_autograd("torch_transpose::transpose", _transpose_backward, setup_context=_transpose_setup)
torch.library.register_autograd("torch_transpose::permute", _permute_backward, setup_context=_permute_setup)
torch.library.register_autograd(
    "torch_transpose::to_memory_format", _to_memory_format_backward, setup_context=lambda ctx, inputs, output: None
)


class TransposeFunction(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(self, dim0, dim1):
        return _ops.transpose.default(self, dim0, dim1)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _transpose_setup(ctx, inputs, output)

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
        _permute_setup(ctx, inputs, output)

    @staticmethod
    def backward(ctx, grad):
        return PermuteFunction.apply(grad, ctx.inverse), None
