"""Dim wrapping shared by the fake, autograd and vmap rules (the C++ op layer has its own)."""


def wrap_dim(dim, rank):
    """Wraps a possibly negative dim like PyTorch does (a 0-D tensor counts as 1-D)."""
    bound = max(rank, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})")
    return dim % bound


def transpose_permutation(rank, dim0, dim1):
    d0, d1 = wrap_dim(dim0, rank), wrap_dim(dim1, rank)
    perm = list(range(rank))
    if rank > 0:
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm


def permutation_of(rank, dims, op="permute"):
    """`dims` as a permutation of `rank` dims, checked with the C++ op layer's messages
    (csrc/ops.cpp, checked_permutation)."""
    if len(dims) != rank:
        raise RuntimeError(f"{op}: dims must list every dim of self once: self.dim() = {rank} but len(dims) = {len(dims)}")
    perm, seen = [], set()
    for d in dims:
        p = wrap_dim(d, rank)
        if p in seen:
            raise RuntimeError(f"{op}: dims must not repeat a dim, but dim {p} appears twice in {list(dims)}")
        seen.add(p)
        perm.append(p)
    return perm


def inverse_permutation(perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse
