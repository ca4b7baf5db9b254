#!/usr/bin/env bash
# Probe for the GPU machine (not the library, not the suite): host, GPU and wall time per call of
# two builds of the library, in alternating processes, for changes that only move host time (the
# small C = 3 layouts are host-bound there: bench/NOTES.md v32, v39, v40).
#
#     bash scripts/host_ab.sh OLD_ROOT [ROUNDS] [CASES] [ROUTES]   # on the GPU machine
#
# OLD_ROOT holds the other build's package (OLD_ROOT/torch_transpose/, its Python files and
# _C*.so); the working tree's build is "new". Each round runs bench.host_overhead once per build,
# old first, so drift between rounds hits both alike. python3 -P keeps the working directory off
# sys.path, so PYTHONPATH decides which package is imported (each process prints which).
set -uo pipefail
cd "$(dirname "$0")/.."
old_root=$1
rounds=${2:-3}
cases=${3:-"bf16 NHWC->NCHW 32x224x224x3,bf16 NCHW->NHWC 32x3x224x224"}
routes=${4:-"ours (unboxed),ours out=,copy"}
for round in $(seq 1 "$rounds"); do
  for build in old new; do
    root=$PWD
    [ "$build" = old ] && root=$old_root
    echo "## round $round, $build build ($root)"
    PYTHONPATH="$root:$PWD" python3 -P -c 'import sys, torch_transpose as t; print("torch_transpose from", t.__file__)'
    PYTHONPATH="$root:$PWD" python3 -P -m bench.host_overhead --cases "$cases" --routes "$routes" --calls 200
  done
done
