"""GPU time of every block shape of the harness's Triton reference (bench/triton_ref.py) on one
suite case, against ours and a copy of the same bytes: which config the autotuner can pick, and
whether one beats us. Each is timed as bench.ab_gpu_time times ours (`calls` launches queued
behind a GPU sleep, CUDA events around them, best of 3), in `rounds` rounds; the table gives
copy's time / each one's.

    python3 scripts/triton_config_probe.py "bf16 Llama-2 MLP weight 11008x4096" [rounds] [calls]
"""
import sys

sys.path.insert(0, __file__.rsplit("/scripts/", 1)[0])
from bench import cases as case_defs  # noqa: E402
from bench import impls as impl_defs  # noqa: E402
from bench import run, triton_ref  # noqa: E402
from bench.ab_gpu_time import seconds_per_call  # noqa: E402


def main(name, rounds=2, calls=50):
    every = case_defs.suite("cuda") + case_defs.suite("cuda", "models")
    case = next(c for c in every if c.name == name)
    x = case.make_input("cuda")
    expected = impl_defs.IMPLS["eager"](case, x)()
    runs = {"copy": impl_defs.IMPLS["copy"](case, x), "ours": impl_defs.IMPLS["torch_transpose"](case, x)}
    for cfg in triton_ref._CONFIGS:
        runs[f"triton {cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']} w{cfg.num_warps}"] = (
            lambda cfg=cfg: triton_ref.transpose_last_two(x, cfg))
    for label, fn in runs.items():
        if label != "copy":
            run.check_bits(fn(), expected, label)
    table = {label: [] for label in runs}
    for _ in range(rounds):
        times = {label: seconds_per_call(fn, "cuda", calls) for label, fn in runs.items()}
        for label in runs:
            table[label].append(times["copy"] / times[label])
    print(f"{name}: copy's GPU time / each, {rounds} rounds of {calls} calls, best of 3")
    for label, ratios in table.items():
        print(f"  {label:24s} " + " / ".join(f"{r:.3f}" for r in ratios))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
