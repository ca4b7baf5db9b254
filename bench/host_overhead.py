"""Where the time of one call goes, per route: host time (what Python and the op's C++ spend to
queue the work), GPU time, and wall time as the benchmark measures it (back to back calls,
synchronised). When host time exceeds GPU time the benchmark measures the host.

Routes: our wrapper (unboxed entry points, torch_transpose/_functions.py), the same into a
preallocated out=, the op through torch.ops (boxed), eager PyTorch, and the copy anchor.

    python -m bench.host_overhead [--cases "fp32 64x64,fp32 NCHW->NHWC 32x3x224x224"] [--calls 200]
                                  [--routes "ours (unboxed),copy"]

On CUDA, host time is taken with the GPU held by a sleep kernel, so every call only queues its
work; GPU time from CUDA events around each call queued the same way. On the CPU the three
coincide, and only wall time is printed.
"""
import argparse
import statistics
import time

import torch

from . import cases as case_defs
from . import impls as impl_defs

ops = torch.ops.torch_transpose
DEFAULT_CASES = "fp32 64x64,fp32 batched 8x64x64,fp32 NCHW->NHWC 32x3x224x224,bf16 NCHW->NHWC 32x3x224x224"


def boxed(case, x):
    if case.op[0] == "transpose":
        _, d0, d1 = case.op
        return lambda: ops.transpose.default(x, d0, d1)
    dims = list(case.op[1])
    return lambda: ops.permute.default(x, dims)


def ours_out(case, x):
    """Our op into a preallocated output (out=): the call without an allocation."""
    import torch_transpose as tt

    out = impl_defs.eager(case, x)()
    if case.op[0] == "transpose":
        _, d0, d1 = case.op
        return lambda: tt.transpose(x, d0, d1, out=out)
    dims = list(case.op[1])
    return lambda: tt.permute(x, dims, out=out)


ROUTES = {
    "ours (unboxed)": impl_defs.ours,
    "ours out=": ours_out,
    "ours via torch.ops": boxed,
    "eager": impl_defs.eager,
    "copy": impl_defs.copy,
}


def hold_gpu():
    torch.cuda.synchronize()
    torch.cuda._sleep(200_000_000)  # ~0.1 s: longer than queueing the calls below takes


def host_us(fn, calls):
    hold_gpu()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def gpu_us(fn, calls, flush=None):
    """Median GPU time of fn over `calls` calls queued behind a sleep kernel (the GPU never waits
    for the host); `flush` runs before each call, untimed (scripts/l2_probe.py evicts the L2)."""
    hold_gpu()
    pairs = []
    for _ in range(calls):
        if flush is not None:
            flush()
        pair = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        pair[0].record()
        fn()
        pair[1].record()
        pairs.append(pair)
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in pairs) * 1e3


def wall_us(fn, calls, device):
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - start) / calls * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated suite case names")
    parser.add_argument("--calls", type=int, default=200, help="calls per measurement (best of 5)")
    parser.add_argument("--routes", default=",".join(ROUTES), help="comma-separated routes to time")
    args = parser.parse_args()
    routes = {name: ROUTES[name] for name in args.routes.split(",")}
    # Either suite's cases, on either device (the small cases are in the CUDA suite only).
    suite = {c.name: c for device in ("cpu", "cuda") for c in case_defs.suite(device)}
    print(f"microseconds per call on {args.device}, best of 5 runs of {args.calls} calls "
          "(cuda: host = queueing only, gpu = median of CUDA events, wall = synchronised loop)")
    for name in args.cases.split(","):
        case = suite[name]
        x = case.make_input(args.device)
        print(f"{case.name}:")
        for route, make in routes.items():
            fn = make(case, x)
            for _ in range(20):
                fn()
            best = lambda measure: min(measure() for _ in range(5))  # noqa: E731
            wall = best(lambda: wall_us(fn, args.calls, args.device))
            if args.device == "cuda":
                host, gpu = best(lambda: host_us(fn, args.calls)), best(lambda: gpu_us(fn, args.calls))
                print(f"  {route:20s} host {host:7.2f}  gpu {gpu:7.2f}  wall {wall:7.2f}")
            else:
                print(f"  {route:20s} wall {wall:7.2f}")
        del x


if __name__ == "__main__":
    main()
