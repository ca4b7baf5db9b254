#!/usr/bin/env bash
# Session 67's second call, from the repository root on the device, with the branch's final
# module (.devcarry/rule.so: tall matrices keep 128-row realign tiles below 6 bands in flight;
# 2-byte plans of 8-byte vectors with output rows alone off the grid take realign windows from 7
# tiles per SM) and the first call's (.devcarry/tall.so: 9 bands, 8 waves), both built for sm_90.
# 1. make gpu-check's tests on rule.so: every test file's CUDA cases and the older paths' rerun,
#    sharded (no sanitizer: the kernels are those of earlier sanitizer runs; no benchmark).
# 2. An A/B below 7 tiles per SM of the half-vector plans: the rule (square tiles there) against
#    realign windows forced on and off.
# 3. Which suite cases change kernels between the two modules (kernels_of_cases.py, both suites).
# Everything lands in one archive: the device tool brings back 8 files at most.
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
W=$OUT/work
mkdir -p $W
SO=torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee $W/gpu.txt
cp .devcarry/rule.so $SO
OUT=$W/gpu-check BUILD=0 RUN_BENCH=0 SANITIZE=0 PYTEST_ARGS="-m cuda" PYTEST_SHARDS=6 \
  timeout 330 bash scripts/gpu_check.sh 2>&1 | tail -25
echo "gpu-check done at ${SECONDS}s"
S="bf16 4100x768,bf16 8196x768,bf16 12292x768,fp16 2052x2048,bf16 4x1500x768,fp16 1028x1024,bf16 20004x768"
timeout 100 python3 -m bench.ab_gpu_time --shapes "$S" --settings "" "TORCH_TRANSPOSE_REALIGN_WINDOW=1" \
  "TORCH_TRANSPOSE_REALIGN_WINDOW=0" --rounds 2 --out $W/ab-half-vector-small.md 2>&1 | grep -v "Warning\|warn" | tail -9
echo "A/B done at ${SECONDS}s"
T=$((560 - SECONDS))
for suite in default models; do
  timeout $T python3 scripts/kernels_of_cases.py --suite $suite > $W/kernels-$suite-rule.txt 2>&1 &
done
wait
cp .devcarry/tall.so $SO
for suite in default models; do
  timeout $((565 - SECONDS)) python3 scripts/kernels_of_cases.py --suite $suite > $W/kernels-$suite-tall.txt 2>&1 &
done
wait
for suite in default models; do
  echo "== $suite suite, tall.so -> rule.so:"; diff $W/kernels-$suite-tall.txt $W/kernels-$suite-rule.txt | head -20
done
echo "total ${SECONDS}s"
tar -czf $OUT/session67-call2.tar.gz -C $W .
