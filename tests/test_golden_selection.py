"""The kernel selection is a contract: every layout in tests/data/golden_selection.json still gets
the same CUDA launches (kernel, template arguments, grid) on a 132-SM device. Read by a dry run,
so this runs wherever the CUDA kernels were compiled, GPU or not (tests/golden_selection.py says
how to rewrite the file when a change means to move a layout)."""
import json

import pytest

import torch_transpose
from golden_selection import GOLDEN, launches_of, suite_layouts, layout_key

pytestmark = pytest.mark.skipif(not torch_transpose.with_cuda, reason="needs a build with the CUDA kernels")


def _golden():
    return json.loads(GOLDEN.read_text())


def test_every_golden_layout_keeps_its_kernel():
    golden = _golden()
    moved = []
    with torch_transpose.kernel_switches(""):  # the built-in rules, whatever the environment says
        now_of = {key: launches_of(entry["layout"]) for key, entry in golden.items()}
    for key, entry in golden.items():
        now = now_of[key]
        if now != entry["launches"]:
            moved.append(f"{key}\n    was {entry['launches']}\n    now {now}")
    assert not moved, f"{len(moved)} of {len(golden)} layouts changed kernel:\n" + "\n".join(moved[:20])


def test_golden_file_covers_both_suites():
    golden = _golden()
    missing = [layout_key(*l) for l in suite_layouts() if layout_key(*l) not in golden]
    assert not missing, missing[:5]
    # The test suite's layouts too: far more than the suites' 80-odd.
    assert len(golden) > 500
