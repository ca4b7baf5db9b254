"""The package imports on its own, in a fresh interpreter that has not imported torch first (as a
user's script may do): _C links against libtorch's shared libraries, which only torch loads."""
import subprocess
import sys

SCRIPT = """
import torch_transpose as tt
import torch
print(tt.transpose(torch.arange(6).view(2, 3)).tolist())
"""


def test_import_without_torch_first():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[[0, 3], [1, 4], [2, 5]]"
