"""The opt-in torch.compile pass (torch_transpose/inductor_pass.py): which layout copies it
rewrites into our ops, bit-exact results, forward and backward graphs, the FX graph cache, a
user's own pass, dynamic shapes, and disable()."""
import pytest
import torch
from torch._inductor import config
from torch._inductor.utils import run_and_get_code

import torch_transpose as tt
from helpers import assert_bits_equal, random_bits

inductor_pass = tt.inductor_pass


@pytest.fixture(autouse=True)
def fresh_compiles():
    # A cache of its own for each test: a graph found in an earlier run's cache would skip the
    # post-grad passes this file watches.
    from torch._inductor.utils import fresh_cache
    before = config.post_grad_custom_post_pass
    torch._dynamo.reset()
    with fresh_cache():
        yield
    config.post_grad_custom_post_pass = before
    torch._dynamo.reset()


def compiled_with_pass(fn, device, *args, **compile_args):
    """fn's results and generated code, compiled with the pass on for `device`."""
    with inductor_pass.enabled(devices=(device,)):
        results, code = run_and_get_code(torch.compile(fn, **compile_args), *args)
    return results, "\n".join(code)


def calls_of(code, op):
    return code.count(f"torch.ops.torch_transpose.{op}.default(")


def head_split(x):  # (B, S, H*D) -> (B, H, S, D): a copy whose result is an output
    b, s, _ = x.shape
    return x.view(b, s, 4, -1).transpose(1, 2).contiguous()


def test_a_copy_into_an_output_becomes_our_permute(device):
    x = random_bits((3, 33, 4 * 7), torch.bfloat16, device)
    (result,), code = compiled_with_pass(lambda t: (head_split(t),), device, x)
    assert calls_of(code, "permute") == 1, code
    assert_bits_equal(result, head_split(x))


def test_every_spelling_of_a_transposed_copy_is_rewritten(device):
    x = random_bits((5, 6, 7), torch.float32, device)

    def spellings(t):
        return (t.transpose(0, 2).contiguous(), t.mT.contiguous(), t.movedim(0, -1).contiguous(),
                t.permute(1, 2, 0).contiguous(), t[0].t().contiguous())

    results, code = compiled_with_pass(spellings, device, x)
    assert calls_of(code, "permute") == 5, code
    for got, want in zip(results, spellings(x)):
        assert_bits_equal(got, want)


def test_channels_last_copies_become_to_memory_format(device):
    x, v = random_bits((2, 3, 5, 7), torch.float16, device), random_bits((2, 3, 4, 5, 6), torch.int8, device)

    def convert(a, b):
        return a.contiguous(memory_format=torch.channels_last), b.contiguous(memory_format=torch.channels_last_3d)

    results, code = compiled_with_pass(convert, device, x, v)
    assert calls_of(code, "to_memory_format") == 2, code
    for got, want in zip(results, convert(x, v)):
        assert_bits_equal(got, want)
        assert got.stride() == want.stride()


def test_copies_that_inductor_fuses_with_pointwise_work_are_left_alone(device):
    w = random_bits((9, 12), torch.float32, device)

    def fused(t):
        # each is one Inductor kernel today: a pointwise op after, or before, the copy
        return t.t().contiguous() * 2, (t + 1).t().contiguous()

    results, code = compiled_with_pass(fused, device, w)
    assert "torch_transpose" not in code, code
    for got, want in zip(results, fused(w)):
        assert_bits_equal(got, want)


def test_a_copy_feeding_a_matmul_is_rewritten_and_a_plain_clone_is_not(device):
    x, w = random_bits((8, 6), torch.float32, device), random_bits((8, 5), torch.float32, device)

    def f(a, b):
        return torch.mm(a.t().contiguous(), b), a.t().clone()  # clone() keeps the permuted strides

    results, code = compiled_with_pass(f, device, x, w)
    assert calls_of(code, "permute") == 1, code
    expected = f(x, w)
    assert_bits_equal(results[0], expected[0])
    assert_bits_equal(results[1], expected[1])
    assert results[1].stride() == expected[1].stride()


def test_devices_not_named_are_left_alone():
    x = torch.randn(6, 4)
    (result,), code = compiled_with_pass(lambda t: (t.t().contiguous(),), "cuda", x)  # the pass for CUDA only
    assert "torch_transpose" not in code
    assert_bits_equal(result, x.t().contiguous())


def test_the_backward_graph_is_rewritten_too(device):
    # Heads merged before a matmul: the forward copies (B, H, S, D) -> (B, S, H*D); the backward
    # views the matmul's gradient back to x's shape, which needs the inverse layout copy, between
    # an extern kernel and a graph output.
    b, h, s, d = 2, 3, 5, 4
    x = random_bits((b, h * s, d), torch.float32, device).requires_grad_()
    w = random_bits((h * d, 7), torch.float32, device)
    grad = random_bits((b * s, 7), torch.float32, device)

    def merge_heads_then_project(a):
        return torch.mm(a.view(b, h, s, d).transpose(1, 2).reshape(b * s, h * d), w)

    with inductor_pass.enabled(devices=(device,)):
        compiled = torch.compile(merge_heads_then_project)
        _, (forward_code, backward_code) = run_and_get_code(lambda: compiled(x).backward(grad))
    assert calls_of(forward_code, "permute") == 1, forward_code
    assert calls_of(backward_code, "permute") == 1, backward_code
    expected = torch.autograd.grad(merge_heads_then_project(x), x, grad)[0]
    assert_bits_equal(x.grad, expected)


def test_dynamic_shapes_compile_once(device):
    from torch._dynamo.testing import CompileCounterWithBackend
    counter = CompileCounterWithBackend("inductor")
    with inductor_pass.enabled(devices=(device,)):
        compiled = torch.compile(head_split, backend=counter, dynamic=True)
        for batch, seq in ((2, 17), (3, 40), (5, 9)):
            x = random_bits((batch, seq, 4 * 8), torch.float32, device)
            assert_bits_equal(compiled(x), head_split(x))
    assert counter.frame_count == 1


def test_a_second_compile_hits_the_fx_graph_cache(device):
    from torch._dynamo.utils import counters
    from torch._inductor.utils import fresh_cache
    x = random_bits((3, 33, 4 * 7), torch.float32, device)
    with fresh_cache(), config.patch(fx_graph_cache=True), inductor_pass.enabled(devices=(device,)):
        counters.clear()
        first = torch.compile(head_split)(x)
        assert counters["inductor"]["fxgraph_cache_miss"] == 1
        torch._dynamo.reset()
        second = torch.compile(head_split)(x)
        assert counters["inductor"]["fxgraph_cache_hit"] == 1
    assert_bits_equal(first, second)


def test_a_users_own_post_grad_pass_still_runs(device):
    from torch._inductor.custom_graph_pass import CustomGraphPass
    seen = []

    class Users(CustomGraphPass):
        def __call__(self, graph):
            seen.append(sum(1 for n in graph.nodes if n.target is torch.ops.aten.clone.default))

        def uuid(self):
            return "users-pass"

    config.post_grad_custom_post_pass = users = Users()
    x = random_bits((3, 33, 4 * 7), torch.float32, device)
    _, code = compiled_with_pass(head_split, device, x)
    assert seen == [1], seen  # it ran, and before the rewrite
    assert calls_of(code, "permute") == 1
    assert config.post_grad_custom_post_pass is users  # enabled() put it back


def test_enable_disable_and_reenable_keep_the_previous_pass():
    def users(graph):
        pass

    config.post_grad_custom_post_pass = users
    inductor_pass.enable(devices=("cpu",))
    assert inductor_pass.is_enabled() and config.post_grad_custom_post_pass.previous is users
    inductor_pass.enable(devices=("cuda",))  # again: replaces ours, keeps the user's
    assert config.post_grad_custom_post_pass.previous is users
    assert config.post_grad_custom_post_pass.devices == ("cuda",)
    inductor_pass.disable()
    assert config.post_grad_custom_post_pass is users
    inductor_pass.disable()  # nothing of ours left: a no-op
    assert config.post_grad_custom_post_pass is users


def test_the_pass_without_a_cacheable_previous_pass_opts_out_of_caching():
    assert inductor_pass.LayoutCopyPass(("cpu",), previous=lambda graph: None).uuid() is None
    assert inductor_pass.LayoutCopyPass(("cpu",)).uuid() is not None


def test_the_compiled_suite_counts_the_copies_it_rewrote():
    from bench import compiled_blocks
    x = torch.randint(0, 256, (2, 9, 7, 3), dtype=torch.uint8)
    _, results, rewritten = compiled_blocks._compiled(compiled_blocks.images_hwc_to_chw, (x,), True, "cpu")
    assert rewritten == 1
    assert compiled_blocks._same_bits(results, compiled_blocks.images_hwc_to_chw(x))
    _, _, rewritten = compiled_blocks._compiled(compiled_blocks.images_hwc_to_chw, (x,), False, "cpu")
    assert rewritten == 0
