"""Probe (not the library, not the suite): the two 16-line narrow transposes of the suite
(16x4194304 and 4194304x16, fp32) by our op, by torch.compile, and by Inductor's kernel for them
written out in Triton (the same tile, block size and load policy), with and without that
kernel's L2 evict_last policy. Each is timed against a copy of the same bytes, by GPU time
(bench.ab_gpu_time's queued calls) and by the suite's wall clock (bench.timing).

Why (bench/NOTES.md v29): lean narrow tiles have Inductor's tile shape and about its instruction
count, yet torch.compile stays 1.6-2.1% ahead in the suite. It runs 16x4194304 at 1.01 of copy,
while the bench's own Triton anchor, with no L2 policy, runs 0.98. Whichever column moves with
`evict` answers whether the policy, by GPU time or by wall clock, is the difference.

    python3 scripts/narrow_inductor_probe.py [--rounds 2]      # on the GPU machine
    python3 scripts/narrow_inductor_probe.py --compile-only    # anywhere: PTX of the Triton kernels for sm_90

--compile-only needs no GPU. On this project's CPU machine (session 26) it gave Inductor's
16x4194304 instruction pattern: 2 ld.global.L1::evict_last.L2::cache_hint.v4, 8 st.shared.b32,
bar.sync, 8 ld.shared.b32, 2 st.global.v4 (82 SASS instructions, 26 registers, 8 KB of shared
memory; 4194304x16: 90, 23, 4 KB). The timed run (session 27, bench/NOTES.md v30,
results/h200-ab-session27.md section 3): the policy was worth 0.014 of copy on 16x4194304 and
0.006-0.009 on 4194304x16; our kernels have loaded with it since.
"""
import argparse
import sys

import torch

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

# (name, rows M, cols N, XBLOCK along M (the output's fast dim), YBLOCK along N, warps): Inductor's
# choices for these shapes (results/h200-ab-session15.md, sections 1 and 6).
CASES = [("fp32 16x4194304", 16, 4194304, 16, 128, 8), ("fp32 4194304x16", 4194304, 16, 64, 16, 4)]

if triton is not None:
    @triton.jit
    def inductor_like_transpose(in_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, XBLOCK: tl.constexpr,
                                YBLOCK: tl.constexpr, EVICT_LAST: tl.constexpr):
        # in: (M, N) contiguous; out: (N, M) contiguous; out[y, x] = in[x, y]. Shapes are constants.
        x = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
        y = tl.program_id(1) * YBLOCK + tl.arange(0, YBLOCK)[None, :]
        if EVICT_LAST:
            v = tl.load(in_ptr + (y + N * x), eviction_policy="evict_last")
        else:
            v = tl.load(in_ptr + (y + N * x))
        tl.store(out_ptr + (x + M * y), v)


def triton_call(x, m, n, xblock, yblock, warps, evict_last):
    def call():
        out = torch.empty((n, m), dtype=x.dtype, device=x.device)
        inductor_like_transpose[(m // xblock, n // yblock)](x, out, m, n, xblock, yblock, evict_last, num_warps=warps)
        return out
    return call


def compile_only():
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    for name, m, n, xblock, yblock, warps in CASES:
        for evict in (True, False):
            source = ASTSource(fn=inductor_like_transpose,
                               signature={"in_ptr": "*fp32", "out_ptr": "*fp32", "M": "constexpr", "N": "constexpr",
                                          "XBLOCK": "constexpr", "YBLOCK": "constexpr", "EVICT_LAST": "constexpr"},
                               constexprs={"M": m, "N": n, "XBLOCK": xblock, "YBLOCK": yblock, "EVICT_LAST": evict},
                               attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
            kernel = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
            memory = [line.split()[0] for line in kernel.asm["ptx"].splitlines()
                      if line.strip().startswith(("ld.", "st.", "bar."))]
            counts = {op: memory.count(op) for op in dict.fromkeys(memory)}
            print(f"{name} evict_last={evict}: shared {kernel.metadata.shared} B; {counts}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--min-run-time", type=float, default=0.1)
    p.add_argument("--compile-only", action="store_true")
    args = p.parse_args()
    if triton is None:
        sys.exit("needs Triton")
    if args.compile_only:
        return compile_only()
    if not torch.cuda.is_available():
        sys.exit("the timed run needs a CUDA device (--compile-only does not)")
    import torch_transpose as tt
    from bench.ab_gpu_time import seconds_per_call
    from bench.timing import median_seconds
    print("| case | impl | GPU time: copy / impl, per round | wall clock: copy / impl, per round |")
    print("|---|---|---|---|")
    for name, m, n, xblock, yblock, warps in CASES:
        x = torch.randn(m, n, device="cuda")
        expected = x.t().contiguous()
        dst = torch.empty_like(x)
        compiled = torch.compile(lambda t: t.t().contiguous())
        impls = {"copy": lambda: dst.copy_(x), "ours": lambda: tt.transpose(x), "compile": lambda: compiled(x)}
        for evict in (True, False):
            impls[f"inductor-like evict_last={evict}"] = triton_call(x, m, n, xblock, yblock, warps, evict)
        for label, fn in impls.items():
            if label != "copy" and not torch.equal(fn().view(torch.int32), expected.view(torch.int32)):
                sys.exit(f"{label} is wrong on {name}")
        gpu = {label: [] for label in impls}
        wall = {label: [] for label in impls}
        for _ in range(args.rounds):
            for label, fn in impls.items():
                gpu[label].append(seconds_per_call(fn, "cuda", args.calls))
                wall[label].append(median_seconds(fn, args.min_run_time))
        for label in impls:
            if label == "copy":
                continue
            g = " / ".join(f"{c / t:.3f}" for c, t in zip(gpu["copy"], gpu[label]))
            w = " / ".join(f"{c / t:.3f}" for c, t in zip(wall["copy"], wall[label]))
            print(f"| {name} | {label} | {g} | {w} |", flush=True)
        del x, expected, dst
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
