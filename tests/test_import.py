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


def test_build_info_names_versions_architectures_and_simd():
    import torch
    import torch_transpose as tt
    info = tt.build_info()
    assert info["version"] == tt.__version__
    assert info["torch_built"] == torch.__version__.split("+")[0]
    assert info["torch_running"] == torch.__version__
    assert info["cpu_simd"] in ("avx512", "avx2", "sse2")
    if tt.with_cuda:
        assert info["cuda_architectures"] and all(a.strip().isdigit() for a in info["cuda_architectures"].split(","))
        assert info["cuda_built"]


def test_python_m_prints_build_info_and_passes_the_self_check():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "torch_transpose"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "torch_built" in done.stdout and "cuda_architectures" in done.stdout
    assert "self-check: " in done.stdout and ", 0 failed" in done.stdout


def test_self_check_reports_a_wrong_result(monkeypatch):
    import torch
    import torch_transpose as tt
    from torch_transpose import _functions
    monkeypatch.setattr(_functions, "permute", lambda x, dims: torch.zeros_like(x.permute(dims).contiguous()))
    assert not all(ok for _, _, ok in tt.self_check(["cpu"]))
