"""vmap rules: move the batch dim to the front and shift the op's dims past it."""
import torch

from ._dims import permutation_of, wrap_dim

_ops = torch.ops.torch_transpose


def _batch_first(x, bdim):
    return x if bdim is None or bdim == 0 else x.movedim(bdim, 0)


@torch.library.register_vmap("torch_transpose::transpose")
def _transpose_vmap(info, in_dims, self, dim0=-2, dim1=-1):
    bdim = in_dims[0]
    if bdim is None:
        return _ops.transpose.default(self, dim0, dim1), None
    x = _batch_first(self, bdim)
    rank = x.dim() - 1
    return _ops.transpose.default(x, wrap_dim(dim0, rank) + 1, wrap_dim(dim1, rank) + 1), 0


@torch.library.register_vmap("torch_transpose::permute")
def _permute_vmap(info, in_dims, self, dims):
    bdim = in_dims[0]
    if bdim is None:
        return _ops.permute.default(self, dims), None
    x = _batch_first(self, bdim)
    perm = permutation_of(x.dim() - 1, dims)
    return _ops.permute.default(x, [0] + [p + 1 for p in perm]), 0


@torch.library.register_vmap("torch_transpose::to_memory_format")
def _to_memory_format_vmap(info, in_dims, self, memory_format):
    # A memory format speaks of the logical dims (N, C, H, W), so the batch dim goes first and
    # the logical dims keep the requested layout; the conversion is a copy of the same values.
    bdim = in_dims[0]
    if bdim is None:
        return _ops.to_memory_format.default(self, memory_format), None
    x = _batch_first(self, bdim)
    sample_layout = torch.empty_like(x[0], memory_format=memory_format, device="meta")
    strides = (sample_layout.numel(),) + sample_layout.stride()
    out = torch.empty_strided(x.shape, strides, dtype=x.dtype, device=x.device)
    _ops.permute_out.default(x, list(range(x.dim())), out)
    return out, 0
