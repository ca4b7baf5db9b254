"""Host time of one call from Python, per route, on tensors small enough that the kernel is
negligible: our wrapper (unboxed entry point), the same op through torch.ops (boxed), and eager.

    python -m bench.host_overhead [--device cuda] [--calls 20000]

On CUDA the calls only queue kernels; the loop is timed to the last launch, then the queue is
drained outside the timing, so what is measured is the host's work per call.
"""
import argparse
import timeit

import torch

import torch_transpose as tt

ops = torch.ops.torch_transpose


def routes(x):
    nchw = x.reshape(1, 4, 32, 32)
    return {
        "tt.transpose (unboxed)": lambda: tt.transpose(x),
        "ops.transpose (boxed)": lambda: ops.transpose.default(x, -2, -1),
        "eager t().contiguous()": lambda: x.t().contiguous(),
        "tt.permute (unboxed)": lambda: tt.permute(nchw, (0, 2, 3, 1)),
        "ops.permute (boxed)": lambda: ops.permute.default(nchw, [0, 2, 3, 1]),
        "eager permute().contiguous()": lambda: nchw.permute(0, 2, 3, 1).contiguous(),
    }


def microseconds_per_call(fn, calls, device):
    for _ in range(200):
        fn()
    best = float("inf")
    for _ in range(5):
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, timeit.timeit(fn, number=calls) / calls)
    if device == "cuda":
        torch.cuda.synchronize()
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    x = torch.randn(64, 64, device=args.device)
    print(f"host time per call, 64x64 fp32 (and as 1x4x32x32 for permute) on {args.device} (best of 5 loops of {args.calls}):")
    for name, fn in routes(x).items():
        print(f"  {name:30s} {microseconds_per_call(fn, args.calls, args.device):6.2f} us")


if __name__ == "__main__":
    main()
