"""The benchmark's command-line tools. The case filter: names hold ', ' inside parentheses, so a
plain split on commas once matched every case (" 1" is in almost every name). bench.ab_gpu_time:
settings, the table, the bit check it shares with the benchmark, and a short CPU run end to end
(each setting in its own process)."""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from bench import ab_gpu_time, run

ROOT = Path(__file__).resolve().parent.parent


def _chosen(cases):
    args = argparse.Namespace(device="cuda", quick=False, cases=cases, dtypes="")
    return [c.name for c in run.select_cases(args)]


def test_commas_inside_names_stay_in_the_substring():
    assert run.split_case_filter("5-D,(2, 1, 0),[1:, 1:]") == ["5-D", "(2, 1, 0)", "[1:, 1:]"]
    assert _chosen("(2, 1, 0),8193x8193") == ["fp32 8193x8193[1:, 1:]", "fp32 1024x1024x64 (2, 1, 0)"]


def test_plain_substrings_still_match_several_cases():
    chosen = _chosen("8192x8192,4194304x16")
    assert "fp32 8192x8192" in chosen and "int8 8192x8192" in chosen and "fp32 4194304x16" in chosen
    assert not any("5-D" in name for name in chosen)


def test_results_name_the_library_switches_they_ran_with(monkeypatch):
    # A run with TORCH_TRANSPOSE_KERNELS set (AVX-512 switched off, say) measured other kernels: its
    # command says so, as a shell would have taken it; a plain run's command is unchanged.
    args = run.parse_args(["--device", "cpu", "--quick"])
    for name in [k for k in os.environ if k.startswith("TORCH_TRANSPOSE_")]:
        monkeypatch.delenv(name)
    assert run.run_meta(args, ["--quick"], 0.1)["command"] == "python -m bench --quick"
    monkeypatch.setenv("TORCH_TRANSPOSE_KERNELS", "cpu_avx2=0,cpu_avx512=0")
    assert run.run_meta(args, ["--quick"], 0.1)["command"] == (
        "TORCH_TRANSPOSE_KERNELS=cpu_avx2=0,cpu_avx512=0 python -m bench --quick")


def test_settings_parse_and_malformed_ones_are_refused():
    assert ab_gpu_time.parse_setting("") == {}
    assert ab_gpu_time.parse_setting("A=1  B=0") == {"A": "1", "B": "0"}
    assert ab_gpu_time.parse_setting("A=") == {"A": ""}
    for bad in ("A", "=1", "A=1 B"):
        with pytest.raises(ValueError, match="NAME=VALUE"):
            ab_gpu_time.parse_setting(bad)


def test_table_has_a_row_per_case_and_a_cell_per_setting_with_every_round():
    rounds = [{"": {"c1": 0.9512, "c2": 1.0}, "X=0": {"c1": 0.5, "c2": 0.25}},
              {"": {"c1": 0.96, "c2": 0.99}, "X=0": {"c1": 0.51, "c2": 0.26}}]
    assert ab_gpu_time.table(["", "X=0"], rounds).splitlines() == [
        "| case | as is | X=0 |", "|---|---|---|",
        "| c1 | 0.951 / 0.960 | 0.500 / 0.510 |", "| c2 | 1.000 / 0.990 | 0.250 / 0.260 |"]


def test_bit_check_sees_signed_zeros_nan_payloads_and_shapes():
    expected = torch.tensor([[0.0, 1.0], [float("nan"), 2.0]])
    run.check_bits(expected.clone(), expected, "same")
    for wrong in (torch.tensor([[-0.0, 1.0], [float("nan"), 2.0]]),
                  expected.clone().view(torch.int32).bitwise_or(1).view(torch.float32),
                  expected.reshape(1, 4)):
        with pytest.raises(AssertionError, match="wrong result"):
            run.check_bits(wrong, expected, "wrong")


def test_ab_runs_each_setting_in_its_own_process_on_the_cpu(tmp_path):
    out = tmp_path / "ab.md"
    done = subprocess.run([sys.executable, "-m", "bench.ab_gpu_time", "--device", "cpu", "--cases", "NCHW->NHWC",
                           "--settings", "", "TORCH_TRANSPOSE_KERNELS=cpu_avx512=0", "--rounds", "1", "--calls", "1",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "| case | as is | TORCH_TRANSPOSE_KERNELS=cpu_avx512=0 |"
    assert re.fullmatch(r"\| fp32 NCHW->NHWC 16x64x56x56 \| \d+\.\d{3} \| \d+\.\d{3} \|", rows[2]), rows


def test_ab_keeps_the_finished_rounds_when_a_later_one_is_stopped(tmp_path, monkeypatch):
    # A call's time limit can stop a later round: the --out file keeps the rounds before it.
    out = tmp_path / "ab.md"
    finished = []

    def fake_run_setting(args, text):
        if len(finished) == 2:  # round 2's first setting: stopped
            raise KeyboardInterrupt
        finished.append(text)
        return {"int8 4x4 (shape)": 0.5 if text else 0.25}

    monkeypatch.setattr(ab_gpu_time, "run_setting", fake_run_setting)
    with pytest.raises(KeyboardInterrupt):
        ab_gpu_time.main(["--device", "cpu", "--shapes", "int8 4x4", "--settings", "", "X=1", "--rounds", "3",
                          "--out", str(out)])
    assert out.read_text().splitlines() == ["| case | as is | X=1 |", "|---|---|---|",
                                            "| int8 4x4 (shape) | 0.250 | 0.500 |"]


def test_shapes_become_transposes_of_the_last_two_dims():
    cases = ab_gpu_time.shape_cases(" int8 12288x4096, fp32 3x40x56 ")
    assert [(c.name, c.dtype, c.shape, c.op) for c in cases] == [
        ("int8 12288x4096 (shape)", "int8", (12288, 4096), ("transpose", -2, -1)),
        ("fp32 3x40x56 (shape)", "fp32", (3, 40, 56), ("transpose", -2, -1))]
    for bad in ("int8 12288", "int9 4x4", "fp32 4x0", "fp32 4xa", "fp32"):
        with pytest.raises(ValueError, match="expected shapes like"):
            ab_gpu_time.shape_cases(bad)
    with pytest.raises(SystemExit):  # neither suite cases nor shapes: nothing to time
        ab_gpu_time.parse_args(["--device", "cpu"])


def test_shapes_with_a_permutation_become_permutes():
    cases = ab_gpu_time.shape_cases("bf16 2x3x4:2,0,1, int8 4x6;fp64 5x6x7:0,2,1")
    assert [(c.name, c.dtype, c.shape, c.op) for c in cases] == [
        ("bf16 2x3x4:2,0,1 (shape)", "bf16", (2, 3, 4), ("permute", (2, 0, 1))),
        ("int8 4x6 (shape)", "int8", (4, 6), ("transpose", -2, -1)),
        ("fp64 5x6x7:0,2,1 (shape)", "fp64", (5, 6, 7), ("permute", (0, 2, 1)))]
    for bad in ("fp32 4x4:1", "fp32 4x4:0,0", "fp32 4x4:0,2", "fp32 4x4:", "fp32 4x4:a"):
        with pytest.raises(ValueError, match="expected shapes like"):
            ab_gpu_time.shape_cases(bad)


def test_wall_clock_ab_times_through_the_benchmarks_loop(monkeypatch):
    seen = []
    monkeypatch.setattr(ab_gpu_time.timing, "median_seconds", lambda fn, min_run_time: seen.append(min_run_time) or 0.25)
    assert ab_gpu_time.seconds_per_call(lambda: None, "cpu", 1, clock="wall") == 0.25
    assert seen == [ab_gpu_time.WALL_MIN_RUN_TIME]
    assert ab_gpu_time.parse_args(["--device", "cpu", "--shapes", "fp32 4x4", "--clock", "wall"]).clock == "wall"


@pytest.mark.parametrize("clock", ["gpu", "wall"])
def test_ab_times_shapes_outside_the_suite_on_the_cpu(clock):
    # --clock wall times through the benchmark's own loop (timing.median_seconds).
    done = subprocess.run([sys.executable, "-m", "bench.ab_gpu_time", "--device", "cpu", "--shapes", "bf16 3x40x56",
                           "--settings", "", "--rounds", "1", "--calls", "1", "--clock", clock],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\| bf16 3x40x56 \(shape\) \| \d+\.\d{3} \|$", done.stdout, re.M), done.stdout


@pytest.mark.parametrize("shapes", [[], ["--shapes", "fp32 4x4"]], ids=["alone", "beside shapes"])
def test_ab_refuses_a_filter_that_matches_nothing(shapes):
    done = subprocess.run([sys.executable, "-m", "bench.ab_gpu_time", "--device", "cpu", "--cases", "no such case",
                           *shapes], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "no cpu suite case matches" in done.stderr


def test_small_cases_take_interleaved_rounds_and_keep_the_median(monkeypatch):
    # Cases under SMALL_BYTES are host-bound on the GPU: each implementation is timed once per
    # round, in turn, and keeps its median round (bench/run.py says why); larger cases once.
    order = []
    fake_seconds = iter([3.0, 1.0, 2.0, 6.0, 4.0, 5.0])  # ours, copy, ours, copy, ours, copy

    def fake_timer(fn, min_run_time, warmup_s=0.0):
        assert warmup_s == 1.0  # the CPU's default
        order.append(fn)
        return next(fake_seconds)

    monkeypatch.setattr(run.timing, "median_seconds", fake_timer)
    args = run.parse_args(["--device", "cpu", "--small-rounds", "3"])
    case = next(c for c in run.case_defs.suite("cpu") if c.name == "fp32 NCHW->NHWC 16x64x56x56")
    assert 2 * case.make_input("cpu").numel() * 4 < run.SMALL_BYTES
    records = run.measure_case(case, args, 0.01, ["torch_transpose", "copy"])
    ours, copy = records
    assert len(order) == 6 and order[0] is order[2] is order[4] and order[1] is order[3] is order[5]
    assert order[0] is not order[1]
    assert ours["round_ms"] == [3000.0, 2000.0, 4000.0] and ours["median_ms"] == 3000.0
    assert copy["round_ms"] == [1000.0, 6000.0, 5000.0] and copy["median_ms"] == 5000.0
    assert ours["ratio_to_copy"] == pytest.approx(5.0 / 3.0)

    big = next(c for c in run.case_defs.suite("cpu") if c.name == "fp32 4096x4096")  # 134 MB
    order.clear()
    fake_seconds = iter([1.0, 1.0])
    records = run.measure_case(big, args, 0.01, ["torch_transpose", "copy"])
    assert len(order) == 2 and all("round_ms" not in r for r in records)


def test_models_suite_is_its_own_selection_with_its_own_result_files():
    # The models suite must not leak into issue 3's default suite (whose targets are computed over
    # every case it holds), and its results must not overwrite h200.* / cpu.*.
    default = {c.name for device in ("cpu", "cuda") for c in run.case_defs.suite(device)}
    models = run.case_defs.suite("cuda", "models")
    names = [c.name for c in models]
    assert len(names) == len(set(names)) and not default & set(names)
    assert all(c.group == "models" for c in models)
    args = argparse.Namespace(device="cuda", suite="models", quick=False, cases="GPT-2,Swin", dtypes="")
    assert [c.name for c in run.select_cases(args)] == [
        "bf16 GPT-2 embedding 50257x768", "bf16 Swin window partition 128x8x7x8x7x128"]
    assert run.default_stem("cpu", "models") == "cpu-models" and run.default_stem("cpu") == "cpu"
    with pytest.raises(ValueError, match="suite must be one of"):
        run.case_defs.suite("cuda", "model")


def test_models_suite_cases_build_the_inputs_their_names_describe():
    # On the meta device: every case's input has the shape and dtype in its name, and its op is a
    # transpose of two dims or a permutation of all of them.
    for case in run.case_defs.suite("cuda", "models"):
        x = case.make_input("meta")
        assert case.name.split()[0] == case.dtype and x.dtype == run.case_defs.DTYPES[case.dtype]
        assert "x".join(map(str, case.shape)) in case.name, case.name
        if case.op[0] == "permute":
            assert sorted(case.op[1]) == list(range(x.dim())) and list(case.op[1]) != list(range(x.dim()))
        else:
            assert case.op == ("transpose", -2, -1)


def test_cpu_ab_runs_each_build_and_setting_in_its_own_process(tmp_path):
    # scripts/cpu_ab.py end to end: this checkout with and without a switch, one round, a
    # transpose and a row-copy permute; each worker asserts that it imported the build it was given.
    out = tmp_path / "cpu_ab.md"
    done = subprocess.run([sys.executable, "scripts/cpu_ab.py", "--builds", ".", "--settings", "", "TORCH_TRANSPOSE_KERNELS=cpu_avx512=0",
                           "--rounds", "1", "--min-run-time", "0.01", "--shapes", "fp32 64x48,bf16 3x5x7x8:0,2,1,3",
                           "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == ("| case | out=: eager/ours, . | out=: eager/ours, . TORCH_TRANSPOSE_KERNELS=cpu_avx512=0 | fresh ms, . "
                       "| fresh ms, . TORCH_TRANSPOSE_KERNELS=cpu_avx512=0 |")
    assert [r.split(" | ")[0] for r in rows[2:]] == ["| fp32 64x48", "| bf16 3x5x7x8:0,2,1,3"]
    assert all(re.fullmatch(r"\|( [^|]+ \|){5}", r) for r in rows[2:]), rows


_STILL_MAPPED_AFTER_FREE = """
import sys, torch
from bench import cpu_memory
how = cpu_memory.keep_freed_memory() if sys.argv[1] == "keep" else cpu_memory.FRESH_PAGES
t = torch.empty(64 << 20, dtype=torch.uint8)
t.fill_(1)
address = t.data_ptr()
del t
spans = [[int(a, 16) for a in line.split()[0].split("-")] for line in open("/proc/self/maps")]
print(how, any(lo <= address < hi for lo, hi in spans))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_cpu_runs_keep_a_freed_output_mapped_and_fresh_pages_unmap_it():
    # bench/cpu_memory.py: with glibc's defaults a freed 64 MiB output is unmapped (and this VM's
    # host takes its pages back); kept, it stays in the heap for the next call.
    def run_mode(mode):
        done = subprocess.run([sys.executable, "-c", _STILL_MAPPED_AFTER_FREE, mode],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()[-1] == "True", done.stdout
    mapped, line = run_mode("keep")
    assert mapped and line.startswith("freed memory kept"), line
    mapped, line = run_mode("fresh")
    assert not mapped, line


def test_cpu_suite_records_how_it_allocated(tmp_path):
    # The meta of a CPU run says which allocator behaviour its figures were taken under.
    def meta_of(*flags):
        done = subprocess.run([sys.executable, "-m", "bench", "--device", "cpu", "--cases", "NCHW->NHWC",
                               "--impls", "torch_transpose,copy", "--min-run-time", "0.01", "--small-rounds", "1",
                               "--out-dir", str(tmp_path), "--name", "t", *flags],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads((tmp_path / "t.json").read_text())["meta"]
    assert meta_of()["cpu_memory"].startswith("freed memory kept in the process")
    assert meta_of("--fresh-pages")["cpu_memory"] == run.cpu_memory.FRESH_PAGES


def test_timing_keeps_calling_through_the_warmup():
    # bench/timing.py: calls for warmup_s before the timed ones (the CPU's default is 1 s: a
    # process's first large outputs fault in slowly there). Timed alone, 10 ms of calls.
    stamps = []
    run.timing.median_seconds(lambda: stamps.append(time.perf_counter()), 0.01, warmup_s=0.3)
    assert stamps[-1] - stamps[0] >= 0.3
    stamps.clear()
    run.timing.median_seconds(lambda: stamps.append(time.perf_counter()), 0.01)
    assert stamps[-1] - stamps[0] < 0.3


def test_warmup_lasts_its_calls_however_long_they_take():
    # Slow calls (a heap growing and faulting in) outlast the warm-up's time: it still makes
    # WARMUP_CALLS of them, and no more once its time is also spent.
    calls = []
    run.timing.warm_up(lambda: (calls.append(1), time.sleep(0.01)), 0.001)
    assert len(calls) == run.timing.WARMUP_CALLS


def _bench(*flags, cwd=None):
    return subprocess.run([sys.executable, "-m", "bench", "--device", "cpu", "--impls", "torch_transpose,copy,eager",
                           "--min-run-time", "0.01", "--small-rounds", "1", "--warmup", "0", *flags],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def test_a_users_own_layout_is_benchmarked_against_copy_and_eager(tmp_path):
    done = _bench("--shape", "64,11,513", "--dims", "2,0,1", "--dtype", "bf16", "--out-dir", str(tmp_path), "--name", "own")
    assert done.returncode == 0, done.stderr
    records = json.loads((tmp_path / "own.json").read_text())["records"]
    assert {r["impl"] for r in records} == {"torch_transpose", "copy", "eager"}
    assert {r["case"] for r in records} == {"bf16 64x11x513 (2,0,1)"}
    assert all(r["shape"] == [64, 11, 513] for r in records)


@pytest.mark.parametrize("flags, message", [
    (("--shape", "64,11", "--dims", "0,0"), "--dims: expected a permutation"),
    (("--shape", "64,x"), "--shape and --dims: expected comma-separated integers"),
    (("--shape", "64,11", "--dtype", "fp13"), "--dtype: expected one of"),
    (("--cases", "no case has this name"), "no case matches the selection"),
])
def test_bad_selections_are_errors_that_say_why(tmp_path, flags, message):
    done = _bench(*flags, "--out-dir", str(tmp_path))
    assert done.returncode != 0
    assert message in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())  # nothing written, nothing marked complete


def test_results_go_to_a_run_folder_unless_saved():
    args = run.parse_args(["--device", "cpu"])
    folder = run.default_out_dir(args, "cpu")
    assert folder.parent.name == "runs" and folder.name.endswith("-cpu")
    assert run.default_out_dir(run.parse_args(["--device", "cpu", "--save"]), "cpu").name == "results"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(folder / "cpu.json")], cwd=ROOT)
    assert ignored.returncode == 0, "bench/runs/ must be ignored by git"


def test_a_failing_case_is_reported_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    cases = [run.case_defs.Case("fp32 ok 40x30", "own", "fp32", (40, 30), ("permute", (1, 0))),
             run.case_defs.Case("fp32 broken", "own", "fp32", (40, 30), ("permute", (1, 0)),
                                make_view=lambda b: b[:1]),  # a view of the wrong shape: make_input fails
             run.case_defs.Case("fp32 ok 50x20", "own", "fp32", (50, 20), ("permute", (1, 0)))]
    monkeypatch.setattr(run, "select_cases", lambda args: cases)
    with pytest.raises(SystemExit) as stopped:
        run.main(["--device", "cpu", "--impls", "torch_transpose,copy", "--min-run-time", "0.01",
                  "--small-rounds", "1", "--warmup", "0", "--out-dir", str(tmp_path), "--name", "t"])
    assert stopped.value.code == 1
    data = json.loads((tmp_path / "t.json").read_text())
    assert {r["case"] for r in data["records"]} == {"fp32 ok 40x30", "fp32 ok 50x20"}
    assert data["meta"]["failed"] == ["fp32 broken"] and data["meta"]["complete"]
    assert "fp32 broken: failed" in capsys.readouterr().err
