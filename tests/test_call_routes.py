"""The Python wrappers reach the operators by two routes (torch_transpose/_functions.py): plain
tensors go through the unboxed entry points in _C, everything that needs the Python layer
(tensor subclasses, torch-function modes, Dynamo) through torch.ops. Both routes must give the
same values and let PyTorch's machinery see the operator call."""
import os

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import torch_transpose as tt
from torch_transpose import _C
from deprecated_apis import uses_torchscript
from helpers import assert_bits_equal, kernel_switch, poisoned

ops = torch.ops.torch_transpose

# (name, call of the wrapper, the same through torch.ops, the unboxed entry point it should use)
CALLS = [
    ("transpose", lambda x: tt.transpose(x, 0, 2), lambda x: ops.transpose(x, 0, 2), "transpose_fast"),
    ("permute", lambda x: tt.permute(x, [2, 0, 1]), lambda x: ops.permute(x, [2, 0, 1]), "permute_fast"),
    ("to_memory_format", lambda x: tt.to_memory_format(x[None], torch.channels_last),
     lambda x: ops.to_memory_format(x[None], torch.channels_last), "to_memory_format_fast"),
]


def _input(device):
    return torch.randn(3, 5, 7, device=device)[:, 1:, ::2]  # strided, non-square


@pytest.mark.parametrize("name,call,reference,entry", CALLS, ids=[c[0] for c in CALLS])
def test_plain_tensors_take_the_unboxed_route(device, monkeypatch, name, call, reference, entry):
    taken = []
    real = getattr(_C, entry)
    monkeypatch.setattr(_C, entry, lambda *args: taken.append(entry) or real(*args))
    x = _input(device)
    got = call(x)
    assert taken == [entry]
    assert_bits_equal(got, reference(x))
    assert got.stride() == reference(x).stride()


def test_out_variants_take_the_unboxed_route(device, monkeypatch):
    taken = []
    for entry in ("transpose_out_fast", "permute_out_fast"):
        real = getattr(_C, entry)
        monkeypatch.setattr(_C, entry, lambda *args, real=real, entry=entry: taken.append(entry) or real(*args))
    x = _input(device)
    buffer = poisoned((6, 10), torch.float32, device)
    out = buffer[1:4, 1:9:2].t()  # (4, 3): a stepped, transposed view with a guard region around it
    before = buffer.clone()
    tt.transpose(x[:, :, 0], out=out)
    tt.permute(x[:, :, 1], [1, 0], out=out)
    assert taken == ["transpose_out_fast", "permute_out_fast"]
    assert_bits_equal(out, x[:, :, 1].t())
    untouched = torch.ones_like(buffer, dtype=torch.bool)
    untouched[1:4, 1:9:2] = False
    assert_bits_equal(buffer[untouched], before[untouched])


class Tagged(torch.Tensor):
    """A subclass whose __torch_function__ records every call it sees."""
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})


@pytest.mark.parametrize("name,call,reference,entry", CALLS, ids=[c[0] for c in CALLS])
def test_subclasses_see_the_call_through_torch_function(device, name, call, reference, entry):
    x = _input(device)
    Tagged.seen.clear()
    got = call(x.as_subclass(Tagged))
    assert getattr(ops, name).default in Tagged.seen
    assert type(got) is Tagged
    assert_bits_equal(got.as_subclass(torch.Tensor), reference(x))


class _Recording:
    """Records every op call a mode sees, then runs it."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def _record(self, func, args, kwargs):
        self.seen.append(func)
        return func(*args, **(kwargs or {}))


class FunctionRecorder(_Recording, TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self._record(func, args, kwargs)


class DispatchRecorder(_Recording, TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self._record(func, args, kwargs)


def test_torch_function_modes_see_the_call(device):
    x = _input(device)
    with FunctionRecorder() as mode:
        for _, call, _, _ in CALLS:
            call(x)
    assert {ops.transpose.default, ops.permute.default, ops.to_memory_format.default} <= set(mode.seen)


def test_dispatch_modes_see_the_unboxed_call(device):
    # The unboxed route still runs the dispatcher, so its Python key reaches dispatch modes
    # (FakeTensorMode, make_fx and export are built on them).
    x = _input(device)
    with DispatchRecorder() as mode:
        results = [call(x) for _, call, _, _ in CALLS]
    assert {ops.transpose.default, ops.permute.default, ops.to_memory_format.default} <= set(mode.seen)
    for got, (_, _, reference, _) in zip(results, CALLS):
        assert_bits_equal(got, reference(x))


def test_errors_are_pytorch_types_on_the_unboxed_route():
    x = torch.randn(4, 6)
    with pytest.raises(IndexError):
        tt.permute(x, [0, 2])
    with pytest.raises(RuntimeError, match="repeat"):
        tt.permute(x, [1, 1])
    with pytest.raises(RuntimeError, match="shape"):
        tt.transpose(x, out=torch.empty(4, 6))


def test_fast_entry_points_check_their_argument_count():
    # Plain CPython functions (python_module.cpp): a wrong count is Python's TypeError, not a
    # read past the arguments.
    x = torch.randn(2, 3)
    for entry, args in (("transpose_fast", (x, 0)), ("permute_fast", (x,)), ("transpose_out_fast", (x, 0, 1)),
                        ("permute_out_fast", (x, [1, 0], x, x)), ("to_memory_format_fast", ())):
        with pytest.raises(TypeError, match=f"{entry}\\(\\) takes"):
            getattr(_C, entry)(*args)


def test_fast_entry_points_decline_what_they_do_not_serve(device):
    # _C.transpose_fast / permute_fast serve plain tensors with exact int dims and no gradient
    # wanted; for anything else they answer NotImplemented and the wrapper's general route runs
    # (python_module.cpp). Each declined call must still give eager's values through the wrapper.
    np = pytest.importorskip("numpy")
    x = _input(device)
    leaf = x.clone().requires_grad_()
    permuted, transposed = x.permute(2, 0, 1).contiguous(), x.transpose(0, 2).contiguous()
    declined = [  # (what, the fast entry's call, the wrapper's call, eager's result)
        ("numpy int dim", lambda: _C.permute_fast(x, (np.int64(2), 0, 1)), lambda: tt.permute(x, (np.int64(2), 0, 1)),
         permuted),
        ("bool dim", lambda: _C.transpose_fast(x, False, 2), lambda: tt.transpose(x, False, 2), transposed),
        ("tensor dim", lambda: _C.transpose_fast(x, torch.tensor(0), 2), lambda: tt.transpose(x, torch.tensor(0), 2),
         transposed),
        ("generator dims", lambda: _C.permute_fast(x, (d for d in (2, 0, 1))),
         lambda: tt.permute(x, (d for d in (2, 0, 1))), permuted),
        ("gradient wanted", lambda: _C.permute_fast(leaf, [2, 0, 1]), lambda: tt.permute(leaf, [2, 0, 1]), permuted),
        ("subclass", lambda: _C.permute_fast(x.as_subclass(Tagged), [2, 0, 1]),
         lambda: tt.permute(x.as_subclass(Tagged), [2, 0, 1]).as_subclass(torch.Tensor), permuted),
    ]
    for label, fast, wrapper, expected in declined:
        assert fast() is NotImplemented, label
        assert_bits_equal(wrapper().detach(), expected)
    assert _C.transpose_fast(x, 0, 2**70) is NotImplemented  # beyond int64: the general route's error
    with pytest.raises((TypeError, RuntimeError, IndexError)):
        tt.transpose(x, 0, 2**70)
    with FunctionRecorder():
        assert _C.permute_fast(x, [2, 0, 1]) is NotImplemented
    # Served: a plain tensor, ints in a list or a tuple, a tensor that needs no gradient here.
    with torch.no_grad():
        assert_bits_equal(_C.permute_fast(leaf, (2, 0, 1)), x.permute(2, 0, 1).contiguous())
    assert_bits_equal(_C.transpose_fast(x, 0, 2), x.transpose(0, 2).contiguous())


def test_to_memory_format_fast_entry_declines_what_it_does_not_serve(device):
    x = torch.randn(2, 3, 5, 4, device=device)[:, :, 1:]  # a strided view
    expected = x.contiguous(memory_format=torch.channels_last)
    leaf = x.clone().requires_grad_()
    assert _C.to_memory_format_fast(x, "channels_last") is NotImplemented
    with pytest.raises(TypeError, match="memory_format"):
        tt.to_memory_format(x, "channels_last")
    assert _C.to_memory_format_fast(leaf, torch.channels_last) is NotImplemented
    result = tt.to_memory_format(leaf, torch.channels_last)  # the general route keeps autograd
    assert result.requires_grad and result.stride() == expected.stride()
    result.sum().backward()
    assert_bits_equal(leaf.grad, torch.ones_like(x))
    with FunctionRecorder():
        assert _C.to_memory_format_fast(x, torch.channels_last) is NotImplemented
    # Served: a plain tensor and a torch.memory_format, preserve_format included.
    for memory_format in (torch.channels_last, torch.contiguous_format, torch.preserve_format):
        got = _C.to_memory_format_fast(x, memory_format)
        want = x.contiguous(memory_format=memory_format) if memory_format is not torch.preserve_format \
            else torch.empty_like(x).copy_(x)
        assert_bits_equal(got, want)
        assert got.stride() == want.stride()
    with pytest.raises(RuntimeError, match="rank"):
        _C.to_memory_format_fast(x[0], torch.channels_last)  # PyTorch's own error for a 3-D input


def test_out_fast_entry_points_decline_what_they_do_not_serve(device):
    # _C.transpose_out_fast / permute_out_fast serve plain tensors, a plain out and exact int dims
    # with no gradient wanted, and return the out object itself; otherwise NotImplemented, and
    # the wrapper's general route serves the call or raises PyTorch's error.
    np = pytest.importorskip("numpy")
    x = _input(device)
    expected = x.permute(2, 0, 1).contiguous()
    out = torch.empty_like(expected)
    leaf = x.clone().requires_grad_()
    out_leaf = torch.empty_like(expected).requires_grad_()
    assert _C.permute_out_fast(x, (np.int64(2), 0, 1), out) is NotImplemented
    assert _C.permute_out_fast(x, [2, 0, 1], out.as_subclass(Tagged)) is NotImplemented
    assert _C.transpose_out_fast(x, 0, True, out) is NotImplemented
    assert _C.permute_out_fast(leaf, [2, 0, 1], out) is NotImplemented
    assert _C.permute_out_fast(x, [2, 0, 1], out_leaf) is NotImplemented
    for source, target in ((leaf, out), (x, out_leaf)):  # the general route refuses these
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            tt.permute(source, [2, 0, 1], out=target)
    out.fill_(float("nan"))
    assert tt.permute(x, (np.int64(2), 0, 1), out=out) is out  # declined, served by the general route
    assert_bits_equal(out, expected)
    with FunctionRecorder():
        assert _C.permute_out_fast(x, [2, 0, 1], out) is NotImplemented
    # Served: the out object comes back, written, with its version bumped.
    out.fill_(float("nan"))
    version = out._version
    assert _C.permute_out_fast(x, (2, 0, 1), out) is out
    assert_bits_equal(out, expected)
    assert out._version > version
    transposed = x.transpose(0, 2).contiguous()
    out_t = torch.full_like(transposed, float("nan"))
    with torch.no_grad():
        assert _C.transpose_out_fast(leaf, 0, 2, out_t) is out_t
    assert_bits_equal(out_t, transposed)


def test_fast_entries_call_the_kernels_directly_only_when_nothing_would_intercept(device):
    # When dispatch would reach our CPU or CUDA kernel with nothing in between, the fast entries
    # call that kernel directly (csrc/fast_dispatch.h). Everything that intercepts a dispatched
    # call must still see it: vmap, dispatch modes, autocast, conjugate views, functionalization,
    # the JIT tracer and the profiler's op records. Each case checks the route and eager's values through the
    # wrapper.
    x = _input(device)
    if kernel_switch("fast_direct") != "0":
        assert _C.dispatch_reaches_kernels(x)
        with torch.inference_mode():
            assert _C.dispatch_reaches_kernels(torch.randn(2, 3, device=device))
    expected = x.permute(2, 0, 1).contiguous()

    routes = []

    def reverse_and_note(t):
        routes.append(_C.dispatch_reaches_kernels(t))
        return tt.permute(t, list(range(t.dim()))[::-1])

    assert_bits_equal(torch.vmap(reverse_and_note)(x), x.permute(0, 2, 1).contiguous())
    assert_bits_equal(torch.func.functionalize(reverse_and_note)(x), x.permute(2, 1, 0).contiguous())
    assert routes == [False, False]

    with DispatchRecorder():
        assert not _C.dispatch_reaches_kernels(x)
    with torch.autocast(device_type=device):
        assert not _C.dispatch_reaches_kernels(x)
        assert_bits_equal(tt.permute(x, [2, 0, 1]), expected)
    z = torch.randn(3, 4, dtype=torch.complex64, device=device).conj()
    assert not _C.dispatch_reaches_kernels(z)
    assert_bits_equal(tt.transpose(z, 0, 1), z.t().contiguous())

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        assert not _C.dispatch_reaches_kernels(x)
        assert_bits_equal(tt.permute(x, [2, 0, 1]), expected)
    assert "torch_transpose::permute" in {e.name for e in prof.events()}


@uses_torchscript
def test_the_jit_tracer_sees_the_op(device):
    # The traced graph must hold the op, so the trace must not take the direct route
    # (torch.jit.trace's check run, untraced, may).
    x = _input(device)
    routes = []

    def reverse_and_note(t):
        routes.append(_C.dispatch_reaches_kernels(t))
        return tt.permute(t, list(range(t.dim()))[::-1])

    traced = torch.jit.trace(reverse_and_note, (x,), check_trace=False)
    assert routes == [False]
    assert "torch_transpose::permute" in str(traced.graph)
    y = torch.randn_like(x)
    assert_bits_equal(traced(y), y.permute(2, 1, 0).contiguous())
