"""The ops inside PyTorch's machinery: opcheck, autograd, vmap, torch.compile, export, TorchScript."""
import pytest
import torch
import torch.nn as nn

import torch_transpose as tt
from deprecated_apis import uses_torchscript
from helpers import poisoned

ops = torch.ops.torch_transpose


# ---- opcheck: schema, fake tensor, autograd registration, aot dispatch (static and dynamic) ----------

def opcheck_samples(device):
    x = torch.randn(5, 7, 3, device=device)
    strided = torch.randn(6, 9, 8, device=device)[:, ::2, 1:]
    samples = []
    for requires_grad in (False, True):
        for base in (x, strided, torch.randn(4, 6, device=device, dtype=torch.float64)):
            t = base.detach().clone() if base.is_contiguous() else base.detach()
            t = t.requires_grad_(requires_grad) if t.is_floating_point() else t
            samples.append((ops.transpose.default, (t, 0, -1)))
            samples.append((ops.permute.default, (t, list(reversed(range(t.dim()))))))
    ints = torch.randint(0, 100, (6, 4), device=device, dtype=torch.int32)
    samples.append((ops.transpose.default, (ints, 0, 1)))
    # Initialised (poisoned) outputs: opcheck clones its arguments, and a clone of torch.empty
    # memory is a read of uninitialised memory that compute-sanitizer's initcheck reports.
    f32, f64 = torch.float32, torch.float64
    samples.append((ops.transpose_out.default, (x, 0, 1, poisoned((7, 5, 3), f32, device))))
    samples.append((ops.permute_out.default, (x, [2, 0, 1], poisoned((3, 5, 7), f32, device))))
    samples.append((ops.transpose_out.default, (strided, 0, 2, poisoned((14, 5, 7), f32, device)[::2, :, :6])))
    samples.append((ops.permute_out.default, (strided.to(f64), [1, 2, 0], poisoned((5, 7, 6), f64, device))))
    nchw = torch.randn(2, 3, 4, 5, device=device, requires_grad=True)
    samples.append((ops.to_memory_format.default, (nchw, torch.channels_last)))
    return samples


def test_opcheck(device):
    for op, args in opcheck_samples(device):
        torch.library.opcheck(op, args)


def test_every_op_is_pt2_compliant():
    for name in ("transpose", "transpose_out", "permute", "permute_out", "to_memory_format"):
        assert torch.Tag.pt2_compliant_tag in getattr(ops, name).default.tags, name


def test_fake_kernels_match_real_strides(device):
    from torch._subclasses.fake_tensor import FakeTensorMode
    x = torch.randn(4, 6, 5, device=device)
    real = [ops.transpose(x, 0, 2), ops.permute(x, [1, 2, 0]), ops.to_memory_format(x[None], torch.channels_last)]
    with FakeTensorMode() as mode:
        fx = mode.from_tensor(x)
        fake = [ops.transpose(fx, 0, 2), ops.permute(fx, [1, 2, 0]), ops.to_memory_format(fx[None], torch.channels_last)]
    for r, f in zip(real, fake):
        assert (r.shape, r.stride(), r.dtype, r.device) == (f.shape, f.stride(), f.dtype, f.device)


# ---- autograd ---------------------------------------------------------------------------------------

# One case per layout function: under compute-sanitizer each complex128 gradgradcheck takes
# minutes, and separate cases let the sanitizer run spread them over processes.
LAYOUT_FUNCTIONS = {
    "ops.transpose": lambda t: ops.transpose(t, 0, 2),
    "ops.permute": lambda t: ops.permute(t, [1, 2, 0]),
    "tt.transpose": lambda t: tt.transpose(t, 1, -1),
    "tt.permute": lambda t: tt.permute(t, [2, 0, 1]),
    "ops.to_memory_format": lambda t: ops.to_memory_format(t[None], torch.channels_last),
}


@pytest.mark.parametrize("name", LAYOUT_FUNCTIONS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128], ids=str)
def test_gradcheck_and_gradgradcheck(device, dtype, name):
    x = torch.randn(3, 4, 5, dtype=dtype, device=device, requires_grad=True)
    f = LAYOUT_FUNCTIONS[name]
    assert torch.autograd.gradcheck(f, (x,))
    assert torch.autograd.gradgradcheck(f, (x,))


def test_gradients_are_the_inverse_layout(device):
    x = torch.randn(2, 3, 4, device=device, requires_grad=True)
    weights = torch.randn(4, 2, 3, device=device)
    (tt.permute(x, [2, 0, 1]) * weights).sum().backward()
    assert torch.equal(x.grad, weights.permute(1, 2, 0))


def test_torch_func_grad_and_vmap_of_grad(device):
    w = torch.randn(5, 3, device=device)

    def loss(t):
        return (tt.transpose(t) * w).sum()

    x = torch.randn(3, 5, device=device)
    assert torch.equal(torch.func.grad(loss)(x), w.t())
    batch = torch.randn(4, 3, 5, device=device)
    assert torch.equal(torch.vmap(torch.func.grad(loss))(batch), w.t().expand(4, 3, 5))


# ---- vmap ------------------------------------------------------------------------------------------

def test_vmap_over_any_batch_dim_and_nested(device):
    x = torch.randn(3, 4, 5, 6, device=device)
    for in_dim in range(4):
        got = torch.vmap(lambda t: ops.transpose(t, 0, -1), in_dims=in_dim)(x)
        assert torch.equal(got, x.movedim(in_dim, 0).transpose(1, -1))
        got = torch.vmap(lambda t: tt.permute(t, [2, 0, 1]), in_dims=in_dim)(x)
        assert torch.equal(got, x.movedim(in_dim, 0).permute(0, 3, 1, 2))
    nested = torch.vmap(torch.vmap(lambda t: tt.transpose(t)))(x)
    assert torch.equal(nested, x.transpose(-2, -1))
    images = torch.randn(2, 3, 4, 5, 6, device=device)
    converted = torch.vmap(lambda t: ops.to_memory_format(t, torch.channels_last))(images)
    assert torch.equal(converted, images)
    assert converted[0].is_contiguous(memory_format=torch.channels_last)


# ---- torch.compile ---------------------------------------------------------------------------------

class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj_in = nn.Linear(width, width)
        self.proj_out = nn.Linear(width, width)

    def forward(self, x):  # x: (batch, seq, width)
        h = torch.relu(self.proj_in(x))
        h = tt.transpose(h, 1, 2)  # (batch, width, seq)
        h = h * torch.sigmoid(h.mean(-1, keepdim=True))
        h = tt.permute(h, [0, 2, 1])  # back to (batch, seq, width)
        return self.proj_out(h)


def test_compile_fullgraph_has_no_graph_breaks(device):
    torch._dynamo.reset()
    model = Block(16).to(device)
    x = torch.randn(2, 7, 16, device=device)
    explanation = torch._dynamo.explain(model)(x)
    assert explanation.graph_break_count == 0
    compiled = torch.compile(model, fullgraph=True)
    torch.testing.assert_close(compiled(x), model(x))


def test_compile_dynamic_shapes_do_not_recompile(device):
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    fn = torch.compile(lambda t: tt.transpose(t) + 1, backend=counter, dynamic=True, fullgraph=True)
    for rows, cols in [(3, 5), (8, 13), (33, 2), (64, 65)]:
        x = torch.randn(rows, cols, device=device)
        assert torch.equal(fn(x), x.t() + 1)
    assert counter.frame_count == 1

    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    fn = torch.compile(lambda t: tt.permute(t, [1, 0, 2]) * 2, backend=counter, fullgraph=True)
    for n in (4, 9, 17):
        x = torch.randn(n, 3, 5, device=device)
        torch._dynamo.mark_dynamic(x, 0)
        assert torch.equal(fn(x), x.permute(1, 0, 2) * 2)
    assert counter.frame_count == 1


def test_compile_with_inductor_and_out_variant(device):
    torch._dynamo.reset()

    def f(x):
        out = torch.empty(x.shape[1], x.shape[0], device=x.device)
        tt.transpose(x, out=out)
        return out * 3

    x = torch.randn(9, 14, device=device)
    assert torch.equal(torch.compile(f, fullgraph=True)(x), x.t() * 3)


def test_compiled_training_step_matches_eager(device):
    torch._dynamo.reset()
    torch.manual_seed(0)
    eager = Block(8).to(device)
    compiled_model = Block(8).to(device)
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model, fullgraph=True)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_c = torch.optim.SGD(compiled_model.parameters(), lr=0.1)
    for _ in range(3):
        x = torch.randn(4, 5, 8, device=device)
        for model, opt in ((eager, opt_e), (compiled, opt_c)):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
    for pe, pc in zip(eager.parameters(), compiled_model.parameters()):
        torch.testing.assert_close(pe, pc)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_graphs_reduce_overhead_on_a_side_stream():
    torch._dynamo.reset()
    fn = torch.compile(lambda t: tt.transpose(t * 2) + 1, mode="reduce-overhead", fullgraph=True)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(4):  # warm-up, record, then replays
            x = torch.randn(257, 129, device="cuda")
            y = fn(x)
            assert torch.equal(y, (x * 2).t() + 1)
    stream.synchronize()


# ---- export, TorchScript, AOTInductor ----------------------------------------------------------------

class Exportable(nn.Module):
    def forward(self, x):
        return tt.permute(tt.transpose(x, 0, 1) * 2, [2, 0, 1])


def test_export_round_trip(device, tmp_path):
    x = torch.randn(3, 4, 5, device=device)
    program = torch.export.export(Exportable(), (x,))
    graph_text = str(program.graph)
    assert "torch_transpose.transpose.default" in graph_text and "torch_transpose.permute.default" in graph_text
    torch.export.save(program, tmp_path / "model.pt2")
    loaded = torch.export.load(tmp_path / "model.pt2")
    expected = (x.transpose(0, 1) * 2).permute(2, 0, 1)
    assert torch.equal(program.module()(x), expected)
    assert torch.equal(loaded.module()(x), expected)


@uses_torchscript
def test_torchscript(device):
    @torch.jit.script
    def scripted(x: torch.Tensor) -> torch.Tensor:
        return torch.ops.torch_transpose.transpose(x, 0, 1) + torch.ops.torch_transpose.permute(x, [1, 0])

    x = torch.randn(6, 3, device=device)
    assert torch.equal(scripted(x), x.t() + x.t())


def test_aoti_package_runs(device, tmp_path):
    x = torch.randn(3, 4, 5, device=device)
    program = torch.export.export(Exportable(), (x,))
    path = torch._inductor.aoti_compile_and_package(program, package_path=str(tmp_path / "model.pt2"))
    runner = torch._inductor.aoti_load_package(path)
    assert torch.equal(runner(x), (x.transpose(0, 1) * 2).permute(2, 0, 1))


@pytest.mark.parametrize("out_bdim", [0, 2])
def test_vmap_of_the_out_variants_fills_each_items_out(out_bdim):
    # vmap over permute_out / transpose_out: each batch item's result lands in its slice of out.
    ops = torch.ops.torch_transpose
    x = torch.randn(5, 3, 4, 6)
    for op, expected in [(lambda a, o: ops.permute_out(a, [2, 1, 0], o), x.permute(0, 3, 2, 1)),
                         (lambda a, o: ops.transpose_out(a, 1, 2, o), x.transpose(2, 3))]:
        out = torch.full(expected.movedim(0, out_bdim).shape, float("nan"))
        torch.vmap(lambda a, o: (op(a, o), o)[1], in_dims=(0, out_bdim))(x, out)
        assert torch.equal(out.movedim(out_bdim, 0), expected)
