#!/usr/bin/env bash
# Session 67's third call, from the repository root on the device. Call 2's one round suggested
# that 2-byte plans of 8-byte vectors whose output rows alone are off the 16-byte grid gain from
# realign window tiles below the 7 tiles per SM of .devcarry/rule.so (bf16 12292x768, 4.4 tiles
# per SM: 1.02-1.03 -> 1.08). 1. An A/B of realign windows forced on and off between 2.9 and 6
# tiles per SM, three rounds (on rule.so; the forced settings do not depend on the threshold).
# 2. Every test file's CUDA cases, sharded, on .devcarry/thr4.so (the threshold at 4 tiles per
# SM, its by-kernel-name test moved to 12292x768 and 8196x768), so that either module can land.
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
SO=torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
cp .devcarry/rule.so $SO
# Tiles of 128 rows per SM on 132 SMs: 2.95, 4.0, 4.1, 4.4, 4.4, 5.9, 5.9.
S="bf16 8196x768,fp16 4100x2048,fp16 2052x4096,bf16 12292x768,bf16 8x1500x768,bf16 16388x768,fp16 6148x2048"
timeout 170 python3 -m bench.ab_gpu_time --shapes "$S" --settings "TORCH_TRANSPOSE_REALIGN_WINDOW=1" \
  "TORCH_TRANSPOSE_REALIGN_WINDOW=0" --rounds 3 --out $OUT/ab-half-vector-below-7.md 2>&1 | grep -v "Warning\|warn" | tail -9
echo "A/B done at ${SECONDS}s"
cp .devcarry/thr4.so $SO
CXX=$(bash scripts/test_cxx.sh) python3 scripts/pytest_shards.py 6 --timeout $((575 - SECONDS)) \
  --log-dir $OUT/shards -- tests -m cuda > $OUT/tests.txt 2>&1
echo "tests rc=$?"; tail -12 $OUT/tests.txt
echo "total ${SECONDS}s"
