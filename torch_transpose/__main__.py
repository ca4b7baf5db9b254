"""python -m torch_transpose: the build information and a self-check of a few layouts."""
import sys

from . import build_info, self_check


def main():
    for key, value in build_info().items():
        print(f"{key:20s} {value}")
    rows = self_check()
    for device, layout, ok in rows:
        print(f"self-check {device:5s} {layout:40s} {'ok' if ok else 'WRONG'}")
    failed = sum(1 for _, _, ok in rows if not ok)
    print(f"self-check: {len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


sys.exit(main())
