"""The committed benchmark results: the JSON layout issue 3 asks for, figures that agree with
themselves, and a README table taken from the committed H200 run (not from an older one).

These read files only, so they run everywhere (CI included)."""
import json
import math
import re
from pathlib import Path

import pytest

from bench.report import by_case

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
RESULT_FILES = sorted(RESULTS.glob("*.json"))
META_KEYS = {"command", "date", "device", "torch"}
RECORD_KEYS = {"case", "dtype", "shape", "bytes", "impl", "median_ms", "gbps", "ratio_to_copy"}
IMPLS = {"torch_transpose", "copy", "view_copy", "eager", "compile", "triton", "cublas"}


def load(path):
    return json.loads(path.read_text())


def test_result_files_exist():
    names = {p.name for p in RESULT_FILES}
    assert {"h200.json", "h200-models.json", "cpu.json"} <= names, names


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda p: p.name)
def test_layout_and_arithmetic(path):
    data = load(path)
    assert META_KEYS <= set(data["meta"]), f"{path.name}: meta lacks {META_KEYS - set(data['meta'])}"
    assert data["meta"].get("complete") is True, f"{path.name}: an interrupted run"
    records = data["records"]
    assert records, path.name
    copy_gbps = {r["case"]: r["gbps"] for r in records if r["impl"] == "copy"}
    for r in records:
        where = f"{path.name}: {r.get('case')} / {r.get('impl')}"
        assert RECORD_KEYS <= set(r), f"{where}: lacks {RECORD_KEYS - set(r)}"
        assert r["impl"] in IMPLS, where
        # bytes are read + written: twice the tensor's bytes (a strided view's used bytes).
        assert r["bytes"] > 0 and r["median_ms"] > 0, where
        assert math.isclose(r["gbps"], r["bytes"] / (r["median_ms"] * 1e-3) / 1e9, rel_tol=1e-6), where
        if r["case"] in copy_gbps:
            assert math.isclose(r["ratio_to_copy"], r["gbps"] / copy_gbps[r["case"]], rel_tol=1e-6), where


def test_h200_run_is_an_h200_run_with_every_anchor():
    data = load(RESULTS / "h200.json")
    assert "H200" in data["meta"]["device"], data["meta"]["device"]
    impls = {r["impl"] for r in data["records"]}
    assert {"torch_transpose", "copy", "eager", "compile", "triton", "cublas"} <= impls, impls


def readme_performance_rows():
    """The README's H200 table: (label, ours, eager, compile) per row, as printed."""
    text = (ROOT / "README.md").read_text()
    header = "| case | ours GB/s | ours / copy | eager | torch.compile | Triton tuned | cuBLAS |"
    lines = text[text.index(header):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((cells[0], cells[1], cells[3], cells[4]))
    return text, rows


def test_readme_table_comes_from_the_committed_h200_run():
    data = load(RESULTS / "h200.json")
    text, rows = readme_performance_rows()
    assert len(rows) >= 20, rows
    date = data["meta"]["date"]
    assert re.search(r"## Performance \(NVIDIA H200, [^)]*" + re.escape(date) + r"\)", text), (
        f"the README's performance heading should carry the committed run's date {date}")
    def printed(impls, name):  # as the README prints GB/s
        return f"{impls[name]['gbps']:.0f}" if name in impls else "-"

    triples = {(printed(impls, "torch_transpose"), printed(impls, "eager"), printed(impls, "compile"))
               for impls in by_case(data["records"]).values()}
    for label, ours, eager, compiled in rows:
        assert (ours, eager, compiled) in triples, (
            f"README row {label!r} ({ours}, {eager}, {compiled} GB/s) matches no case of h200.json")
