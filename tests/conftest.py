import os
import subprocess
from pathlib import Path

# Inductor (the AOTInductor tests and C++ fixtures) compiles with $CXX, read when its config is
# first imported, so this comes before torch. On our GPU machine the default CXX builds code that
# crashes inside the process (README, "Notes for the GPU machine"); scripts/test_cxx.sh picks the
# compiler, `make test` and scripts/gpu_check.sh pass its choice, and a bare `pytest` takes the
# same choice here .
_test_cxx = subprocess.run(["bash", str(Path(__file__).resolve().parent.parent / "scripts" / "test_cxx.sh")],
                           capture_output=True, text=True, check=False).stdout.strip()
if _test_cxx:
    os.environ["CXX"] = _test_cxx

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import torch_transpose  # noqa: F401,E402  (registers the operators for every test module)

# Hypothesis profiles: "ci" is bounded for the 2-core CI machine, "long" is the pre-release
# fuzz run (at least 10,000 cases per op per device; see tests/test_fuzz.py).
# The `device` fixture is an immutable string, so sharing it across generated inputs is safe.
settings.register_profile("ci", max_examples=150, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("long", max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# For compute-sanitizer runs only (scripts/gpu_check.sh sets it for its CUDA-graph shard).
# Under the tools, Inductor's debug check of its CUDA-graph pool (slow_path_cudagraph_asserts,
# on by default) finds one of Inductor's own intermediates still allocated after the warm-up
# run and raises, while the tools report no error. Without the tools the check passes, so
# ordinary runs keep it on. Seen on the H200, torch 2.11, 2026-11-30; docs/performance.md has more.
if os.environ.get("TT_TESTS_NO_CUDAGRAPH_POOL_CHECK") == "1":
    import torch._inductor.config as inductor_config
    inductor_config.triton.slow_path_cudagraph_asserts = False


def _devices():
    params = [pytest.param("cpu", id="cpu")]
    # CUDA cases always exist; without a GPU they are reported as skipped, never as passed.
    params.append(pytest.param("cuda", id="cuda", marks=[
        pytest.mark.cuda,
        pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    ]))
    return params


DEVICES = _devices()


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


# --record-layouts PATH: every layout the ops move during the run, written as JSON lines (the
# golden selection test's layouts: tests/golden_selection.py).
def pytest_addoption(parser):
    parser.addoption("--record-layouts", default=None, help="write every layout the ops move to this file")


def pytest_sessionstart(session):
    if session.config.getoption("--record-layouts"):
        torch_transpose._C.record_layouts(True)


def pytest_sessionfinish(session):
    path = session.config.getoption("--record-layouts")
    if path:
        import json
        torch_transpose._C.record_layouts(False)
        seen = {json.dumps(layout) for layout in torch_transpose._C.take_recorded_layouts()}
        Path(path).write_text("".join(line + "\n" for line in sorted(seen)))
