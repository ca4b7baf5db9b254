"""The golden kernel selection: which CUDA kernel, with which template arguments and grid, every
layout of the benchmark suites and of the test suite gets on a 132-SM device of compute
capability 9.0 (the H100 and the H200).

The selection is read by a dry run (``torch_transpose.kernel_launches``), so no GPU is needed.
tests/test_golden_selection.py checks the current selection against tests/data/golden_selection.json.
A change that means to move a layout to another kernel rewrites the file and says so in its
commit:

    python -m pytest tests -m "not slow" --record-layouts /tmp/test_layouts.jsonl
    python tests/golden_selection.py --test-layouts /tmp/test_layouts.jsonl --write
"""
import argparse
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "data" / "golden_selection.json"
SM_COUNT = 132
_BYTES_TO_DTYPE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.complex128}


def _span(sizes, strides):
    if any(s == 0 for s in sizes):
        return 0
    return sum((s - 1) * st for s, st in zip(sizes, strides)) + 1


def layout_key(sizes, in_strides, out_strides, element_bytes, in_offset_bytes, out_offset_bytes):
    """One line naming a layout: result-dim order, element strides, byte offsets into storage."""
    return (f"{element_bytes}B sizes={list(sizes)} in={list(in_strides)}+{in_offset_bytes} "
            f"out={list(out_strides)}+{out_offset_bytes}")


def _meta_view(sizes, strides, element_bytes, offset_bytes):
    dtype = _BYTES_TO_DTYPE[element_bytes]
    offset = offset_bytes // element_bytes
    base = torch.empty(offset + _span(sizes, strides), dtype=dtype, device="meta")
    return base.as_strided(sizes, strides, offset)


def launches_of(layout):
    """The launches a layout gets on the described device, as 'kernel grid=.. threads=.. smem=..'
    ('error: Type' for the layouts of the error tests)."""
    import torch_transpose
    sizes, in_strides, out_strides, element_bytes, in_offset, out_offset = layout
    x = _meta_view(sizes, in_strides, element_bytes, in_offset)
    out = _meta_view(sizes, out_strides, element_bytes, out_offset)
    try:
        launches = torch_transpose.kernel_launches(x, list(range(len(sizes))), out, sm_count=SM_COUNT)
    except (RuntimeError, ValueError, IndexError) as e:
        return [f"error: {type(e).__name__}"]
    return [f"{l['kernel']} grid={list(l['grid'])} threads={l['threads']} smem={l['smem']}" for l in launches]


def suite_layouts():
    """Every layout of the default and models suites, as the op layer sees it."""
    sys.path.insert(0, str(ROOT))
    from bench.cases import DTYPES, suite
    layouts = []
    for which in ("default", "models"):
        for case in suite("cuda", which):
            shape = case.base_shape or case.shape
            base = torch.empty(shape, dtype=DTYPES[case.dtype], device="meta")
            x = case.make_view(base) if case.make_view else base
            if case.op[0] == "transpose":
                dims = list(range(x.dim()))
                d0, d1 = (d % x.dim() for d in case.op[1:])
                dims[d0], dims[d1] = dims[d1], dims[d0]
            else:
                dims = list(case.op[1])
            sizes = [x.size(d) for d in dims]
            out_strides = torch.empty(sizes, device="meta").stride()
            layouts.append((sizes, [x.stride(d) for d in dims], list(out_strides), x.element_size(),
                            x.storage_offset() * x.element_size(), 0))
    return layouts


def collect(test_layouts_path=None):
    layouts = suite_layouts()
    if test_layouts_path:
        layouts += [tuple(json.loads(line)) for line in Path(test_layouts_path).read_text().splitlines() if line]
    golden = {}
    for layout in layouts:
        golden[layout_key(*layout)] = {"layout": list(layout), "launches": launches_of(layout)}
    return dict(sorted(golden.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--test-layouts", help="JSON lines written by pytest --record-layouts")
    parser.add_argument("--write", action="store_true", help=f"rewrite {GOLDEN.relative_to(ROOT)}")
    args = parser.parse_args()
    golden = collect(args.test_layouts)
    if args.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(golden, indent=0, sort_keys=True) + "\n")
    print(f"{len(golden)} layouts")


if __name__ == "__main__":
    main()
