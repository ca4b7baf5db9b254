#!/usr/bin/env bash
# make test TORCH_VERSION=2.15.0 (or any make target): the target against another torch than the
# pinned one, in a venv of its own (.venv-torch<version>, requirements-dev.txt with that torch)
# and a copy of the tree (build/torch<version>/tree). A copy, because the extension builds in
# place and one built for one torch does not load in another; the copy keeps its build between
# runs, so a rerun rebuilds only what changed.
#   scripts/other_torch.sh 2.15.0 test
# The copy builds the CPU kernels only: the pinned torch's build already proves the CUDA code
# compiles, and this saves CI the time of a second CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1
shift
venv=$PWD/.venv-torch$version
tree=$PWD/build/torch$version/tree

requirements=$(sed "s/^torch==.*/torch==$version/" requirements-dev.txt)
if [[ ! -f $venv/.installed ]] || [[ $(cat "$venv/.installed") != "$requirements" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r <(echo "$requirements")
  echo "$requirements" > "$venv/.installed"
fi

# The tracked and untracked-but-not-ignored files, afresh, with their times (so ninja and CMake
# rebuild only what changed); the copy's build folder and extension stay.
mkdir -p "$tree"
find "$tree" -type f ! -path "$tree/build/*" ! -name '_C*.so' -delete
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$tree"

echo "== torch $version: make $* in $tree"
export TORCH_TRANSPOSE_CUDA=0
make -C "$tree" TORCH_VERSION= PYTHON="$venv/bin/python" VENV_STAMP= CMAKE_ARGS=-DTORCH_TRANSPOSE_WITH_CUDA=OFF "$@"
