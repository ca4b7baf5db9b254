#!/usr/bin/env bash
# The last GPU call of session 67, kept as the pattern for a call's script (results/
# h200-gpu-check-summary.txt lists the session's five): the route tests that failed in
# gpu_check.sh's older-paths rerun, mended, under the same switches, on a carried module
# (.devcarry/thr4.so: main as landed, built for sm_90 and Python 3.12 on the CPU machine).
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
cp .devcarry/thr4.so torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
export TORCH_TRANSPOSE_DIRECT=0 TORCH_TRANSPOSE_NARROW_PAIRS=1 TORCH_TRANSPOSE_VECTOR_ROWS=0 \
  TORCH_TRANSPOSE_ONE_BLOCK_PER_ITEM=0 TORCH_TRANSPOSE_TILE_STREAMS=4 TORCH_TRANSPOSE_BOX_HALF_STORES=0 \
  TORCH_TRANSPOSE_COMPACT_TILE=1 TORCH_TRANSPOSE_NARROW_BLOCK=1 TORCH_TRANSPOSE_INTERLEAVE=0 \
  TORCH_TRANSPOSE_TMA_TILE=0 TORCH_TRANSPOSE_WINDOW_HALF_VECTORS=0 TORCH_TRANSPOSE_REALIGN_WINDOW=0 \
  TORCH_TRANSPOSE_LEAN_TILE=0 TORCH_TRANSPOSE_LEAN_NARROW=0 TORCH_TRANSPOSE_LEAN_ROWS=0 \
  TORCH_TRANSPOSE_LEAN_WINDOW=0 TORCH_TRANSPOSE_GATHER_TILE=0 TORCH_TRANSPOSE_L2_EVICT_LAST=0
timeout 100 python3 -m pytest tests/test_transpose.py tests/test_permute.py -m cuda -q -p no:cacheprovider \
  -k "realign_tile_rows or half_vector_gather_tiles" 2>&1 | tail -3
