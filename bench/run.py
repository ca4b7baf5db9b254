"""python -m bench: run the suite on CUDA if present (else CPU) and write bench/results/<name>.*

Every case is timed for each implementation in the same run, so ratios compare like with like.
See bench/README.md for the method and the ceilings.
"""
import argparse
import datetime
import functools
import os
import platform
import re
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

from . import cases as case_defs
from . import impls as impl_defs
from . import cpu_memory, report, timing

# Cases that move less than this (read + written) take 5-40 us a call on the H200, close to the
# host time of a call from Python, so their wall-clock time measures the host as much as the
# GPU, and the host's speed drifts: three runs of one build seconds apart read fp32 NCHW->NHWC
# 32x3x224x224 at 0.79-0.99 of copy (docs/performance.md). They are timed in SMALL_ROUNDS rounds,
# each implementation once per round in turn, and each keeps its median round, so a slow spell
# of the host lands on all implementations alike instead of on whichever ran then. 64 MB is
# issue 3's line for the bandwidth targets; larger cases are GPU-bound and timed once. Five
# rounds now: with three, copy's own median on the 19 MB C = 3 layouts still read
# 2014-3231 GB/s across the rows of one suite and between suites (docs/performance.md).
SMALL_BYTES = 64e6
SMALL_ROUNDS = 5


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=["cpu", "cuda"])
    p.add_argument("--suite", default="default", choices=(*case_defs.SUITES, "compiled"),
                   help="default: the square, narrow, batched, strided and model-layout cases (the CPU's own on the CPU); models: layouts and sizes from common models; random: layouts drawn from --seed; compiled: model blocks compiled without and with the layout-copy pass")
    p.add_argument("--seed", type=int, default=0, help="random suite: the seed its layouts are drawn from")
    p.add_argument("--count", type=int, default=60, help="random suite: how many layouts")
    p.add_argument("--quick", action="store_true", help="a few representative cases, shorter timing")
    p.add_argument("--cases", default="", help="comma-separated substrings: run cases whose name contains one "
                   "(a comma followed by a space stays inside a substring, as in '(2, 1, 0)')")
    p.add_argument("--dtypes", default="", help="comma-separated dtype names (fp32, bf16, int8, ...)")
    p.add_argument("--impls", default=",".join(impl_defs.IMPLS), help="comma-separated implementations")
    p.add_argument("--min-run-time", type=float, default=None, help="seconds of timing per measurement")
    p.add_argument("--out-dir", default=None,
                   help="where results go (default: bench/runs/<date>-<name>/, ignored by git; --save: bench/results/)")
    p.add_argument("--save", action="store_true", help="write into bench/results/, replacing the committed results")
    p.add_argument("--shape", default=None, help="a layout of your own: the input's shape, e.g. 4096,11,513")
    p.add_argument("--dims", default=None, help="with --shape: the permutation (default: swap the last two dims)")
    p.add_argument("--dtype", default="fp32", help=f"with --shape: one of {', '.join(case_defs.DTYPES)}")
    p.add_argument("--name", default=None, help="file stem for results (default: h200 / cpu / GPU name, "
                   "followed by -models for that suite)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's)")
    p.add_argument("--small-rounds", type=int, default=SMALL_ROUNDS,
                   help=f"interleaved timing rounds for cases under {SMALL_BYTES / 1e6:.0f} MB, the median kept "
                   "(cases at or above it are timed once)")
    p.add_argument("--warmup", type=float, default=None,
                   help="seconds of calls (10 calls at least) before each measurement (default: 1 on the CPU, "
                   "where a process's first large outputs fault in slowly; one call on CUDA)")
    p.add_argument("--fresh-pages", action="store_true",
                   help="CPU: leave glibc's allocator as it is, so that large outputs come from fresh pages each call "
                   "(by default freed memory stays in the process: bench/cpu_memory.py says why)")
    return p.parse_args(argv)


def device_name(device):
    if device == "cuda":
        return torch.cuda.get_device_name()
    return f"{platform.processor() or platform.machine()} CPU, {torch.get_num_threads()} threads"


def default_stem(device, which="default"):
    """h200 / cpu / the GPU's name; another suite's results get its name after it (h200-models),
    so that they never overwrite the default suite's."""
    if device == "cpu":
        stem = "cpu"
    else:
        name = torch.cuda.get_device_name().lower()
        stem = "h200" if "h200" in name else "".join(ch if ch.isalnum() else "_" for ch in name)
    return stem if which == "default" else f"{stem}-{which}"


def cuda_kernel_of(case):
    """The registry family and kernel the case's layout gets on this GPU (a dry run)."""
    import torch_transpose as tt
    x = case.make_input("meta")
    try:
        launches = tt.kernel_launches(x, list(case.op[1]), sm_count=torch.cuda.get_device_properties(0).multi_processor_count)
    except RuntimeError as e:
        return f"({e})"
    return "; ".join(f"{l['family']}: {l['kernel']}" for l in launches)


def split_case_filter(text):
    """'5-D,(2, 1, 0),[1:, 1:]' -> ['5-D', '(2, 1, 0)', '[1:, 1:]']: case names hold ', ' inside
    parentheses and brackets, so only a comma without a space after it separates substrings."""
    return [w.strip() for w in re.split(r",(?! )", text) if w.strip()]


def own_case(args):
    """The layout --shape/--dims/--dtype describe, as a case."""
    if args.dtype not in case_defs.DTYPES:
        raise SystemExit(f"--dtype: expected one of {', '.join(case_defs.DTYPES)}, got {args.dtype!r}")
    try:
        shape = tuple(int(s) for s in args.shape.split(","))
        dims = tuple(int(d) for d in args.dims.split(",")) if args.dims else None
    except ValueError:
        raise SystemExit(f"--shape and --dims: expected comma-separated integers, got {args.shape!r} and {args.dims!r}")
    if dims is None:
        dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
    if sorted(dims) != list(range(len(shape))):
        raise SystemExit(f"--dims: expected a permutation of 0..{len(shape) - 1}, got {args.dims!r}")
    name = f"{args.dtype} {'x'.join(map(str, shape))} ({','.join(map(str, dims))})"
    return case_defs.Case(name, "own", args.dtype, shape, ("permute", dims))


def select_cases(args):
    if getattr(args, "shape", None):
        return [own_case(args)]
    chosen = case_defs.suite(args.device, getattr(args, "suite", "default"), getattr(args, "seed", 0),
                             getattr(args, "count", 60))
    if args.quick:
        chosen = [c for c in chosen if c.quick]
    if args.cases:
        wanted = split_case_filter(args.cases)
        chosen = [c for c in chosen if any(w in c.name for w in wanted)]
    if args.dtypes:
        dtypes = set(args.dtypes.split(","))
        chosen = [c for c in chosen if c.dtype in dtypes]
    return chosen


def progress(i, n, label, started=None):
    width = 30
    done = int(width * i / max(n, 1))
    eta = ""
    if started is not None and 0 < i < n:
        left = (time.monotonic() - started) / i * (n - i)
        eta = f" ETA {int(left // 60)}:{int(left % 60):02d}"
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {i}/{n}{eta} {label[:50]:<50}")
    sys.stderr.flush()
    if i == n:
        sys.stderr.write("\n")


def check_bits(got, expected, what):
    """Raises unless `got` (a tensor or array) holds `expected`'s shape and bytes exactly (NaN
    payloads and -0.0 included)."""
    got = torch.as_tensor(got, device=expected.device) if not isinstance(got, torch.Tensor) else got
    if tuple(got.shape) != tuple(expected.shape) or not torch.equal(
            got.reshape(-1).view(torch.uint8), expected.reshape(-1).view(torch.uint8)):
        raise AssertionError(f"{what} gave a wrong result")


def warmup_seconds(args):
    return args.warmup if getattr(args, "warmup", None) is not None else (1.0 if args.device == "cpu" else 0.0)


def timing_modes(case, device, impl, warmup_s=0.0):
    """How an implementation is timed: every call from Python, and small cases of ours and
    eager's also replayed from a CUDA graph."""
    modes = [("call", functools.partial(timing.median_seconds, warmup_s=warmup_s))]
    if case.group == "small" and device == "cuda" and impl in ("torch_transpose", "eager"):
        modes.append(("graph", timing.median_seconds_graphed))
    return modes


def time_impls(case, x, expected, args, min_run_time, impl_names, rounds):
    """{(impl, mode): [seconds, one per round]}. Each implementation's result is checked against
    eager's bits before it is timed. With one round each implementation is made, timed and
    dropped in turn (large cases: one at a time in memory); with more, all stay alive and the
    rounds take them in turn."""
    times, kept = {}, {}
    for r in range(rounds):
        for impl in impl_names:
            if r == 0:
                fn = impl_defs.IMPLS[impl](case, x)
                if fn is None:
                    continue
                if impl not in ("copy", "view_copy"):
                    check_bits(fn(), expected, f"{impl} on {case.name}")
            elif impl in kept:
                fn = kept[impl]
            else:
                continue
            for mode, timer in timing_modes(case, args.device, impl, warmup_seconds(args)):
                times.setdefault((impl, mode), []).append(timer(fn, min_run_time))
            if rounds > 1:
                kept[impl] = fn
            del fn
    return times


def measure_case(case, args, min_run_time, impl_names):
    x = case.make_input(args.device)
    useful_bytes = 2 * x.numel() * x.element_size()
    expected = impl_defs.eager(case, x)()
    rounds = max(1, args.small_rounds) if useful_bytes < SMALL_BYTES else 1
    records = []
    for (impl, mode), per_round in time_impls(case, x, expected, args, min_run_time, impl_names, rounds).items():
        seconds = statistics.median(per_round)
        records.append({
            "case": case.name if mode == "call" else f"{case.name} (CUDA graph)",
            "group": case.group, "dtype": case.dtype, "shape": list(case.shape),
            "bytes": useful_bytes, "impl": impl, "mode": mode,
            "median_ms": seconds * 1e3, "gbps": useful_bytes / seconds / 1e9,
        })
        if len(per_round) > 1:
            records[-1]["round_ms"] = [t * 1e3 for t in per_round]
        if mode == "graph":
            records[-1]["calls_per_graph"] = timing.CALLS_PER_GRAPH
    # Ratios against the copy of the same bytes, measured in this run; strided cases also get
    # their ceiling: copy x used/touched bytes, or the plain view copy if that is faster.
    copy = next((r["gbps"] for r in records if r["impl"] == "copy"), None)
    view_copy = next((r["gbps"] for r in records if r["impl"] == "view_copy"), None)
    for r in records:
        r["ratio_to_copy"] = r["gbps"] / copy if copy else None
        if copy:
            r["ceiling_gbps"] = max(copy * case.touched_fraction, view_copy or 0)
    return records


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    impl_names = [i for i in args.impls.split(",") if i in impl_defs.IMPLS]
    if args.quick and args.impls == ",".join(impl_defs.IMPLS):
        impl_names = ["torch_transpose", "copy", "view_copy", "eager"]
    elif args.suite == "random" and args.impls == ",".join(impl_defs.IMPLS):
        # The anchors the generality targets name; tuned Triton and cuBLAS would double the run.
        impl_names = ["torch_transpose", "copy", "view_copy", "eager", "compile"]
    min_run_time = args.min_run_time or (0.1 if args.quick else 0.3)
    if args.suite == "compiled":  # model blocks compiled without and with the layout-copy pass
        from . import compiled_blocks
        stem = args.name or default_stem(args.device, args.suite)
        out_dir = Path(args.out_dir) if args.out_dir else default_out_dir(args, stem)
        compiled_blocks.run(args.device, min_run_time, out_dir, stem, run_meta(args, argv, min_run_time))
        print(f"\nresults: {out_dir}", file=sys.stderr)
        return
    chosen = select_cases(args)
    if not chosen:
        raise SystemExit("no case matches the selection (--suite, --cases, --dtypes, --quick): nothing to run")
    records = []
    meta = run_meta(args, argv, min_run_time)
    if args.device == "cpu":
        meta["cpu_memory"] = cpu_memory.FRESH_PAGES if args.fresh_pages else cpu_memory.keep_freed_memory()
    stem = args.name or default_stem(args.device, args.suite)
    if args.suite == "random" and not args.name:
        stem += f"-s{args.seed}"
    if args.shape and not args.name:
        stem += "-own"
    out_dir = Path(args.out_dir) if args.out_dir else default_out_dir(args, stem)
    failed = []
    started = time.monotonic()
    for i, case in enumerate(chosen):
        progress(i, len(chosen), case.name, started)
        try:
            records += measure_case(case, args, min_run_time, impl_names)
        except torch.OutOfMemoryError as e:
            print(f"\n{case.name}: out of memory ({e}); skipped", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - one failing case must not end the run
            failed.append(case.name)
            print(f"\n{case.name}: failed ({type(e).__name__}: {e}); the run goes on", file=sys.stderr)
            traceback.print_exc(limit=3)
        if args.device == "cuda":
            torch.cuda.empty_cache()
        # Results so far are written after every case: a run cut short still leaves them.
        report.write_all(records, {**meta, "complete": False, "failed": failed}, out_dir, stem)
    progress(len(chosen), len(chosen), "done")
    table = report.write_all(records, {**meta, "complete": True, "failed": failed}, out_dir, stem)
    print(table)
    if args.suite == "random":
        from .random_suite import summary
        text = summary(records, chosen, cuda_kernel_of if args.device == "cuda" else None)
        print("\n" + text)
        (out_dir / f"{stem}-summary.txt").write_text(text + "\n")
    big = [r for r in records if r["impl"] == "torch_transpose" and r["bytes"] >= 64e6 and r.get("ceiling_gbps")]
    print(f"\nresults: {out_dir}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} case(s) failed: {', '.join(failed)}", file=sys.stderr)
    if big:
        print(f"\ngeomean ours/ceiling over cases >= 64 MB: {report.geomean([r['gbps'] / r['ceiling_gbps'] for r in big]):.3f}"
              f"; min: {min(r['gbps'] / r['ceiling_gbps'] for r in big):.3f}")
    if failed:
        raise SystemExit(1)


def default_out_dir(args, stem):
    """bench/results/ with --save (the committed results); otherwise a run folder of its own."""
    here = Path(__file__).parent
    if args.save:
        return here / "results"
    return here / "runs" / f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d-%H%M}-{stem}"


def run_meta(args, argv, min_run_time):
    # The library's switches (TORCH_TRANSPOSE_*, read from the environment) change which kernels
    # run, so a run made with any set says so in its command, as a shell would have taken it.
    switches = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("TORCH_TRANSPOSE_"))
    return {
        "command": (switches + " " if switches else "") + "python -m bench "
                   + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device": device_name(args.device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "min_run_time_s": min_run_time,
        "warmup_s": warmup_seconds(args),
    }
