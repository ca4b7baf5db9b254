"""Probe (not the library, not the suite): where the host time of one CUDA call goes, for the
C = 3 layouts that the benchmark measures host-bound (bench/NOTES.md v31: ours 8-11 us of host
time per call, copy_ 6-9).

Two views, each with the GPU held by a sleep kernel so that calls only queue their work:
  * host microseconds per call of ours and of pieces of what a call does (an allocation of the
    output, the op with a preallocated out=, the op through torch.ops, a copy_ of the same bytes);
  * torch.profiler's CPU table for 200 calls of ours and of copy_: time inside aten::empty,
    cudaLaunchKernel and the rest of the op.

    python3 scripts/host_breakdown_probe.py ["bf16 NCHW->NHWC 32x3x224x224"]   # on the GPU machine
"""
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, ".")
from bench import cases as case_defs  # noqa: E402
from bench.host_overhead import hold_gpu, host_us as host_us_once  # noqa: E402

CALLS = 200


def host_us(fn):
    """Best and median of 5 runs of bench.host_overhead's queueing-only measurement."""
    runs = [host_us_once(fn, CALLS) for _ in range(5)]
    return min(runs), statistics.median(runs)


def main(argv):
    import torch_transpose as tt

    name = argv[0] if argv else "bf16 NCHW->NHWC 32x3x224x224"
    case = next(c for c in case_defs.suite("cuda") if c.name == name)
    x = case.make_input("cuda")
    dims = list(case.op[1])
    expect = x.permute(dims).contiguous()
    out = torch.empty_like(expect)
    src = x.reshape(-1).clone()
    dst = torch.empty_like(src)
    sizes = tuple(expect.shape)
    ops = torch.ops.torch_transpose
    from torch_transpose import _C

    routes = {
        "ours: tt.permute(x, dims)": lambda: tt.permute(x, dims),
        "ours: _C.permute_fast(x, dims)": lambda: _C.permute_fast(x, dims),
        "ours with out=: tt.permute(x, dims, out=out)": lambda: tt.permute(x, dims, out=out),
        "ours via torch.ops (boxed)": lambda: ops.permute.default(x, dims),
        "torch.empty(result's shape)": lambda: torch.empty(sizes, dtype=x.dtype, device="cuda"),
        "copy_ of the same bytes": lambda: dst.copy_(src),
        "x.permute(dims) (a view, no kernel)": lambda: x.permute(dims),
    }
    for fn in routes.values():
        fn()
    print(f"{name}: host us per call (best / median of 5 x {CALLS} calls, GPU held)")
    for label, fn in routes.items():
        best, median = host_us(fn)
        print(f"  {label:48s} {best:6.2f} / {median:6.2f}")

    for label, fn in (("ours", routes["ours: tt.permute(x, dims)"]), ("copy_", routes["copy_ of the same bytes"])):
        hold_gpu()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                fn()
        torch.cuda.synchronize()
        print(f"\nprofiler, {CALLS} calls of {label} (times include the profiler's own cost):")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))


if __name__ == "__main__":
    main(sys.argv[1:])
