"""The compiled-models suite (`python -m bench --suite compiled`): model blocks compiled by
torch.compile without and with the layout-copy pass (torch_transpose/inductor_pass.py), timed in
the same run, with the count of copies the pass rewrote and whether the results are bit-exact.

Each block is a function of tensors made by its `inputs(device)`; sizes are smaller on the CPU.
"""
import contextlib
import json
import math

import torch
import torch.nn.functional as F
from torch._inductor.utils import run_and_get_code

from .timing import median_seconds


def _same_bits(a, b):
    """Whether two results (a tensor or a tuple of them) hold the same shapes and bytes."""
    from .run import check_bits
    a, b = (a,) if isinstance(a, torch.Tensor) else tuple(a), (b,) if isinstance(b, torch.Tensor) else tuple(b)
    try:
        for x, y in zip(a, b, strict=True):
            check_bits(x.detach(), y.detach(), "")
    except (AssertionError, ValueError):
        return False
    return True


def attention(x, wq, wk, wv, wo, heads):
    """Heads split before SDPA and merged after it, as most attention blocks write them."""
    b, s, e = x.shape
    def split(t):
        return t.view(b, s, heads, e // heads).transpose(1, 2).contiguous()
    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    o = F.scaled_dot_product_attention(q, k, v)
    return o.transpose(1, 2).contiguous().view(b, s, e) @ wo


def channels_last_convs(x, w1, w2):
    """An NCHW batch converted to channels_last in front of a conv stack."""
    x = x.contiguous(memory_format=torch.channels_last)
    return F.conv2d(F.relu(F.conv2d(x, w1, padding=1)), w2, padding=1)


def linear_backward(x, w, grad):
    """A linear layer whose weight is stored transposed (in, out), forward and backward."""
    w = w.detach().requires_grad_()
    y = torch.mm(x, w.t().contiguous().t())
    (dw,) = torch.autograd.grad(y, w, grad)
    return y, dw


def fp8_weight_matmul(a, w, scale):
    """An fp8 weight kept (K, N) and handed to the fp8 matmul column-major."""
    return torch._scaled_mm(a, w.t().contiguous().t(), scale, scale, out_dtype=torch.bfloat16)


def images_hwc_to_chw(x):
    """A uint8 image batch from a decoder (N, H, W, C) to the (N, C, H, W) a model takes."""
    return x.permute(0, 3, 1, 2).contiguous()


def spectrogram_transpose(z):
    """A complex spectrogram (B, F, T) to time-major (B, T, F)."""
    return z.transpose(1, 2).contiguous()


def _blocks(device):
    cuda = device == "cuda"
    scale = 1 if cuda else 4  # the CPU gets smaller blocks
    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=device, dtype=dtype)
    dtype = torch.bfloat16 if cuda else torch.float32
    blocks = [
        ("attention, heads split and merged around SDPA", attention,
         lambda: (randn(8, 2048 // scale, 1024, dtype=dtype), *(randn(1024, 1024, dtype=dtype) / 32 for _ in range(4)), 16)),
        ("conv stack fed NCHW, converted to channels_last", channels_last_convs,
         lambda: (randn(32 // scale, 64, 56, 56, dtype=dtype), randn(64, 64, 3, 3, dtype=dtype) / 24,
                  randn(64, 64, 3, 3, dtype=dtype) / 24)),
        ("linear backward, weight stored transposed", linear_backward,
         lambda: (randn(4096 // scale, 4096 // scale, dtype=dtype), randn(4096 // scale, 4096 // scale, dtype=dtype) / 64,
                  randn(4096 // scale, 4096 // scale, dtype=dtype))),
        ("uint8 images HWC -> CHW", images_hwc_to_chw,
         lambda: (torch.randint(0, 256, (64 // scale, 224, 224, 3), dtype=torch.uint8, device=device),)),
        ("complex spectrogram transpose", spectrogram_transpose,
         lambda: (torch.randn(64 // scale, 513, 1001, dtype=torch.complex64, device=device),)),
    ]
    if cuda and torch.cuda.get_device_capability() >= (8, 9):
        blocks.insert(3, ("fp8 weight transposed for a matmul", fp8_weight_matmul,
                          lambda: (randn(4096, 8192).to(torch.float8_e4m3fn), randn(8192, 4096).to(torch.float8_e4m3fn),
                                   torch.ones((), device=device))))
    return blocks


def _compiled(fn, args, with_pass, device):
    """fn compiled afresh (with or without the pass), its first results and the count of our ops
    in the code Inductor generated."""
    from torch_transpose import inductor_pass
    torch._dynamo.reset()
    compiled = torch.compile(fn)
    with inductor_pass.enabled(devices=(device,)) if with_pass else contextlib.nullcontext():
        results, code = run_and_get_code(compiled, *args)
    calls = ("torch.ops.torch_transpose.permute.default(", "torch.ops.torch_transpose.to_memory_format.default(")
    rewritten = sum(text.count(call) for text in code for call in calls)
    return compiled, results, rewritten


def run(device, min_run_time, out_dir, stem, meta):
    records, lines = [], []
    header = "| block | without the pass (ms) | with it (ms) | with / without | copies rewritten | bit-exact vs eager |"
    lines += [header, "|---|---|---|---|---|---|"]
    for name, fn, inputs in _blocks(device):
        args = inputs()
        eager = fn(*args)
        without, without_results, _ = _compiled(fn, args, False, device)
        t_without = median_seconds(lambda: without(*args), min_run_time)
        with_pass, with_results, rewritten = _compiled(fn, args, True, device)
        t_with = median_seconds(lambda: with_pass(*args), min_run_time)
        exact = _same_bits(with_results, eager)
        same_as_without = _same_bits(with_results, without_results)
        record = {"block": name, "device": device, "without_ms": t_without * 1e3, "with_ms": t_with * 1e3,
                  "ratio": t_with / t_without, "rewritten": rewritten, "bit_exact_vs_eager": exact,
                  "bit_exact_vs_without": same_as_without}
        records.append(record)
        lines.append(f"| {name} | {t_without * 1e3:.3f} | {t_with * 1e3:.3f} | {t_with / t_without:.3f} | {rewritten} | "
                     f"{'yes' if exact else 'no' + (' (same as without the pass)' if same_as_without else '')} |")
        print(lines[-1], flush=True)
    geo = math.exp(sum(math.log(r["ratio"]) for r in records) / len(records))
    lines.append(f"\ngeomean with / without: {geo:.3f}")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.json").write_text(json.dumps({"meta": {**meta, "complete": True}, "records": records}, indent=1))
    text = f"# Compiled blocks ({stem})\n\n" + "\n".join(f"- {k}: {v}" for k, v in meta.items()) + "\n\n" + "\n".join(lines)
    (out_dir / f"{stem}.md").write_text(text + "\n")
    print("\n".join(lines[-1:]))
    return records
