"""The examples run as a user would run them, and say they matched."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "python"


def run_example(name, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_compiled_model_example_matches_eager():
    done = run_example("compiled_model.py")
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not available")
def test_tensor_parallel_attention_example_on_two_gloo_ranks():
    done = run_example("tensor_parallel_attention.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "on 2 cpu rank(s)" in done.stdout, done.stdout


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_tensor_parallel_attention_example_on_every_gpu_with_nccl():
    done = run_example("tensor_parallel_attention.py", "--device", "cuda")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"on {torch.cuda.device_count()} cuda rank(s)" in done.stdout, done.stdout
