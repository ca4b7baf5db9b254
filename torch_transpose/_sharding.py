"""DTensor sharding rules: a permute moves each shard with its dim and does nothing else.

Registered with PyTorch's own distributed engine (torch.distributed.tensor.experimental
.register_sharding) when torch.distributed is available. For every op, an input Shard(d) gives
Shard(perm.index(d)) on the output, Replicate gives Replicate, and Partial passes through (the
op is linear). Each rank then runs our kernel on its local shard: no collective is needed.
"""
import torch

from ._dims import permutation_of, transpose_permutation

_ops = torch.ops.torch_transpose


def _shardings(rank, perm, extra_inputs, out_input=False):
    """The acceptable (output placements, input placements) pairs for one mesh dim."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.placement_types import Partial

    rules = []
    for placement_of_output_dim in [Replicate(), Partial()] + [Shard(i) for i in range(rank)]:
        if isinstance(placement_of_output_dim, Shard):
            placement_in = Shard(perm[placement_of_output_dim.dim])
        else:
            placement_in = placement_of_output_dim
        inputs = [placement_in] + [None] * extra_inputs
        if out_input:  # out= variants: out holds the result's placement, and nothing is returned
            rules.append(([], inputs + [placement_of_output_dim]))
        else:
            rules.append(([placement_of_output_dim], inputs))
    return rules


def register():
    """Registers the rules; returns False where torch.distributed (or its DTensor) is missing."""
    if not torch.distributed.is_available():
        return False
    try:
        from torch.distributed.tensor import DTensor
        from torch.distributed.tensor._op_schema import RuntimeSchemaInfo
        from torch.distributed.tensor.experimental import register_sharding
    except ImportError:
        return False

    @register_sharding(_ops.transpose.default)
    def _transpose(self, dim0=-2, dim1=-1):
        return _shardings(self.ndim, transpose_permutation(self.ndim, dim0, dim1), 2)

    @register_sharding(_ops.permute.default)
    def _permute(self, dims):
        return _shardings(self.ndim, permutation_of(self.ndim, dims), 1)

    @register_sharding(_ops.to_memory_format.default)
    def _to_memory_format(self, memory_format):
        return _shardings(self.ndim, list(range(self.ndim)), 1)

    @register_sharding(_ops.transpose_out.default)
    def _transpose_out(self, dim0, dim1, out):
        return _shardings(self.ndim, transpose_permutation(self.ndim, dim0, dim1), 2, out_input=True)

    @register_sharding(_ops.permute_out.default)
    def _permute_out(self, dims, out):
        return _shardings(self.ndim, permutation_of(self.ndim, dims, "permute_out"), 1, out_input=True)

    # register_sharding keys its cache on int arguments only, so `dims` (an int list) would be
    # left out and permute(dx, [1,0,2]) then permute(dx, [2,1,0]) would reuse the first
    # sharding. The schema info names dims (argument 1) as static, with the list hashed.
    schema_info = DTensor._op_dispatcher.sharding_propagator.op_to_schema_info
    for op in (_ops.permute.default, _ops.permute_out.default, _ops.transpose.default, _ops.transpose_out.default,
               _ops.to_memory_format.default):
        schema_info[op] = RuntimeSchemaInfo(static_argnum=1, needs_pytree=True)
    return True
