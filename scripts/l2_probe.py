"""Why does a small case swing between processes? (GPU machine, diagnostic only.)

The C = 3 layouts (19-39 MB read + written) ran 0.53-0.60 of copy in some bench processes and
0.71-0.82 in others, with the same kernel. Two suspects:
  * the host: at ~5-10 us of GPU time per call, the bench's wall-clock timing (torch.utils.
    benchmark) may measure the Python call instead of the kernel;
  * the L2: H200's 50 MB L2 can hold much of a case this small in a hot loop, and how much may
    depend on where its buffers land.
For several fresh allocations this prints our op's and the copy anchor's bandwidth three ways:
wall (back to back calls, synchronised, as the bench does), gpu (the same calls queued behind a
sleep kernel, so the GPU never waits for the host; CUDA events per call) and cold (gpu, with a
512 MB write between calls to evict the L2).

    python3 scripts/l2_probe.py ["fp32 NCHW->NHWC 32x3x224x224"] [rounds]
"""
import sys
import time

import torch

sys.path.insert(0, ".")
from bench import cases as case_defs  # noqa: E402
from bench import host_overhead  # noqa: E402
from bench import impls as impl_defs  # noqa: E402

REPS = 200


def wall_ms(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(REPS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3 / REPS


def gpu_ms(fn, flush=None):
    return host_overhead.gpu_us(fn, REPS, flush) / 1e3


def main(argv):
    name = argv[0] if argv else "fp32 NCHW->NHWC 32x3x224x224"
    rounds = int(argv[1]) if len(argv) > 1 else 5
    case = next(c for c in case_defs.suite("cuda") if name in c.name)
    scratch = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    flush = lambda: scratch.fill_(1)  # noqa: E731
    for r in range(rounds):
        x = case.make_input("cuda")
        moved = 2 * x.numel() * x.element_size()  # bytes read + written
        if r == 0:
            print(f"{case.name}: {moved / 1e6:.0f} MB read + written")
        ours = impl_defs.IMPLS["torch_transpose"](case, x)
        copy = impl_defs.IMPLS["copy"](case, x)
        for fn in (ours, copy):
            fn()
        torch.cuda.synchronize()
        row = []
        for label, timer in (("wall", wall_ms), ("gpu", gpu_ms), ("cold", lambda fn: gpu_ms(fn, flush))):
            t_ours, t_copy = timer(ours), timer(copy)
            row.append(f"{label}: ours {moved / t_ours / 1e6:5.0f} GB/s copy {moved / t_copy / 1e6:5.0f} "
                       f"ratio {t_copy / t_ours:.3f}")
        print(f"round {r}: x at {x.data_ptr() % (1 << 30):#x} | " + " | ".join(row))
        del x, ours, copy


if __name__ == "__main__":
    main(sys.argv[1:])
