"""A/B of kernel switches by GPU time: each setting (a set of environment variables) runs in its
own process, for several rounds, and times each case's op against a copy of the same bytes in
that process.

    python -m bench.ab_gpu_time --cases "int8 8192x8192,(2, 1, 0)" \\
        --settings "" "TORCH_TRANSPOSE_KERNELS=tma_tile=0" --rounds 2 [--out ab.md]
    python -m bench.ab_gpu_time --shapes "int8 12288x12288,int8 4x8192x8192" --settings ...

`--shapes` adds transposes of the last two dims outside the suite (a size rule's threshold is
found between suite cases), or permutes ("bf16 20x30x40x50x60:4,2,0,3,1": a suite case's layout in
another dtype).

Why a tool of its own: the switches (bench/README.md, "Tuning and profiling") are read once per
process, so an A/B needs a process per setting; machines differ by up to 0.01 of copy on the same
kernel (docs/performance.md), so settings are compared within one GPU call and round against round;
and by wall clock the benchmark also times the host, which hides kernel changes on calls of a
few microseconds. GPU time here: `--calls` calls queued behind a sleep kernel (so the GPU never
waits for the host), CUDA events around the batch, best of 3; copy = `dst.copy_(src)` of the
same bytes. On the CPU (the tests) the same loop is timed by the wall clock.

`--clock wall` times each implementation as the benchmark does instead (torch.utils.benchmark's
loop, host and GPU together, `timing.median_seconds`), for cases whose suite reading is host-bound
(the C = 3 layouts): then settings are compared by what the suite measures, round against round.

Every case's output is compared bit for bit with eager's before it is timed. The table's cells
are copy's time / ours, one per round ("r1 / r2"), one column per setting.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

import torch

from . import cases as case_defs
from . import impls as impl_defs
from . import run, timing
from .host_overhead import hold_gpu, wall_us


def parse_setting(text):
    """'A=1 B=0' -> {'A': '1', 'B': '0'}; '' -> {} (the environment as it is)."""
    setting = {}
    for word in text.split():
        name, sep, value = word.partition("=")
        if not sep or not name:
            raise ValueError(f"expected settings of the form NAME=VALUE, got {word!r} in {text!r}")
        setting[name] = value
    return setting


def setting_label(text):
    return text.strip() or "as is"


# --clock wall: each implementation's timed loop, as long as the suite's (--min-run-time 0.1).
WALL_MIN_RUN_TIME = 0.1


def seconds_per_call(fn, device, calls, clock="gpu"):
    if clock == "wall":
        return timing.median_seconds(fn, WALL_MIN_RUN_TIME)
    fn()  # warm-up: the first call's allocations and launches stay out of the timing
    best = math.inf
    for _ in range(3):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            hold_gpu()  # the calls below are queued while the GPU sleeps
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            torch.cuda.synchronize()
            seconds = start.elapsed_time(end) / 1e3
            best = min(best, seconds / calls)
        else:
            best = min(best, wall_us(fn, calls, device) / 1e6)
    return best


# One entry of --shapes: "DTYPE AxB[x...]" with an optional ":d0,d1,..." (a permutation, whose
# commas belong to it), then a comma or semicolon before the next entry.
_SHAPE_ENTRY = re.compile(r"\s*([^,;:]+?)\s*(?::\s*([0-9]+(?:\s*,\s*[0-9]+)*))?\s*(?:[,;]|$)")


def shape_cases(text):
    """'int8 12288x12288,fp32 4x64x64' -> suite-like cases transposing the last two dims;
    'bf16 20x30x40x50x60:4,2,0,3,1' -> a permute of that shape by those dims."""
    chosen, at = [], 0
    while at < len(text) and text[at:].strip():
        match = _SHAPE_ENTRY.match(text, at)
        if match is None or match.end() == at:
            raise ValueError(f"expected shapes like 'int8 12288x12288' or 'bf16 20x30x40:2,0,1', got {text[at:]!r}")
        at = match.end()
        word, perm_text = match.group(1), match.group(2)
        dtype, _, dims_text = word.partition(" ")
        try:
            shape = tuple(int(n) for n in dims_text.strip().split("x"))
        except ValueError:
            shape = ()
        perm = tuple(int(n) for n in perm_text.split(",")) if perm_text else None
        if (dtype not in case_defs.DTYPES or len(shape) < 2 or min(shape) < 1
                or (perm is not None and sorted(perm) != list(range(len(shape))))):
            raise ValueError(f"expected shapes like 'int8 12288x12288' or 'bf16 20x30x40:2,0,1' (a dtype of "
                             f"{sorted(case_defs.DTYPES)}, at least two sizes, a permutation of their dims), "
                             f"got {word!r}")
        op = ("permute", perm) if perm is not None else ("transpose", -2, -1)
        name = f"{word}:{','.join(map(str, perm))}" if perm is not None else word
        chosen.append(case_defs.Case(f"{name} (shape)", "shape", dtype, shape, op))
    return chosen


def select_cases(args):
    return (run.select_cases(args) if args.cases else []) + shape_cases(args.shapes)


def measure(case, device, calls, clock="gpu"):
    """One case in this process: ours and copy's seconds per call, after a bit-for-bit check."""
    x = case.make_input(device)
    ours = impl_defs.ours(case, x)
    run.check_bits(ours(), impl_defs.eager(case, x)(), f"torch_transpose on {case.name}")
    return {"case": case.name, "ours_s": seconds_per_call(ours, device, calls, clock),
            "copy_s": seconds_per_call(impl_defs.copy(case, x), device, calls, clock)}


def worker(args):
    for case in select_cases(args):
        print(json.dumps(measure(case, args.device, args.calls, args.clock)), flush=True)
        if args.device == "cuda":
            torch.cuda.empty_cache()


def run_setting(args, text):
    """The cases under one setting, in a fresh process: {case: copy's time / ours}."""
    command = [sys.executable, "-m", "bench.ab_gpu_time", "--worker", "--device", args.device,
               "--suite", args.suite, "--cases", args.cases, "--shapes", args.shapes, "--calls", str(args.calls), "--clock", args.clock]
    env = dict(os.environ, **parse_setting(text))
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"setting {setting_label(text)!r} failed:\n{done.stdout}{done.stderr}")
    ratios = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            ratios[record["case"]] = record["copy_s"] / record["ours_s"]
    return ratios


def table(settings, rounds):
    """rounds[r][setting][case] -> Markdown rows: one per case, one column per setting."""
    cases = list(dict.fromkeys(case for by_setting in rounds for r in by_setting.values() for case in r))
    lines = ["| case | " + " | ".join(setting_label(s) for s in settings) + " |",
             "|---|" + "---|" * len(settings)]
    for case in cases:
        cells = [" / ".join(f"{r[s][case]:.3f}" for r in rounds) for s in settings]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_table(text, out):
    with open(out, "w") as f:
        f.write(text + "\n")


def print_table(text, out=None):
    """Prints a Markdown table, and writes it to the file `out` too when one is named."""
    print(text)
    if out:
        write_table(text, out)


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.ab_gpu_time", description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=["cpu", "cuda"])
    p.add_argument("--suite", default="default", choices=case_defs.SUITES, help="the suite --cases picks from")
    p.add_argument("--cases", default="", help="as `python -m bench --cases` (substrings of case names)")
    p.add_argument("--shapes", default="",
                   help="cases outside the suite, comma-separated: transposes of the last two dims, "
                        "'DTYPE AxB[x...]', or permutes, 'DTYPE AxBxC:2,0,1'")
    p.add_argument("--settings", nargs="+", default=[""],
                   help="one argument per setting, each 'NAME=VALUE ...' ('' = the environment as it is)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--calls", type=int, default=30, help="calls per timed batch (--clock gpu)")
    p.add_argument("--clock", choices=["gpu", "wall"], default="gpu",
                   help="gpu: calls queued behind a sleep kernel, CUDA events; wall: the benchmark's own loop")
    p.add_argument("--out", default=None, help="also write the table to this Markdown file")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.quick, args.dtypes = False, ""  # what run.select_cases also reads
    for text in args.settings:
        parse_setting(text)  # a malformed setting fails here, before any process starts
    shape_cases(args.shapes)  # and so does a malformed shape
    if not args.cases and not args.shapes:
        p.error("name --cases, --shapes or both")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    if args.cases and not run.select_cases(args):  # a filter that matches nothing is a typo, shapes or not
        raise SystemExit(f"no {args.device} suite case matches --cases {args.cases!r}")
    rounds = []
    for r in range(args.rounds):
        rounds.append({})
        for text in args.settings:
            rounds[-1][text] = run_setting(args, text)
            print(f"round {r + 1}, {setting_label(text)}: done", file=sys.stderr, flush=True)
        if args.out and r + 1 < args.rounds:
            # The rounds so far, so that a call's time limit that stops a later round keeps them.
            write_table(table(args.settings, rounds), args.out)
    print_table(table(args.settings, rounds), args.out)


if __name__ == "__main__":
    main()
