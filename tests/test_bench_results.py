"""The committed benchmark results: the JSON layout the benchmark writes, figures that agree with
themselves, and every figure of the README's performance section taken from the committed H200
run (not from an older one).

These read files only, so they run everywhere (CI included)."""
import json
import math
import re
from pathlib import Path

import pytest

from bench.report import by_case, geomean, summary_rows

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


def readme_performance_section():
    """The README's performance section and its H200 table, each row as its printed cells."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Performance"):]
    section = section[:section.index("\n## ", 1)]
    header = "| case | ours GB/s | ours / copy | eager | torch.compile | Triton tuned | cuBLAS |"
    rows = []
    for line in section[section.index(header):].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return section, rows


def printed_row(impls):
    """A case as the README prints it: GB/s to the unit, ours over the copy ceiling to 3 places
    (the strided case says "of ceiling": its ceiling is the bytes it can use, not a full copy)."""
    ours = impls["torch_transpose"]
    ratio = f"{ours['gbps'] / ours['ceiling_gbps']:.3f}"
    def gbps(name):
        return f"{impls[name]['gbps']:.0f}" if name in impls else "-"
    return [gbps("torch_transpose"), ratio, gbps("eager"), gbps("compile"), gbps("triton"), gbps("cublas")]


def test_readme_table_comes_from_the_committed_h200_run():
    data = load(RESULTS / "h200.json")
    section, rows = readme_performance_section()
    assert len(rows) >= 20, rows
    date = data["meta"]["date"]
    assert re.search(r"## Performance \(NVIDIA H200, [^)]*" + re.escape(date) + r"\)", section), (
        f"the README's performance heading should carry the committed run's date {date}")
    printed = [printed_row(impls) for impls in by_case(data["records"]).values() if "torch_transpose" in impls]
    for label, ours, ratio, *anchors in rows:
        cells = [ours, ratio.replace(" of ceiling", ""), *anchors]
        assert cells in printed, f"README row {label!r} {cells} matches no case of h200.json"


def test_readme_performance_text_figures_come_from_the_committed_h200_run():
    data = load(RESULTS / "h200.json")
    section, _ = readme_performance_section()
    records = data["records"]
    # "(dst.copy_(src), 4.09-4.28 TB/s on this run's cases of 512 MB or more)"
    copies = [r["gbps"] for r in records if r["impl"] == "copy" and r["bytes"] >= 512e6]
    assert f"{min(copies) / 1000:.2f}-{max(copies) / 1000:.2f} TB/s on this run's cases of 512 MB or more" in section
    # "Every case of at least 64 MB runs at 0.95 of copy or more (geometric mean 0.989) and ahead
    # of every other implementation; two cases are ties at the copy ceiling."
    big = [r for r in records if r["impl"] == "torch_transpose" and r["bytes"] >= 64e6 and r.get("ceiling_gbps")]
    ratios = [r["gbps"] / r["ceiling_gbps"] for r in big]
    assert min(ratios) >= 0.95
    assert f"(geometric mean {geomean(ratios):.3f})" in section
    rows = {row["case"]: row for row in summary_rows(records)}
    ahead_by = sorted(rows[r["case"]]["vs_best_anchor"] for r in big)
    assert ahead_by[0] >= 1.0, ahead_by[:3]
    ties = sum(1 for v in ahead_by if v < 1.001)
    assert f"{['no', 'one', 'two', 'three'][ties]} cases are ties at the copy ceiling" in section, ties


def test_readme_random_layout_figures_come_from_the_committed_random_run():
    data = load(RESULTS / "random-h100-seed11.json")
    cases = by_case(data["records"])
    def ratio(impls, other):
        return impls["torch_transpose"]["gbps"] / impls[other]["gbps"] if other in impls else None
    to_copy = [ratio(impls, "copy") for impls in cases.values()]
    below_eager = sum(1 for impls in cases.values() if (ratio(impls, "eager") or 1) < 0.98)
    below_compile = sum(1 for impls in cases.values() if (ratio(impls, "compile") or 1) < 0.95)
    text = " ".join((ROOT / "README.md").read_text().split())
    assert "H100" in data["meta"]["device"]
    assert (f"on {len(cases)} layouts drawn at random, an H100 measured a geomean of {geomean(to_copy):.3f} of copy, "
            f"{below_eager} layouts slower than eager and {below_compile} slower than torch.compile") in text
