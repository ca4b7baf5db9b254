"""Which kernel serves each suite case: runs torch_transpose once per case under torch.profiler
and prints the CUDA kernels (or the runtime copy) it launched. For choosing the cases of an
A/B (bench.ab_gpu_time) by the kernel a change touches.

    python3 scripts/kernels_of_cases.py                   # every CUDA suite case
    python3 scripts/kernels_of_cases.py "32x3x224x224" "5-D"   # cases whose name contains these
    python3 scripts/kernels_of_cases.py --suite models Whisper   # the models suite's
"""
import argparse
import re
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, __file__.rsplit("/scripts/", 1)[0])
from bench import cases as case_defs  # noqa: E402
from bench import impls as impl_defs  # noqa: E402


def short_name(kernel):
    """'void torch_transpose::(anonymous namespace)::foo_kernel<...>(...)' -> 'foo_kernel<...>'."""
    name = re.sub(r"^void ", "", kernel)
    name = re.sub(r"torch_transpose::(\(anonymous namespace\)::)?", "", name)
    return re.sub(r"\(.*$", "", name) if "<" not in name else name[: name.rfind(">") + 1]


def main(patterns, which="default"):
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA device")
    for case in case_defs.suite("cuda", which):
        if patterns and not any(p in case.name for p in patterns):
            continue
        x = case.make_input("cuda")
        fn = impl_defs.IMPLS["torch_transpose"](case, x)
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        kernels = sorted({short_name(e.name) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
        print(f"{case.name}: {', '.join(kernels) or '(none)'}", flush=True)
        del x, fn


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="which kernel serves each suite case")
    parser.add_argument("--suite", default="default", choices=case_defs.SUITES)
    parser.add_argument("patterns", nargs="*", help="substrings of case names (none: every case)")
    args = parser.parse_args()
    main(args.patterns, args.suite)
