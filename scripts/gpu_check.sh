#!/usr/bin/env bash
# One call on the GPU machine: build for sm_90, run every test file (CUDA included), run a CUDA
# subset under compute-sanitizer, then benchmark. Everything is logged to $OUT/gpu-check.log
# (at most 8 files come back from a GPU machine), benchmark results go to $OUT/<name>.{json,csv,md,png}.
# Environment: BUILD=0 (a carried prebuilt extension, see below), BENCH_ARGS (e.g. "--quick"; split on spaces, so no spaces inside one argument),
# RUN_BENCH=0, SANITIZE=0, SANITIZE_TOOLS, SANITIZE_TARGET=subset|suite|rest, SANITIZE_SCRIPT,
# SANITIZE_SHARDS, SANITIZE_OURS_ONLY, SANITIZE_TIMEOUT, SANITIZE_CASE_TIMEOUT (see the sanitizer
# section below), SANITIZE_PARALLEL=1 (the tools run at once, alongside the tests: the tools
# load the CPU, not the GPU; never together with the benchmark), PYTEST_ARGS, PYTEST_SHARDS (see
# the pytest section), TEST_FILES (or none),
# INDUCTOR_CXX, CTEST=1 (the C++ tests too: make test-cpp; GTEST_SOURCE names GoogleTest
# sources when the machine has no libgtest). Every test file runs, the slow huge-tensor ones
# (tests/test_huge.py) too. Each log line carries the time and the seconds since the start;
# each sanitizer tool logs to $OUT/sanitize-<tool>.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
LOG="$OUT/gpu-check.log"
: > "$LOG"
export TORCH_CUDA_ARCH_LIST=9.0 PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
say() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$LOG"; }
status=0

say "CXX=${CXX:-unset}; $(${CXX:-c++} --version | head -1); system g++: $(/usr/bin/g++ --version | head -1)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee -a "$LOG"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name())" 2>&1 | tee -a "$LOG"

# BUILD=0: use an extension that was built elsewhere for this machine's Python and torch and
# carried along (torch_transpose/_C.cpython-312-*.so: built elsewhere), when it imports;
# it saves the build's 90-110 s of device time. Otherwise (or when it does not import) build here.
if [[ ${BUILD:-1} == 0 ]] && python3 -c "import torch_transpose" >> "$LOG" 2>&1; then
  say "== using the prebuilt extension: $(python3 -c 'import torch_transpose; print(torch_transpose._C.__file__)')"
else
  say "== build"
  if ! make build >> "$LOG" 2>&1; then tail -40 "$LOG"; exit 1; fi
fi

# SANITIZE_TARGET=subset (default): tests/test_sanitizer_subset.py as a script, a small CUDA set
# that reaches every kernel path. SANITIZE_TARGET=suite: every CUDA-marked pytest case except
# the slow ones and test_integration (all three tools: 20-45 s on the H200). SANITIZE_TARGET=rest:
# those two files' CUDA cases (torch.compile, gradcheck and multi-GB tensors). Unsharded and
# unfiltered, memcheck had finished 3 cases after 4 minutes. With 5 shards and memcheck and
# racecheck on our kernels only, the slowest shard took 5 min; complex128 gradgradcheck alone
# took 281 s under memcheck and over 470 s under initcheck (2026-11-30, H200).
sanitized_pytest=()
if [[ ${SANITIZE_TARGET:-subset} == suite ]]; then
  sanitized_pytest=(tests -m "cuda and not slow" --ignore=tests/test_integration.py)
elif [[ ${SANITIZE_TARGET:-subset} == rest ]]; then
  sanitized_pytest=(tests/test_integration.py tests/test_huge.py -m cuda)
  default_shards=5
  # Inductor's compile workers are extra processes the tools would follow; compile in-process.
  export TORCHINDUCTOR_COMPILE_THREADS=1
fi
# SANITIZE_K: a pytest -k expression that narrows a pytest target (e.g. to rerun some cases).
[[ -n ${SANITIZE_K:-} && ${#sanitized_pytest[@]} -gt 0 ]] && sanitized_pytest+=(-k "$SANITIZE_K")
if [[ ${#sanitized_pytest[@]} -gt 0 ]]; then
  sanitized=(python3 -m pytest "${sanitized_pytest[@]}" -q -p no:cacheprovider)
else
  sanitized=(python3 ${SANITIZE_SCRIPT:-tests/test_sanitizer_subset.py})
fi
# SANITIZE_OURS_ONLY="memcheck racecheck": those tools check only our kernels (their mangled
# names hold the namespace torch_transpose); PyTorch's and Triton's kernels run unchecked,
# which is what makes torch.compile and gradcheck affordable under the tools. Leave initcheck
# out of it: memory that an unchecked kernel wrote may look uninitialised to it.
# SANITIZE_SHARDS=k (pytest targets only; rest: 5 by default): the cases are split k ways
# (scripts/pytest_shards.py --sanitizer-split, deal_for_sanitizer), one
# process per shard and tool, all at once; the slow huge-tensor cases share shard 0, so that
# at most one of them per tool holds GPU memory. SANITIZE_TIMEOUT (seconds) bounds each process.
# Cases with cuda_graph in their name get a shard of their own that keeps the caching
# allocator (CUDA graphs allocate from its private pools during capture) and turns off
# Inductor's debug check of that pool, which fails under the tools (tests/conftest.py says why).
# The racecheck of test_concurrency's threads hung when it was the first case of its shard
# (2026-11-30); concurrency cases therefore run last in their shard.
# Inductor (AOTInductor packages) compiles with $CXX: scripts/test_cxx.sh says which (and why).
test_cxx=$(bash scripts/test_cxx.sh)
shards=${SANITIZE_SHARDS:-${default_shards:-1}}
[[ ${#sanitized_pytest[@]} -gt 0 ]] || shards=1
shard_dir="$OUT/shards"
split_cases() {  # writes $shard_dir/all-cases and cases.<name>, one pytest node id per line
  python3 scripts/pytest_shards.py "$shards" --sanitizer-split "$shard_dir" -- "${sanitized_pytest[@]}" >> "$LOG" 2>&1 \
    || { status=1; say "sanitizer cases: collection failed (the log says why)"; }
  say "sanitizer cases: $(wc -l < "$shard_dir/all-cases") in $shards shard(s)"
}
# SANITIZE_CASE_TIMEOUT (seconds; suite target: 150 by default, 0 = none): a case still running
# after that long ends its shard with every thread's Python stack in the log (pytest-timeout's
# thread method), so that a hang shows where it waits. Racecheck of test_many_threads hung that
# way once (H200, 2026-11-30), where the shard's timeout only said that it had.
case_timeout=()
default_case_timeout=0
[[ ${SANITIZE_TARGET:-subset} == suite ]] && default_case_timeout=150
if [[ ${SANITIZE_CASE_TIMEOUT:-$default_case_timeout} != 0 ]] && python3 -c "import pytest_timeout" 2>/dev/null; then
  case_timeout=(-o "timeout=${SANITIZE_CASE_TIMEOUT:-$default_case_timeout}" -o timeout_method=thread)
fi
# No caching allocator: every tensor is its own allocation, so an access past a tensor's end is
# past an allocation's end, which is what the tools can see.
# initcheck does not count the copy engine's bulk tensor stores as writes: on the H200
# (2026-12-01) it reported every byte of each 1-byte output that the TMA tile kernel wrote as
# uninitialised when the test read it back, although the test found each byte right. Under
# initcheck, 1-byte plans therefore take the square tile kernels (TORCH_TRANSPOSE_KERNELS=tma_tile=0);
# memcheck and racecheck check the TMA kernel.
run_tool_shard() {  # tool, shard, log
  local filter=() command=("${sanitized[@]}") no_caching=1 no_pool_check=0 switches=
  [[ $2 == graphs ]] && no_caching=0 no_pool_check=1
  [[ $1 == initcheck ]] && switches=tma_tile=0
  [[ " ${SANITIZE_OURS_ONLY:-} " == *" $1 "* ]] && filter=(--kernel-name kns=torch_transpose)
  if [[ $shards -gt 1 ]]; then
    local cases
    mapfile -t cases < "$shard_dir/cases.$2"
    command=(python3 -m pytest -v -p no:cacheprovider --durations=10 "${case_timeout[@]}" "${cases[@]}")
  fi
  CXX=$test_cxx PYTORCH_NO_CUDA_MEMORY_CACHING=$no_caching TORCH_TRANSPOSE_KERNELS=$switches \
    TT_TESTS_NO_CUDAGRAPH_POOL_CHECK=$no_pool_check timeout -k 10 "${SANITIZE_TIMEOUT:-100000}" \
    compute-sanitizer --tool "$1" "${filter[@]}" --error-exitcode 9 "${command[@]}" > "$3" 2>&1
}
run_tool() {  # tool: every shard at once; the shard logs end up, in order, in one log
  local pids=() rc=0 k names=(all)
  [[ $shards -gt 1 ]] && names=($(cd "$shard_dir" && ls cases.* | sed 's/^cases\.//'))
  for k in "${names[@]}"; do
    run_tool_shard "$1" "$k" "$shard_dir/$1.log.$k" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  for k in "${names[@]}"; do
    echo "#### shard $k" >> "$OUT/sanitize-$1.log"
    cat "$shard_dir/$1.log.$k" >> "$OUT/sanitize-$1.log"
  done
  return $rc
}
report_tool() {  # tool, exit status
  local log="$OUT/sanitize-$1.log"
  say "$1: exit $2; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|all cases passed|^[0-9]+ passed|passed.* in ' "$log" | sort | uniq -c | tr '\n' ' ')"
  if [[ $shards -gt 1 ]]; then
    say "$1: cases PASSED $(grep -c ' PASSED' "$log"), FAILED $(grep -c ' FAILED' "$log"), SKIPPED $(grep -c ' SKIPPED' "$log"), of $(wc -l < "$shard_dir/all-cases")"
  fi
  [[ $2 -eq 0 ]] || { status=1; grep -E "Error|Invalid|Fatal|Segmentation|^FAILED|Terminated" "$log" | head -8; }
}
declare -A tool_pid=()
if [[ ${SANITIZE:-1} == 1 ]]; then
  mkdir -p "$shard_dir"
  [[ $shards -gt 1 ]] && split_cases
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck}; do : > "$OUT/sanitize-$tool.log"; done
fi
if [[ ${SANITIZE:-1} == 1 && ${SANITIZE_PARALLEL:-0} == 1 ]]; then
  say "== compute-sanitizer, all tools at once in the background, on: ${sanitized[*]}"
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck}; do
    run_tool "$tool" &
    tool_pid[$tool]=$!
  done
fi

# TEST_FILES=none runs no test file (a sanitizer- or bench-only call).
test_files=(${TEST_FILES:-tests/test_*.py})
[[ ${TEST_FILES:-} == none ]] && test_files=()
# PYTEST_SHARDS=k (k > 1): the test files' cases, and the older paths' run below, go to k pytest
# processes at once (scripts/pytest_shards.py: cases dealt round robin, the huge-tensor ones to
# one shard) instead of one process per file: most of a file's time is the host's (each switch
# rerun starts a pytest process), so 16 cores finish sooner. A crash still ends one shard only.
# Unset, the older paths' run is one shard, and each test file a process of its own.
sharded_pytest() {  # label, then the pytest selection; the environment as the caller set it
  local label=$1
  shift
  python3 scripts/pytest_shards.py "${PYTEST_SHARDS:-1}" --log-dir "$OUT/shards-pytest" -- "$@" > "$OUT/pytest.tmp" 2>&1
  local rc=$?
  cat "$OUT"/shards-pytest/shard-*.log "$OUT/pytest.tmp" >> "$LOG" 2>/dev/null
  rm -rf "$OUT/shards-pytest"
  say "$label: exit $rc: $(grep '^all shards:' "$OUT/pytest.tmp")"
  if [[ $rc -ne 0 ]]; then
    status=1
    grep -E "^shard|^  (FAILED|ERROR)|^collection failed" "$OUT/pytest.tmp" | head -20
  fi
}
if [[ ${PYTEST_SHARDS:-1} -gt 1 && ${#test_files[@]} -gt 0 ]]; then
  say "== pytest, every test file's cases in $PYTEST_SHARDS processes at once"
  CXX=$test_cxx sharded_pytest "every test file, sharded" "${test_files[@]}" ${PYTEST_ARGS:-}
  test_files=()
else
  say "== pytest, one process per test file (a crash in one cannot hide the others)"
fi
for file in "${test_files[@]}"; do
  CXX=$test_cxx python3 -X faulthandler -m pytest "$file" -q -ra -p no:cacheprovider ${PYTEST_ARGS:-} > "$OUT/pytest.tmp" 2>&1
  rc=$?
  cat "$OUT/pytest.tmp" >> "$LOG"
  say "$file: exit $rc: $(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error).* =+$' "$OUT/pytest.tmp" | tail -1)"
  if [[ $rc -ne 0 ]]; then
    status=1
    grep -E "^FAILED|^ERROR|Fatal Python|Segmentation|File \"/.*tests/" "$OUT/pytest.tmp" | head -20
  fi
done
# The older paths' rerun: its switches and why each is there are in scripts/older_paths.sh.
if [[ ${TEST_FILES:-} != none ]]; then
  source scripts/older_paths.sh
  export "${older_paths[@]}"
  sharded_pytest "${older_paths[*]} test_transpose + test_permute, CUDA cases" \
    tests/test_transpose.py tests/test_permute.py -m cuda
  unset "${older_paths[@]%%=*}"
fi
rm -f "$OUT/pytest.tmp"

if [[ ${CTEST:-0} == 1 ]]; then
  say "== C++ tests (make test-cpp)"
  gtest_arg=${GTEST_SOURCE:+CMAKE_ARGS=-DTORCH_TRANSPOSE_GTEST_SOURCE=$GTEST_SOURCE}
  make test-cpp $gtest_arg > "$OUT/ctest.tmp" 2>&1
  rc=$?
  cat "$OUT/ctest.tmp" >> "$LOG"
  say "make test-cpp: exit $rc: $(grep -E 'tests passed|tests failed' "$OUT/ctest.tmp" | tail -1)"
  [[ $rc -eq 0 ]] || { status=1; grep -E "Failed|FAILED|\*\*\*" "$OUT/ctest.tmp" | head -20; }
  rm -f "$OUT/ctest.tmp"
fi

if [[ ${SANITIZE:-1} == 1 ]]; then
  if [[ ${SANITIZE_PARALLEL:-0} == 1 ]]; then
    say "== waiting for compute-sanitizer"
    for tool in "${!tool_pid[@]}"; do
      wait "${tool_pid[$tool]}"
      report_tool "$tool" $?
    done
  else
    say "== compute-sanitizer on: ${sanitized[*]}"
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck}; do
      run_tool "$tool"
      report_tool "$tool" $?
    done
  fi
  rm -rf "$shard_dir"  # merged into the per-tool logs; at most 8 files come back
fi

if [[ ${RUN_BENCH:-1} == 1 ]]; then
  say "== benchmark"
  python3 -m bench --device cuda --out-dir "$OUT" ${BENCH_ARGS:-} 2>>"$LOG" | tee -a "$LOG"
fi
exit $status
