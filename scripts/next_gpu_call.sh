#!/usr/bin/env bash
# The GPU call written for the next session (bench/NOTES.md v66), from the repository root on
# the device, with main's module as landed in session 65 built here for sm_90 and carried as
# .devcarry/landed.so (TORCH_CUDA_ARCH_LIST=9.0 python setup.py build_ext --inplace for Python
# 3.12, stripped of host debug info). Session 65 ran the 64-row realign tiles on an H100 only;
# this gives them H200 figures: the A/B of session 65's shapes, the 1-byte threshold between 4 and
# 8 tiles of 128 rows per SM (int8 6000x5000 at 7.3 read level or 0.015 down on the H100), the
# models suite's GPT-2 embedding (which the rule moved to 64-row tiles, untimed), then every
# CUDA test. The full suites and the sanitizer suite want a call of their own (make gpu-check).
cp .devcarry/landed.so torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv
# Tiles of 128 rows per SM on 132 SMs in brackets (1-byte tiles 128 x 256, 2-byte 128 x 128).
A="fp16 2049x2051,int8 2049x2051,bf16 4097x768,bf16 1025x8193,fp16 4097x4099,fp16 8191x8193,bf16 64x1500x768,fp16 12289x8193,fp16 8x4100x4096"
B="int8 4097x4095,int8 5000x4097,int8 6000x4500,int8 6000x5000,int8 7000x4500,int8 8191x4097,int8 8191x8193"
timeout 240 python3 -m bench.ab_gpu_time --shapes "$A,$B" --settings "" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=0" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=1" --rounds 2 --out $OUT/ab.md 2>&1 | grep -v "Warning\|warn" | tail -18
timeout 60 python3 -m bench.ab_gpu_time --suite models --cases "GPT-2 embedding" --settings "" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=0" --rounds 2 --out $OUT/ab-gpt2.md 2>&1 | grep -v "Warning\|warn" | tail -3
T=$((590 - SECONDS))
timeout $T python3 -m pytest tests/test_permute.py -m cuda -q -p no:cacheprovider > $OUT/t-permute.log 2>&1 &
timeout $T python3 -m pytest tests/test_transpose.py -m cuda -q -p no:cacheprovider > $OUT/t-transpose.log 2>&1 &
timeout $T python3 -m pytest tests -m cuda -q -p no:cacheprovider --ignore=tests/test_permute.py --ignore=tests/test_transpose.py > $OUT/t-rest.log 2>&1 &
wait
for f in $OUT/t-*.log; do echo "== $f"; tail -2 "$f"; done
echo "total ${SECONDS}s"
