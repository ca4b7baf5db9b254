"""The random-layout suite: layouts no fixed suite lists, drawn from a seed, to measure how
general the kernels are (`python -m bench --suite random --seed S --count N`).

Each layout: rank 2-5, element size 1, 2, 4, 8 or 16 bytes, a byte total drawn log-uniform over
16 MB-1 GB (4-64 MB on the CPU), dims drawn log-uniform with some of 2-32 and some odd, a
permutation of one kind (a 2-D or batched transpose, one that keeps the innermost dim, a
reversal, or any other), and in a quarter of the layouts an input that is a view with an offset.
The same seed draws the same layouts on every machine.
"""
import math
import random

from .cases import Case

DTYPES_BY_BYTES = {1: ("int8", "fp8"), 2: ("bf16", "fp16"), 4: ("fp32",), 8: ("fp64", "complex64"), 16: ("complex128",)}
BYTE_RANGE = {"cuda": (16e6, 1e9), "cpu": (4e6, 64e6)}
PERMUTATION_KINDS = ("transpose", "keep_inner", "reversal", "any")


def _dims(rng, rank, numel):
    """`rank` sizes whose product is close to numel: a few small (2-32), the rest sharing the
    remaining log-size at random; about half of the large ones odd."""
    small = [rng.randint(2, 32) if rng.random() < 0.35 else None for _ in range(rank)]
    if all(s is not None for s in small):
        small[rng.randrange(rank)] = None
    left = math.log(numel) - sum(math.log(s) for s in small if s is not None)
    free = [i for i, s in enumerate(small) if s is None]
    weights = [rng.random() + 0.05 for _ in free]
    sizes = list(small)
    for i, w in zip(free, weights):
        size = max(2, round(math.exp(left * w / sum(weights))))
        if rng.random() < 0.5:
            size |= 1
        sizes[i] = size
    return sizes


def _permutation(rng, rank, kind):
    identity = list(range(rank))
    if kind == "transpose":
        dims = identity[:]
        dims[-2], dims[-1] = dims[-1], dims[-2]
        return dims
    if kind == "reversal":
        return identity[::-1]
    if kind == "keep_inner" and rank >= 3:
        head = identity[:-1]
        while head == identity[:-1]:
            rng.shuffle(head)
        return head + [rank - 1]
    dims = identity[:]
    while dims == identity or dims[-1] == rank - 1:
        rng.shuffle(dims)
    return dims


def _offset_view(shape, cut):
    """A view of a larger base: one more leading row and `cut` more trailing elements, offset."""
    base = (shape[0] + 1,) + tuple(shape[1:-1]) + (shape[-1] + cut,)
    return base, (lambda b: b[1:, ..., cut:])


def draw(seed, count, device="cuda"):
    """`count` layouts for `device` from `seed`, as bench cases (group "random")."""
    rng = random.Random(seed)
    lo, hi = BYTE_RANGE[device]
    cases = []
    for i in range(count):
        element_bytes = rng.choice(sorted(DTYPES_BY_BYTES))
        dtype = rng.choice(DTYPES_BY_BYTES[element_bytes])
        rank = rng.randint(2, 5)
        numel = math.exp(rng.uniform(math.log(lo), math.log(hi))) / element_bytes
        shape = tuple(_dims(rng, rank, numel))
        kind = rng.choice(PERMUTATION_KINDS)
        dims = tuple(_permutation(rng, rank, kind))
        name = f"{dtype} {'x'.join(map(str, shape))} ({','.join(map(str, dims))})"
        base_shape, make_view = None, None
        if rng.random() < 0.25:
            base_shape, make_view = _offset_view(shape, rng.randint(1, 7))
            name += " view"
        cases.append(Case(f"r{seed}.{i} {name}", "random", dtype, shape, ("permute", dims),
                          make_view=make_view, base_shape=base_shape))
    return cases


def _ratio(records, case, impl, other):
    a = next((r["gbps"] for r in records if r["case"] == case and r["impl"] == impl), None)
    b = next((r["gbps"] for r in records if r["case"] == case and r["impl"] == other), None)
    return a / b if a and b else None


def summary(records, cases, kernel_of=None):
    """The distribution the generality targets speak of, as text: geomean, 10th percentile and
    minimum of ours/copy, layouts below eager (under 0.98 of it) and below torch.compile (under
    0.95 of it), and the worst ten layouts with their kernels."""
    rows = []
    for case in cases:
        to_copy = _ratio(records, case.name, "torch_transpose", "copy")
        if to_copy is None:
            continue
        rows.append((to_copy, case, _ratio(records, case.name, "torch_transpose", "eager"),
                     _ratio(records, case.name, "torch_transpose", "compile")))
    if not rows:
        return "no layout was measured"
    ratios = sorted(r[0] for r in rows)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    p10 = ratios[max(0, math.ceil(0.1 * len(ratios)) - 1)]
    below_eager = sum(1 for r in rows if r[2] is not None and r[2] < 0.98)
    below_compile = sum(1 for r in rows if r[3] is not None and r[3] < 0.95)
    lines = [f"random suite: {len(rows)} layouts; ours/copy geomean {geomean:.3f}, p10 {p10:.3f}, min {ratios[0]:.3f}; "
             f"below eager (<0.98): {below_eager}; below torch.compile (<0.95): {below_compile}",
             "worst ten (ours/copy, ours/eager, ours/compile, kernel):"]
    for to_copy, case, to_eager, to_compile in sorted(rows, key=lambda r: r[0])[:10]:
        kernel = kernel_of(case) if kernel_of else ""
        fmt = lambda v: f"{v:.2f}" if v is not None else "-"
        lines.append(f"  {to_copy:.3f} {fmt(to_eager):>5} {fmt(to_compile):>5}  {case.name}  {kernel}")
    return "\n".join(lines)
