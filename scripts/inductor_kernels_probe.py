"""Probe for the GPU machine (not the library, not the suite): what torch.compile runs on the
layouts where it leads us (bench/NOTES.md v61: small odd 1- and 2-byte matrices). For each shape,
compiles the transpose in a cache directory of its own and writes to one text report:
Inductor's Triton source (sizes, strides, masks and the heuristics' candidate configs), the
config its autotuning chose, and each compiled kernel's launch facts (warps, stages, shared
memory, registers and spills from the cubin by cuobjdump), so that a kernel of ours can be
shaped after the one that wins.

    python3 scripts/inductor_kernels_probe.py --shapes "fp16 2049x2051,bf16 4097x768" --out $OUT/inductor.txt

Shapes are written as bench.ab_gpu_time's --shapes.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

# Inductor compiles in this process, so that the cache directories set per shape apply.
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import torch  # noqa: E402

sys.path.insert(0, __file__.rsplit("/scripts/", 1)[0])
from bench import ab_gpu_time, impls  # noqa: E402


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def kernel_facts(triton_dir):
    """One line per compiled Triton kernel: its metadata and the cubin's resource usage."""
    lines = []
    for meta_path in sorted(glob.glob(os.path.join(triton_dir, "**", "*.json"), recursive=True)):
        if os.path.basename(meta_path).startswith("__grp__"):
            continue
        try:
            meta = json.loads(read(meta_path))
        except ValueError:
            continue
        if "num_warps" not in meta:
            continue
        keep = {k: meta.get(k) for k in ("name", "num_warps", "num_stages", "num_ctas", "shared", "maxnreg")}
        lines.append(f"kernel {json.dumps(keep)}")
        for cubin in glob.glob(os.path.join(os.path.dirname(meta_path), "*.cubin")):
            try:
                usage = subprocess.run(["cuobjdump", "--dump-resource-usage", cubin], capture_output=True, text=True)
            except FileNotFoundError:  # the kernel's source and metadata still go in the report
                lines.append("  (no cuobjdump on PATH: registers not read)")
                continue
            lines += ["  " + line.strip() for line in usage.stdout.splitlines() if "REG" in line or "Function" in line]
    return lines


def probe(case, report, device):
    saved = {name: os.environ.get(name) for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    try:
        probe_in_fresh_caches(case, report, device)
    finally:  # the directories are gone: later compiles in this process use the caches they had
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def probe_in_fresh_caches(case, report, device):
    with tempfile.TemporaryDirectory() as work:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton")
        x = case.make_input(device)
        fn = impls.compiled(case, x)
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        report.append(f"# {case.name}: shape {tuple(x.shape)}, strides {x.stride()}, dtype {x.dtype}")
        for source in sorted(glob.glob(os.path.join(work, "inductor", "**", "*.py"), recursive=True)):
            text = read(source)
            if "@triton.jit" not in text and "extern \"C\"" not in text:
                continue
            report.append(f"## {os.path.relpath(source, work)}")
            report.append(text)
        for best in sorted(glob.glob(os.path.join(work, "inductor", "**", "*.best_config"), recursive=True)):
            report.append(f"## best config {os.path.basename(best)}: {read(best).strip()}")
        report += kernel_facts(os.path.join(work, "triton"))
        report.append("")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cuda", help="cpu: Inductor's C++ kernels instead (a check of this script)")
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("needs a CUDA device")
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    report = [f"torch {torch.__version__}, {device_name}"]
    for case in ab_gpu_time.shape_cases(args.shapes):
        try:
            probe(case, report, args.device)
        except Exception as error:  # one shape's failure leaves the others' report
            report.append(f"# {case.name}: failed: {error!r}")
    with open(args.out, "w") as f:
        f.write("\n".join(report) + "\n")
    print(f"wrote {args.out}: {len(report)} lines")


if __name__ == "__main__":
    main()
