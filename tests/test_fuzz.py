"""Property fuzzing: random ranks, sizes (0 and 1 included), input strides (steps, stride 0,
overlap), storage offsets, dims and dtypes, with and without an `out` view inside a guarded
buffer. Every case must equal native PyTorch bit for bit and leave the guard bytes untouched.

Profiles (tests/conftest.py): "ci" runs 150 cases per test and device; run the long profile
before a release: HYPOTHESIS_PROFILE=long pytest tests/test_fuzz.py (10,000 cases each).
"""
import torch
from hypothesis import given
from hypothesis import strategies as st

import torch_transpose as tt
from helpers import assert_bits_equal, assert_only_view_written, poisoned, random_bits

FUZZ_DTYPES = [torch.bool, torch.uint8, torch.int16, torch.bfloat16, torch.float32, torch.int64, torch.complex64,
               torch.complex128, torch.float8_e5m2]


@st.composite
def strided_inputs(draw, device):
    rank = draw(st.integers(1, 5))
    # Small dims plus at most one long one (crossing tile edges) keep every case under ~400k
    # elements: unbounded sizes once asked for 70^5 elements and the fuzz run was killed.
    sizes = draw(st.lists(st.integers(0, 6), min_size=rank, max_size=rank))
    if draw(st.booleans()):
        sizes[draw(st.integers(0, rank - 1))] = draw(st.integers(7, 300))
    # Arbitrary non-negative strides: steps, transposed orders, stride 0 and even overlap are
    # all legal for an input.
    strides = draw(st.lists(st.one_of(st.just(0), st.integers(1, 80)), min_size=rank, max_size=rank))
    offset = draw(st.integers(0, 5))
    dtype = draw(st.sampled_from(FUZZ_DTYPES))
    extent = offset + sum((s - 1) * t for s, t in zip(sizes, strides) if s > 0) + 1
    base = random_bits((extent,), dtype, device)
    return base.as_strided(sizes, strides, offset)


@st.composite
def out_layouts(draw, shape):
    """A non-overlapping strided layout for `shape`: a random dim order with random gaps."""
    order = draw(st.permutations(range(len(shape))))
    strides = [0] * len(shape)
    stride = draw(st.integers(1, 2))
    for d in reversed(order):
        strides[d] = stride
        stride *= max(shape[d], 1) + draw(st.integers(0, 2))
    offset = draw(st.integers(0, 7))
    return strides, offset, stride + offset + 8


def check(x, op, out_spec, device):
    expected = op["native"](x)
    if out_spec is None:
        assert_bits_equal(op["ours"](x, None), expected)
        return
    strides, offset, buffer_len = out_spec
    buffer = poisoned((buffer_len,), x.dtype, device)
    before = buffer.clone()
    view = buffer.as_strided(expected.shape, strides, offset)
    assert op["ours"](x, view) is view
    assert_only_view_written(buffer, view, expected, before)


def _fuzz(device, data, make_op):
    x = data.draw(strided_inputs(device))
    op = make_op(data, x)
    out_spec = data.draw(st.one_of(st.none(), out_layouts(tuple(op["native"](x).shape))))
    check(x, op, out_spec, device)


@given(data=st.data())
def test_fuzz_transpose(device, data):
    def make_op(data, x):
        d0 = data.draw(st.integers(-x.dim(), x.dim() - 1))
        d1 = data.draw(st.integers(-x.dim(), x.dim() - 1))
        return {"native": lambda t: t.transpose(d0, d1).contiguous(),
                "ours": lambda t, out: tt.transpose(t, d0, d1, out=out)}
    _fuzz(device, data, make_op)


@given(data=st.data())
def test_fuzz_permute(device, data):
    def make_op(data, x):
        dims = data.draw(st.permutations(range(x.dim())))
        dims = [d - x.dim() if data.draw(st.booleans()) else d for d in dims]
        return {"native": lambda t: t.permute(dims).contiguous(),
                "ours": lambda t, out: tt.permute(t, dims, out=out)}
    _fuzz(device, data, make_op)
