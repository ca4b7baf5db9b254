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


def _out_vmap(info, in_dims, self, perm, out):
    """An out= op under vmap: the batch dim of both goes first, and out takes every batch item."""
    self_bdim, out_bdim = in_dims[0], in_dims[-1]
    if out_bdim is None and self_bdim is not None:
        raise RuntimeError("vmap: an out= op whose input is batched needs a batched out (out would hold one result "
                           "for every batch item)")
    if out_bdim is None:
        _ops.permute_out.default(self, perm, out)
        return None, None
    o = _batch_first(out, out_bdim)
    x = _batch_first(self, self_bdim) if self_bdim is not None else self.expand(o.shape[0], *self.shape)
    _ops.permute_out.default(x, [0] + [p + 1 for p in perm], o)
    return None, None


@torch.library.register_vmap("torch_transpose::transpose_out")
def _transpose_out_vmap(info, in_dims, self, dim0, dim1, out):
    rank = self.dim() - (in_dims[0] is not None)
    perm = list(range(rank))
    if rank > 0:
        d0, d1 = wrap_dim(dim0, rank), wrap_dim(dim1, rank)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return _out_vmap(info, (in_dims[0], in_dims[-1]), self, perm, out)


@torch.library.register_vmap("torch_transpose::permute_out")
def _permute_out_vmap(info, in_dims, self, dims, out):
    rank = self.dim() - (in_dims[0] is not None)
    return _out_vmap(info, (in_dims[0], in_dims[-1]), self, permutation_of(rank, dims, "permute_out"), out)
