"""A/B of CPU builds against eager: each build (a directory holding a built torch_transpose
package, such as a git worktree of the old commit) runs in its own process, builds alternating
(in reversed order every other round), for several rounds; each case is timed as eager's `out.copy_(x.permute(dims))` into a reused
tensor over ours with `out=` into another, and as our call into a fresh output.

    python3 scripts/cpu_ab.py --builds /tmp/old_worktree . --rounds 3 \\
        --shapes "fp32 4096x4096,bf16 64x12x197x64:0,2,1,3" [--out ab.md]
    python3 scripts/cpu_ab.py --settings "" "TORCH_TRANSPOSE_KERNELS=cpu_avx512=0" --shapes ...   # switches

Why `out=`: on the 2-core VM a large fresh output's first touch costs more than the transpose and
swings from call to call (docs/performance.md), which hides kernel changes; the fresh column
is printed for what a plain call costs. Timings are the benchmark's own medians
(bench.timing.median_seconds: torch.utils.benchmark on all of torch's threads). Every output is
compared bit for bit with eager's before it is timed. Shapes are written as bench.ab_gpu_time's
--shapes.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(shapes, min_run_time):
    """In a worker process: {case name: [eager copy_ s, ours out= s, ours fresh s]}."""
    import torch

    import torch_transpose as tt
    from bench import ab_gpu_time, timing

    def median(fn):
        return timing.median_seconds(fn, min_run_time)

    results = {}
    for case in ab_gpu_time.shape_cases(shapes):
        torch.manual_seed(0)
        x = case.make_input("cpu")
        dims = case.op[1] if case.op[0] == "permute" else tuple(range(x.dim() - 2)) + (x.dim() - 1, x.dim() - 2)
        ours_out = torch.empty(x.permute(dims).shape, dtype=x.dtype)
        eager_out = torch.empty_like(ours_out)
        tt.permute(x, dims, out=ours_out)
        eager_out.copy_(x.permute(dims))
        if not torch.equal(ours_out.view(torch.uint8), eager_out.view(torch.uint8)):
            raise AssertionError(f"{case.name}: torch_transpose's output differs from eager's")
        results[case.name.removesuffix(" (shape)")] = [
            median(lambda: eager_out.copy_(x.permute(dims))),
            median(lambda: tt.permute(x, dims, out=ours_out)),
            median(lambda: tt.permute(x, dims)),
        ]
    return results


def run_build(build, shapes, min_run_time, setting=""):
    """One round of one build, in a process whose torch_transpose is the one in `build` (first on
    sys.path: `python -c` would otherwise put the working directory's package first), with the
    setting's environment variables ("NAME=VALUE NAME=VALUE", or "" for none) set."""
    build = os.path.abspath(build)
    env = dict(os.environ, **dict(kv.split("=", 1) for kv in setting.split()))
    code = (f"import json, sys; sys.path[:0] = [{build!r}, {ROOT!r}, {os.path.join(ROOT, 'scripts')!r}]; "
            f"import torch_transpose, cpu_ab; "
            f"assert torch_transpose.__file__.startswith({build + os.sep!r}), torch_transpose.__file__; "
            f"print(json.dumps(cpu_ab.measure({shapes!r}, {min_run_time!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"build {build}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(builds, runs):
    """runs[b][r]: build b's round r. Cells: eager's time / ours per round; fresh calls in ms."""
    header = ["case"] + [f"out=: eager/ours, {b}" for b in builds] + [f"fresh ms, {b}" for b in builds]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in runs[0][0]:
        ratios = [" / ".join(f"{r[name][0] / r[name][1]:.2f}" for r in rounds) for rounds in runs]
        fresh = [" / ".join(f"{r[name][2] * 1e3:.2f}" for r in rounds) for rounds in runs]
        lines.append("| " + " | ".join([name] + ratios + fresh) + " |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--builds", nargs="+", default=["."], help="directories each holding a built torch_transpose")
    p.add_argument("--shapes", required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--min-run-time", type=float, default=0.3)
    p.add_argument("--settings", nargs="+", default=[""],
                   help='environment settings each build runs with, e.g. "" "TORCH_TRANSPOSE_KERNELS=cpu_avx512=0"')
    p.add_argument("--out", default=None, help="also write the table to this Markdown file")
    args = p.parse_args(argv)
    # Every build with every setting; a column is labelled by its build, and its setting if any.
    pairs = [(build, setting) for build in args.builds for setting in args.settings]
    labels = [f"{build} {setting}".strip() for build, setting in pairs]
    runs = [[] for _ in pairs]
    for r in range(args.rounds):
        # Pairs in turn, the order reversed every other round: on the 2-core VM the same build
        # read up to 1.5x slower as the second process of a round than as the first.
        order = list(enumerate(pairs))
        for b, (build, setting) in order if r % 2 == 0 else order[::-1]:
            runs[b].append(run_build(build, args.shapes, args.min_run_time, setting))
    text = table(labels, runs)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
