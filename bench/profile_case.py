"""Runs our op on one suite case a few times, for a profiler to attach to (ncu, nsys).

    ncu --clock-control none -k regex:flat_tile --launch-skip 2 --launch-count 1 \\
        python3 -m bench.profile_case "fp32 4194304x16"
"""
import sys

import torch

from . import cases as case_defs
from . import impls as impl_defs


def main(argv):
    name = argv[0] if argv else "fp32 8192x8192"
    matches = [c for c in case_defs.suite("cuda") if c.name == name] or [c for c in case_defs.suite("cuda") if name in c.name]
    if not matches:
        raise SystemExit(f"no suite case named {name!r}")
    case = matches[0]
    x = case.make_input("cuda")
    fn = impl_defs.IMPLS["torch_transpose"](case, x)
    for _ in range(int(argv[1]) if len(argv) > 1 else 4):
        fn()
    torch.cuda.synchronize()
    print(f"ran {case.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
