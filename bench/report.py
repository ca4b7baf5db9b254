"""Writing results: a printed table, JSON (meta + records), CSV, Markdown and a PNG chart."""
import csv
import json
import math

COLUMNS = ["torch_transpose", "copy", "view_copy", "eager", "compile", "triton", "cublas"]


def by_case(records):
    cases = {}
    for r in records:
        cases.setdefault(r["case"], {})[r["impl"]] = r
    return cases


def summary_rows(records):
    rows = []
    for case, impls in by_case(records).items():
        ours = impls.get("torch_transpose")
        if ours is None:
            continue
        anchors = [impls[a]["gbps"] for a in ("eager", "compile", "triton", "cublas") if a in impls]
        best = max(anchors) if anchors else float("nan")
        row = {"case": case, "MB": ours["bytes"] / 1e6}
        for impl in COLUMNS:
            row[impl] = impls[impl]["gbps"] if impl in impls else None
        row["ratio_to_copy"] = ours["ratio_to_copy"]
        row["ceiling"] = ours.get("ceiling_gbps")
        row["ratio_to_ceiling"] = ours["gbps"] / ours["ceiling_gbps"] if ours.get("ceiling_gbps") else None
        row["vs_best_anchor"] = ours["gbps"] / best if anchors else None
        rows.append(row)
    return rows


def _fmt(v, digits=0):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.{digits}f}"


def markdown_table(records):
    header = ["case", "MB", *COLUMNS, "ours/copy", "ours/ceiling", "ours/best anchor"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in summary_rows(records):
        cells = [row["case"], _fmt(row["MB"])] + [_fmt(row[c]) for c in COLUMNS]
        cells += [_fmt(row["ratio_to_copy"], 3), _fmt(row["ratio_to_ceiling"], 3), _fmt(row["vs_best_anchor"], 2)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def write_all(records, meta, out_dir, stem):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.json").write_text(json.dumps({"meta": meta, "records": records}, indent=1))
    keys = ["case", "group", "dtype", "shape", "bytes", "impl", "mode", "median_ms", "gbps", "ratio_to_copy"]
    with open(out_dir / f"{stem}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        writer.writeheader()
        for r in records:
            writer.writerow({**r, "shape": "x".join(map(str, r["shape"]))})
    table = markdown_table(records)
    meta_lines = "\n".join(f"- {k}: {v}" for k, v in meta.items())
    (out_dir / f"{stem}.md").write_text(f"# Benchmark results ({stem})\n\n{meta_lines}\n\nGB/s = 2 x bytes / median time "
                                        f"(bytes read + written).\n\n{table}\n")
    write_chart(records, out_dir / f"{stem}.png", meta)
    return table


def write_chart(records, path, meta):
    """Bandwidth as a fraction of the same-run copy, one row per case, one bar per implementation."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    table = by_case(records)
    cases = [c for c, impls in table.items() if "torch_transpose" in impls and "copy" in impls]
    impls = [i for i in ("torch_transpose", "eager", "compile", "triton", "cublas") if any(r["impl"] == i for r in records)]
    height = 0.8 / max(1, len(impls))
    fig, ax = plt.subplots(figsize=(10, 0.3 * len(cases) + 1.2))
    for k, impl in enumerate(impls):
        ys = [i + k * height for i in range(len(cases))]
        xs = [table[c][impl]["ratio_to_copy"] if impl in table[c] else 0 for c in cases]
        ax.barh(ys, xs, height=height, label=impl)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(0.95, color="grey", linewidth=0.6, linestyle="--")
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(cases))])
    ax.set_yticklabels(cases, fontsize=6)
    ax.set_ylim(len(cases), -0.5)
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("bandwidth / same-run device copy of the same bytes (dashed: 0.95)")
    ax.set_title(f"{meta.get('device', '')}, torch {meta.get('torch', '')}, {meta.get('date', '')}", fontsize=8)
    ax.legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def replot(json_path):
    """python -m bench.report RESULTS.json: redraw the chart and tables from saved results."""
    import json
    from pathlib import Path
    data = json.loads(Path(json_path).read_text())
    path = Path(json_path)
    write_all(data["records"], data["meta"], path.parent, path.stem)


if __name__ == "__main__":
    import sys
    replot(sys.argv[1])
