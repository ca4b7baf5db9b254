#!/usr/bin/env bash
# The last GPU call of session 67, kept as the pattern for a call's script (results/
# h200-gpu-check-summary.txt lists the session's five): the route tests that failed in
# gpu_check.sh's older-paths rerun, mended, under the same switches, on a carried module
# (.devcarry/thr4.so: main as landed, built for sm_90 and Python 3.12 on the CPU machine).
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
cp .devcarry/thr4.so torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
source scripts/older_paths.sh
export "${older_paths[@]}"
timeout 100 python3 -m pytest tests/test_transpose.py tests/test_permute.py -m cuda -q -p no:cacheprovider \
  -k "realign_tile_rows or half_vector_gather_tiles" 2>&1 | tail -3
