"""scripts/pytest_shards.py, the sharded pytest runner of the GPU calls: its sums must be the
cases' own counts, and a failure in any shard must fail the run; its split for gpu_check.sh's
compute-sanitizer shards must keep their special shards."""
import importlib.util
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "scripts", "pytest_shards.py")

CASES = '''
import pytest

@pytest.mark.parametrize("n", range(7))
def test_numbers(n):
    assert n != {fail}

@pytest.mark.skip(reason="counted as skipped, not passed")
def test_skipped():
    pass
'''


def run_shards(tmp_path, shards, fail):
    (tmp_path / "test_cases.py").write_text(CASES.format(fail=fail))
    done = subprocess.run([sys.executable, SCRIPT, str(shards), "--log-dir", str(tmp_path / "logs"), "--",
                           "test_cases.py"], cwd=tmp_path, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("shards", [1, 3, 20])
def test_sums_are_the_cases_counts(tmp_path, shards):
    rc, out = run_shards(tmp_path, shards, fail=-1)
    assert rc == 0, out
    assert "all shards: 7 passed, 1 skipped" in out, out
    used = min(shards, 8)
    assert f"8 cases in {used} shard(s)" in out, out
    assert len(os.listdir(tmp_path / "logs")) == used


def test_a_failing_case_fails_the_run(tmp_path):
    rc, out = run_shards(tmp_path, 3, fail=4)
    assert rc == 1, out
    assert "6 passed" in out and "1 failed" in out and "(FAILED)" in out, out
    assert "FAILED test_cases.py::test_numbers[4]" in out, out


def test_shards_must_be_positive(tmp_path):
    rc, out = run_shards(tmp_path, 0, fail=-1)
    assert rc == 2 and "shards: expected at least 1, got 0" in out, out


def test_a_shard_past_the_timeout_fails_the_run(tmp_path):
    (tmp_path / "test_slow.py").write_text("import time\n\ndef test_sleeps():\n    time.sleep(60)\n")
    done = subprocess.run([sys.executable, SCRIPT, "1", "--timeout", "3", "--", "test_slow.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=50)
    assert done.returncode == 1 and "stopped after --timeout 3 s" in done.stdout, done.stdout + done.stderr


def load_script():
    spec = importlib.util.spec_from_file_location("pytest_shards", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sanitizer_deal_keeps_its_special_shards():
    ids = ["tests/test_concurrency.py::test_threads", "tests/test_a.py::test_1", "tests/test_huge.py::test_big",
           "tests/test_a.py::test_cuda_graph_capture", "tests/test_a.py::test_2", "tests/test_a.py::test_3"]
    assert load_script().deal_for_sanitizer(ids, 3) == {
        "0": ["tests/test_huge.py::test_big"],
        "graphs": ["tests/test_a.py::test_cuda_graph_capture"],
        "1": ["tests/test_a.py::test_2", "tests/test_concurrency.py::test_threads"],  # concurrency last
        "2": ["tests/test_a.py::test_1", "tests/test_a.py::test_3"]}
    assert load_script().deal_for_sanitizer(ids, 1) == {
        "0": ["tests/test_a.py::test_1", "tests/test_huge.py::test_big", "tests/test_a.py::test_2",
              "tests/test_a.py::test_3", "tests/test_concurrency.py::test_threads"],
        "graphs": ["tests/test_a.py::test_cuda_graph_capture"]}


def test_sanitizer_split_writes_the_case_lists(tmp_path):
    (tmp_path / "test_cases.py").write_text(CASES.format(fail=-1))
    done = subprocess.run([sys.executable, SCRIPT, "3", "--sanitizer-split", str(tmp_path / "split"), "--",
                           "test_cases.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    split = tmp_path / "split"
    assert sorted(os.listdir(split)) == ["all-cases", "cases.1", "cases.2"]
    assert len((split / "all-cases").read_text().splitlines()) == 8
    shards = [(split / f"cases.{k}").read_text().splitlines() for k in (1, 2)]
    assert sorted(shards[0] + shards[1]) == sorted((split / "all-cases").read_text().splitlines())
