#!/usr/bin/env bash
# Session 68's GPU calls, kept as the pattern for a call's script (results/
# h200-gpu-check-summary.txt lists them), on a carried module (.devcarry/main68.so: main as
# landed, built for sm_90 and Python 3.12 on the CPU machine). One step per call:
#   suites  the default and the models suite -> $OUT/results.tar (h200.*, h200-models.*)
#   tests   make gpu-check without the build and the benchmark: every test file's CUDA cases in
#           6 shards, the older paths' rerun, the sanitizer subset alongside
#   rows    128 against 64 realign rows on this GPU; racecheck over the realign cases (session
#           68's call 4 got an H100: run it straight after another call that got an H200, while
#           that machine is still held; needs_h200 is for memory, not for matching a GPU)
#   ab      the realign rules' A/Bs on this GPU, and the sanitizer's sharded suite target on
#           the realign cases (the first GPU run of pytest_shards.py --sanitizer-split)
set -u
export PYTHONPATH=$PWD CXX=/usr/bin/g++ PYTHONUNBUFFERED=1
cp .devcarry/main68.so torch_transpose/_C.cpython-312-x86_64-linux-gnu.so
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
# gpu_check.sh's sanitizer alone, on the CUDA cases a pytest -k expression picks, in 3 shards,
# the tools checking our kernels only: -k expression, tools, seconds per shard, seconds in all.
sanitize_cases() {
  OUT=$OUT BUILD=0 RUN_BENCH=0 TEST_FILES=none SANITIZE_TARGET=suite SANITIZE_SHARDS=3 \
    SANITIZE_K="$1" SANITIZE_TOOLS="$2" SANITIZE_OURS_ONLY="$2" SANITIZE_TIMEOUT=$3 timeout "$4" bash scripts/gpu_check.sh
}
case ${1:?step: suites, tests, rows or ab} in
suites)
  mkdir -p /tmp/res
  timeout 330 python3 -m bench --device cuda --out-dir /tmp/res --name h200 --min-run-time 0.1 \
    > "$OUT/bench-default.log" 2>&1
  echo "default suite: exit $?"
  timeout 230 python3 -m bench --suite models --device cuda --out-dir /tmp/res --name h200-models \
    --min-run-time 0.1 > "$OUT/bench-models.log" 2>&1
  echo "models suite: exit $?"
  tar -C /tmp/res -cf "$OUT/results.tar" .
  ;;
tests)
  OUT=$OUT BUILD=0 RUN_BENCH=0 SANITIZE_PARALLEL=1 PYTEST_SHARDS=6 PYTEST_ARGS="-m cuda" \
    timeout 570 bash scripts/gpu_check.sh
  echo "gpu_check: exit $?"
  ;;
ab)
  # Half-vector plans (2-byte, V = 4, output rows alone off the grid) between 2.2 and 4 tiles of
  # 128 rows per SM, realign windows forced on against off; then shapes at 4 and above.
  below="bf16 6148x768,bf16 7172x768,bf16 8196x768,bf16 9220x768,bf16 10244x768,fp16 5124x1024"
  below+=",fp16 2564x2048,fp16 3076x2048,fp16 4100x1536,bf16 6x1500x768"
  below+=",fp16 4100x2048,bf16 12292x768,bf16 50252x768"
  timeout 280 python3 -m bench.ab_gpu_time --shapes "$below" --rounds 3 --out "$OUT/ab-half-vector.md" \
    --settings "TORCH_TRANSPOSE_REALIGN_WINDOW=1" "TORCH_TRANSPOSE_REALIGN_WINDOW=0"
  echo "half-vector A/B: exit $?"
  # The tall rule of session 67 on this GPU: as is, 128 rows, 64 rows.
  tall="bf16 50257x768,bf16 50257x1024,bf16 24577x2048,bf16 64x1501x768,bf16 4x8001x768"
  timeout 120 python3 -m bench.ab_gpu_time --shapes "$tall" --rounds 2 --out "$OUT/ab-tall.md" \
    --settings "" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=0" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=1"
  echo "tall A/B: exit $?"
  sanitize_cases realign "memcheck racecheck" 120 150
  echo "sanitizer, realign cases: exit $?"
  ;;
rows)
  # Session 65's 64-row realign tiles were measured on the H100 only: 128 against 64 rows on
  # this GPU, over session 65-67's shapes (1- and 2-byte, single and batched).
  two="fp16 2049x2051,bf16 4097x768,bf16 1025x8193,fp16 3001x5000,fp16 4097x4099,fp16 8191x8193"
  two+=",bf16 64x1500x768,bf16 64x1501x768,bf16 16x2001x768,bf16 8x6001x1024,bf16 20001x768"
  two+=",bf16 32001x768,fp16 12289x8193,fp16 8x4100x4096"
  # Batched 2-byte plans, where the H200 had 128 rows ahead on 64x1501x768 (session 68).
  two+=",bf16 8x1501x768,bf16 16x1501x768,bf16 32x1501x768,bf16 16x2001x1024,bf16 32x1025x1536"
  one="int8 2049x2051,int8 4097x4095,int8 6000x5000,int8 8192x8190"
  timeout 300 python3 -m bench.ab_gpu_time --shapes "$two,$one" --rounds 3 --out "$OUT/ab-rows.md" \
    --settings "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=0" "TORCH_TRANSPOSE_REALIGN_SMALL_TILES=1"
  echo "rows A/B: exit $?"
  # Racecheck over the realign cases that memcheck passed in the ab step (the switched reruns
  # start a process per switch, too slow under the tool for one call).
  sanitize_cases "realign and not switched" racecheck 100 130
  echo "racecheck, realign cases: exit $?"
  ;;
esac
