#!/usr/bin/env bash
# The package as a user gets it: an sdist, a wheel built from that sdist against this Python's
# torch (no build isolation, as the README says), installed into a fresh venv with the same torch,
# then imported from outside the tree with its build info and self-check. Takes a full build
# (CUDA kernels too where nvcc is found), so it is not part of make test.
#   scripts/check_package.sh [python]     (default: the development venv's)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
[[ $python == /* ]] || python=$PWD/$python  # absolute, but not resolved: a venv's python is a link
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# From outside the tree: its build/ folder would hide the build package from python -m.
(cd "$work" && "$python" -m build --sdist --no-isolation --outdir "$work/dist" "$root") > "$work/sdist.log" 2>&1 ||
  { tail -30 "$work/sdist.log"; exit 1; }
sdist=$(ls "$work"/dist/*.tar.gz)
echo "sdist: $(basename "$sdist"), $(tar -tzf "$sdist" | wc -l) files"
tar -xzf "$sdist" -C "$work"
(cd "$work"/torch_transpose-*/ && MAX_JOBS=$(nproc) "$python" -m pip wheel -q --no-build-isolation --no-deps -w "$work/dist" .)
wheel=$(ls "$work"/dist/*.whl)
echo "wheel: $(basename "$wheel"), requires $(unzip -p "$wheel" '*/METADATA' | grep '^Requires-Dist: torch')"

torch_version=$("$python" -c "import torch; print(torch.__version__.split('+')[0])")
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "torch==$torch_version" "$wheel"
cd "$work"
"$work/venv/bin/python" -m torch_transpose
