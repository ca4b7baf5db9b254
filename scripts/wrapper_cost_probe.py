"""Probe (not the library): what the public Python wrapper adds to a call's host time, against its
C fast entry alone (bench/NOTES.md v39, "What is left": a C builtin as the public function).

Times, per call, in one process: `torch_transpose.permute` (the wrapper: a Python frame and
torch.compiler.is_compiling()), the same wrapper's body without the is_compiling test,
`_C.permute_fast` alone, and `dst.copy_(src)`, for the bf16 C = 3 layouts on CUDA with the GPU
held by a sleep kernel (so launches only queue: host time; 200 calls a batch stay well inside
the sleep), and for a tiny CPU tensor (5000 calls a batch). Best of 7 batches.

    python3 scripts/wrapper_cost_probe.py      # on the GPU machine (CPU-only rows elsewhere)
"""
import time

import torch

import torch_transpose as tt
from bench.host_overhead import hold_gpu
from torch_transpose import _C

CUDA_CALLS, CPU_CALLS, BATCHES = 200, 5000, 7


def body_without_is_compiling(x, dims, out=None):
    result = _C.permute_fast(x, dims) if out is None else _C.permute_out_fast(x, dims, out)
    return result if result is not NotImplemented else tt.permute(x, dims, out=out)


def host_us(fn, cuda):
    best, calls = float("inf"), CUDA_CALLS if cuda else CPU_CALLS
    for _ in range(BATCHES):
        if cuda:
            hold_gpu()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
        if cuda:
            torch.cuda.synchronize()
    return best


def rows(label, x, dims, cuda):
    dst = torch.empty_like(x)
    fns = {
        "tt.permute": lambda: tt.permute(x, dims),
        "wrapper body, no is_compiling": lambda: body_without_is_compiling(x, dims),
        "_C.permute_fast": lambda: _C.permute_fast(x, dims),
        "torch.compiler.is_compiling()": torch.compiler.is_compiling,
        "dst.copy_(x)": lambda: dst.copy_(x),
    }
    for fn in fns.values():
        fn()
    for rnd in range(2):
        for name, fn in fns.items():
            print(f"| {label} | {name} | round {rnd + 1} | {host_us(fn, cuda):.2f} |")


def main():
    print("| case | call | round | host us per call |\n|---|---|---|---|")
    rows("cpu fp32 2x3x4x5 (0,2,3,1)", torch.randn(2, 3, 4, 5), (0, 2, 3, 1), cuda=False)
    if torch.cuda.is_available():
        for shape, dims in [((32, 224, 224, 3), (0, 3, 1, 2)), ((32, 3, 224, 224), (0, 2, 3, 1))]:
            x = torch.randn(shape, device="cuda").to(torch.bfloat16)
            rows(f"cuda bf16 {'x'.join(map(str, shape))} {dims}", x, dims, cuda=True)


if __name__ == "__main__":
    main()
