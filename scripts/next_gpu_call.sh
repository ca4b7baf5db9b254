#!/usr/bin/env bash
# The verification call of session 66's 1-byte threshold (realign window tiles of 64 rows below
# 7 tiles of 128 rows per SM, not 8), from the repository root on the device, with main's module
# built for sm_90 and carried as .devcarry/rule7.so. The kernels are SASS-identical to session
# 65's (only the host rule moved), so: the realign tests (the rule's by-kernel-name test
# included), an A/B by GPU time of the rule against 128 and 64 rows on the threshold's shapes and
# on four 2-byte probes (output rows 2 or 8 bytes off the grid, inputs on it: bench/NOTES.md v68),
# then the CUDA cases of test_transpose.py in the time left.
cp .devcarry/rule7.so torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout 90 python3 -m pytest tests/test_transpose.py -m cuda -q -p no:cacheprovider -k "realign or rows_off_the_vector_grid" 2>&1 | tail -2
A="int8 2049x2051,int8 5000x4097,int8 6000x4500,int8 6500x4500,int8 6000x5000,int8 4500x7000,int8 7000x4500"
B="bf16 50257x768,bf16 50252x768,bf16 64x1500x768,bf16 64x1501x768"
timeout 150 python3 -m bench.ab_gpu_time --shapes "$A,$B" --settings "" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=0" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=1" --rounds 2 --out $OUT/ab.md 2>&1 | grep -v "Warning\|warn" | tail -13
T=$((330 - SECONDS))
timeout $T python3 -m pytest tests/test_transpose.py -m cuda -v -p no:cacheprovider > $OUT/t-transpose.log 2>&1
echo "test_transpose rc=$? (124: stopped by the time limit): PASSED $(grep -c " PASSED" $OUT/t-transpose.log), FAILED $(grep -c " FAILED" $OUT/t-transpose.log), SKIPPED $(grep -c " SKIPPED" $OUT/t-transpose.log)"; grep -E "^FAILED|^ERROR" $OUT/t-transpose.log | head; tail -1 $OUT/t-transpose.log
echo "total ${SECONDS}s"
