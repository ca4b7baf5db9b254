"""GPU time of every block shape of the harness's Triton reference (bench/triton_ref.py) on one
suite case, against ours and a copy of the same bytes: which config the autotuner can pick, and
whether one beats us. Each is timed as `calls` back-to-back launches between CUDA events, best of
3, in `rounds` rounds; the table gives copy's time / each one's.

    python3 scripts/triton_config_probe.py "bf16 Llama-2 MLP weight 11008x4096" [rounds] [calls]
"""
import sys

import torch

sys.path.insert(0, __file__.rsplit("/scripts/", 1)[0])
from bench import cases as case_defs  # noqa: E402
from bench import impls as impl_defs  # noqa: E402
from bench import triton_ref  # noqa: E402


def gpu_seconds(fn, calls):
    best = float("inf")
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / calls)
    return best


def config_call(x, config):
    """triton_ref.transpose_last_two(x) with one config instead of the autotuner's choice."""
    xi = x.view(triton_ref._INT_OF_WIDTH[x.element_size()]).unsqueeze(0)
    B, M, N = xi.shape
    bm, bn = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]

    def run():
        out = torch.empty((B, N, M), dtype=xi.dtype, device=xi.device)
        grid = (B * ((M + bm - 1) // bm) * ((N + bn - 1) // bn),)
        triton_ref._tiled_transpose.fn[grid](xi, out, M, N, B, xi.element_size(), *xi.stride(), *out.stride(),
                                             BLOCK_M=bm, BLOCK_N=bn, num_warps=config.num_warps)
        return out
    return run


def main(name, rounds=2, calls=50):
    every = case_defs.suite("cuda") + case_defs.suite("cuda", "models")
    case = next(c for c in every if c.name == name)
    x = case.make_input("cuda")
    expected = impl_defs.IMPLS["eager"](case, x)()
    runs = {"copy": impl_defs.IMPLS["copy"](case, x), "ours": impl_defs.IMPLS["torch_transpose"](case, x)}
    for cfg in triton_ref._CONFIGS:
        runs[f"triton {cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']} w{cfg.num_warps}"] = config_call(x, cfg)
    for label, fn in runs.items():
        if label != "copy":
            got = fn()
            assert torch.equal(got.reshape(expected.shape).view(torch.uint8), expected.view(torch.uint8)), label
    table = {label: [] for label in runs}
    for _ in range(rounds):
        times = {label: gpu_seconds(fn, calls) for label, fn in runs.items()}
        for label in runs:
            table[label].append(times["copy"] / times[label])
    print(f"{name}: copy's GPU time / each, {rounds} rounds of {calls} calls, best of 3")
    for label, ratios in table.items():
        print(f"  {label:24s} " + " / ".join(f"{r:.3f}" for r in ratios))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
