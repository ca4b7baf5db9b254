"""Runs one implementation on one case of either suite (default or models) a few times, for a
profiler to attach to (ncu, nsys).

    ncu --clock-control none --profile-from-start off -k regex:narrow --launch-count 1 \\
        python3 -m bench.profile_case "fp32 4194304x16" [calls] [impl]

The case is a suite case's name (default or models suite; a unique part of one will do) or a
shape as bench.ab_gpu_time's --shapes spells it ("fp16 8191x8193": the transpose of its last two
dims).

impl is one of bench.impls.IMPLS (default torch_transpose); triton is the reference kernel.
Two warm-up calls (Triton's autotuning, our first-call set-up) run before cudaProfilerStart, so
with --profile-from-start off the profiler sees only the timed calls.
"""
import sys

import torch

from . import cases as case_defs
from . import impls as impl_defs


def main(argv):
    name = argv[0] if argv else "fp32 8192x8192"
    every = case_defs.suite("cuda") + case_defs.suite("cuda", "models")
    matches = [c for c in every if c.name == name] or [c for c in every if name in c.name]
    if not matches:
        # A shape outside the suites, as bench.ab_gpu_time's --shapes spells it ("fp16 8191x8193").
        from .ab_gpu_time import shape_cases
        try:
            matches = shape_cases(name.removesuffix(" (shape)"))
        except ValueError:
            raise SystemExit(f"no suite case named {name!r}, nor a shape like 'fp16 8191x8193'") from None
    case = matches[0]
    impl = argv[2] if len(argv) > 2 else "torch_transpose"
    x = case.make_input("cuda")
    fn = impl_defs.IMPLS[impl](case, x)
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(int(argv[1]) if len(argv) > 1 else 4):
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"ran {case.name} with {impl}")


if __name__ == "__main__":
    main(sys.argv[1:])
