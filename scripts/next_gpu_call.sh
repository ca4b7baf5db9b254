#!/usr/bin/env bash
# Session 67's first call: the tall-aligned rule of branch exp/realign-tall-aligned (2-byte
# realign plans with input rows of whole 16-byte vectors keep 128 rows from 10 tiles per SM when
# their blocks in flight cover fewer than 9 bands of tiles; bench/NOTES.md v69), from the
# repository root on the device, with the branch's module built for sm_90 and carried as
# .devcarry/tall.so. Main's rule is SMALL_TILES=1 for every 2-byte shape below (all under 40
# tiles per SM), so one module gives both: the rule ("as is") against 128 and 64 rows forced.
# Shapes: F, the ones the rule was fitted to (session 66); P, predictions it makes (128: tall,
# 64: batched or under 10 per SM); C, controls; then 1-byte shapes between 4 and 7 tiles per SM
# (the 1-byte threshold). Each A/B writes its rounds as they finish, so a time limit keeps them.
cp .devcarry/tall.so torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
F="bf16 50257x768,bf16 32001x768,bf16 50257x1024,bf16 16385x1536,bf16 8193x4096,bf16 64x1501x768,bf16 64x1500x768"
P="bf16 40001x1024,bf16 12001x2048,bf16 30001x1536,bf16 24577x2048,bf16 4x8001x768,bf16 10001x2048,bf16 16x2001x768,bf16 8x6001x1024"
C="fp16 2049x2051,bf16 20001x768"
ONE="int8 4097x4095,int8 4500x4500,int8 5000x4097,int8 4097x5000,int8 5500x4500"
S=("" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=0" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=1")
timeout 230 python3 -m bench.ab_gpu_time --shapes "$F,$P,$C" --settings "${S[@]}" --rounds 2 \
  --out $OUT/ab-tall.md 2>&1 | grep -v "Warning\|warn" | tail -19
echo "A/B 2-byte done at ${SECONDS}s"
timeout 110 python3 -m bench.ab_gpu_time --shapes "$ONE" --settings "${S[@]}" --rounds 2 \
  --out $OUT/ab-one-byte.md 2>&1 | grep -v "Warning\|warn" | tail -7
echo "A/B 1-byte done at ${SECONDS}s"
timeout 90 python3 -m pytest tests/test_transpose.py -m cuda -q -p no:cacheprovider -k "realign_tile_rows or realign_small_tiles" 2>&1 | tail -3
echo "rule tests done at ${SECONDS}s"
PROBE_TIMEOUT=$((560 - SECONDS)) bash scripts/half_vector_waves_probe.sh
echo "total ${SECONDS}s"
