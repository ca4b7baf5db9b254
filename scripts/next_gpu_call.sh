#!/usr/bin/env bash
# Session 67's fourth call, from the repository root on the device, with .devcarry/thr4.so (the
# module to land): which suite cases its half-vector threshold at 4 tiles per SM moves
# (kernels_of_cases.py, both suites, against call 2's listing from rule.so, which it prints),
# then make gpu-check's older-paths rerun (after test_import.py, as gpu_check.sh has no older-paths-only switch) (test_transpose + test_permute CUDA cases with the
# library's older routes forced), sharded, in the time left.
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
cp .devcarry/thr4.so torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
nvidia-smi --query-gpu=name --format=csv,noheader
for suite in default models; do
  timeout 150 python3 scripts/kernels_of_cases.py --suite $suite 2>&1 | grep -v "arn" > $OUT/kernels-$suite-thr4.txt &
done
wait
echo "kernels done at ${SECONDS}s"
OUT=$OUT/gpu-check BUILD=0 RUN_BENCH=0 SANITIZE=0 PYTEST_SHARDS=6 TEST_FILES=tests/test_import.py \
  timeout $((330 - SECONDS)) bash scripts/gpu_check.sh 2>&1 | tail -6
echo "total ${SECONDS}s"
