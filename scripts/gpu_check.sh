#!/usr/bin/env bash
# One call on the GPU machine: build for sm_90, run every test (CUDA included), run a CUDA
# subset under compute-sanitizer, then benchmark. Writes logs and results under $OUT if set.
# Usage: scripts/gpu_check.sh [--no-bench] [--bench-args "..."]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
RUN_BENCH=1
BENCH_ARGS=${BENCH_ARGS:-}
SANITIZE=${SANITIZE:-1}
PYTEST_ARGS=${PYTEST_ARGS:-}
while [[ $# -gt 0 ]]; do
  case $1 in
    --no-bench) RUN_BENCH=0 ;;
    --bench-args) BENCH_ARGS=$2; shift ;;
  esac
  shift
done
export TORCH_CUDA_ARCH_LIST=9.0 PYTHONUNBUFFERED=1
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name())" | tee -a "$OUT/gpu.txt"

echo "== build"
time make build > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
cuobjdump --dump-resource-usage torch_transpose/_C*.so 2>/dev/null | grep -E "Function|REG" | head -80 > "$OUT/resource-usage.txt"

echo "== pytest (all tests, CUDA included)"
python3 -m pytest tests -q -ra -p no:cacheprovider $PYTEST_ARGS 2>&1 | tee "$OUT/pytest.log" | tail -25
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

if [[ $SANITIZE == 1 ]]; then
  echo "== compute-sanitizer (memcheck, racecheck, initcheck) on a CUDA subset"
  for tool in memcheck racecheck initcheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest tests/test_sanitizer_subset.py -q -p no:cacheprovider \
      > "$OUT/sanitizer-$tool.log" 2>&1
    rc=$?
    echo "$tool: exit $rc; $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
    [[ $rc -eq 0 ]] || status=1
  done
fi

if [[ $RUN_BENCH == 1 ]]; then
  echo "== benchmark"
  python3 -m bench --device cuda --out-dir "$OUT" $BENCH_ARGS 2>&1 | tee "$OUT/bench.log" | tail -70
fi
exit $status
