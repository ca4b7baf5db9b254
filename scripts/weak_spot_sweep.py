"""Where the library is weakest outside the suites: times many layouts (transposes and permutes of
every element size, odd, narrow and medium-narrow shapes) by GPU time against a copy of the same
bytes, names the kernel that served each, and prints them weakest first. For choosing what to work
on next; the A/B of a change is bench.ab_gpu_time's job.

    python3 scripts/weak_spot_sweep.py                       # the built-in list below
    python3 scripts/weak_spot_sweep.py --shapes "int8 8191x8193,fp32 32x112x112x10:0,3,1,2"
    python3 scripts/weak_spot_sweep.py --compile             # torch.compile's ratio beside ours

Shapes are written as bench.ab_gpu_time's --shapes. Every output is checked bit for bit against
eager's before it is timed (bench.ab_gpu_time.measure).
"""
import argparse
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, __file__.rsplit("/scripts/", 1)[0])
from bench import ab_gpu_time, cases, impls  # noqa: E402
from kernels_of_cases import short_name  # noqa: E402

# One line per family; each layout moves 30-270 MB, so DRAM, not launch latency, sets the pace.
DEFAULT_SHAPES = ",".join([
    # odd matrices: rows off the 16-byte grid on one side or both
    "int8 8191x8193", "fp16 8191x8193", "fp32 8191x8193", "fp64 8191x8193",
    "int8 3000x5000", "fp16 3001x5000", "bf16 1025x8193", "fp16 2049x2051",
    # narrow: a side of 3-16 elements
    "int8 16777216x5", "int8 5x16777216", "fp16 8388608x5", "fp16 5x8388608",
    "fp32 4194304x5", "fp32 5x4194304", "int8 16777216x16", "int8 16x16777216",
    "fp16 8388608x12", "bf16 12x8388608", "int8 33554432x3", "int8 3x33554432",
    "fp64 2097152x6", "fp64 6x2097152", "int8 8000000x7", "int8 7x8000000",
    # medium-narrow: 48-100 elements
    "fp32 1048576x48", "fp32 48x1048576", "bf16 1048576x96", "bf16 96x1048576",
    "int8 1048576x100", "int8 100x1048576", "fp16 65536x1000", "fp16 1000x65536",
    # batched and permuted
    "fp32 32x112x112x10:0,3,1,2", "fp32 32x10x112x112:0,2,3,1", "int8 64x224x224x5:0,3,1,2",
    "bf16 32x112x112x6:0,3,1,2", "fp32 63x64x64x256:3,2,1,0", "bf16 1000x100x100",
    "bf16 64x12x197x197", "int8 4096x96x96", "fp32 100000x7x9", "fp16 128x3x224x224:0,2,3,1",
    # seen in session 56 (bench/NOTES.md v59): box tiles on a = 60 bf16; 1-byte square edge tiles
    "bf16 20x30x40x50x60:4,2,0,3,1", "int8 48x64x64x512:3,2,1,0",
])


def kernels_of(case):
    x = case.make_input("cuda")
    fn = impls.ours(case, x)
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = {short_name(e.name) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    return ", ".join(sorted(n.split("<")[0] for n in names)) or "(none)"


def compiled_ratio(case, calls):
    x = case.make_input("cuda")
    fn = impls.compiled(case, x)
    return ab_gpu_time.seconds_per_call(impls.copy(case, x), "cuda", calls) / \
        ab_gpu_time.seconds_per_call(fn, "cuda", calls)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=DEFAULT_SHAPES)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--compile", action="store_true", help="also torch.compile's copy time / its time")
    p.add_argument("--out", default=None, help="also write the table to this Markdown file")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA device")
    rows = []
    for case in ab_gpu_time.shape_cases(args.shapes):
        record = ab_gpu_time.measure(case, "cuda", args.calls)
        ratio = record["copy_s"] / record["ours_s"]
        mb = 2 * torch.Size(case.shape).numel() * cases.DTYPES[case.dtype].itemsize / 1e6
        row = [case.name.removesuffix(" (shape)"), f"{mb:.0f}", f"{ratio:.3f}", kernels_of(case)]
        if args.compile:
            row.insert(3, f"{compiled_ratio(case, args.calls):.3f}")
        rows.append((ratio, row))
        print(" | ".join(row), flush=True)
        torch.cuda.empty_cache()
    header = ["case", "MB", "ours/copy"] + (["compile/copy"] if args.compile else []) + ["kernel"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for _, row in sorted(rows, key=lambda r: r[0])]
    ab_gpu_time.print_table("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
