#!/usr/bin/env bash
# The CUDA-graph cases under compute-sanitizer, in one call on the GPU machine (after make build):
#  1. test_transpose's capture-and-replay case (torch.cuda.CUDAGraph), each tool over every kernel;
#  2. test_integration's torch.compile(mode="reduce-overhead") case without Inductor's slow-path
#     CUDA-graph-tree asserts (memcheck and racecheck over our kernels, initcheck over all), and
#     once under memcheck with them and with allocation history, so that a failure names where
#     the block it flags came from.
# Why 2: under the tools that case fails in Inductor's pool check (check_memory_pool finds one
# block more than the graph's live outputs) while reporting 0 errors; it passes without the tools.
# Logs: $OUT/graphs-<tool>-<case>.log; a summary in $OUT/graphs.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" TORCHINDUCTOR_COMPILE_THREADS=1
cxx=$(bash scripts/test_cxx.sh)
raw=tests/test_transpose.py::test_captured_in_a_cuda_graph_and_replayed_with_new_data
trees=tests/test_integration.py::test_cuda_graphs_reduce_overhead_on_a_side_stream
# pytest in-process with Inductor's slow-path asserts and allocation history on or off.
with_asserts='
import sys
import pytest
import torch._inductor.config as inductor_config
inductor_config.triton.slow_path_cudagraph_asserts = sys.argv[1] == "True"
inductor_config.triton.cudagraph_trees_history_recording = sys.argv[1] == "True"
sys.exit(pytest.main(["-v", "-p", "no:cacheprovider", sys.argv[2]]))'
sanitize() {  # tool, filter (ours|all), log name, command...
  local tool=$1 filter=() name=$3
  [[ $2 == ours ]] && filter=(--kernel-name kns=torch_transpose)
  shift 3
  CXX=$cxx compute-sanitizer --tool "$tool" "${filter[@]}" --error-exitcode 9 "$@" > "$OUT/graphs-$tool-$name.log" 2>&1
  echo "$tool $name: exit $? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY| PASSED| FAILED' "$OUT/graphs-$tool-$name.log" | tr '\n' ' ')" >> "$OUT/graphs.log"
}
: > "$OUT/graphs.log"
python3 -m pytest -q -p no:cacheprovider "$raw" "$trees" >> "$OUT/graphs.log" 2>&1
for tool in memcheck racecheck initcheck; do
  sanitize "$tool" all raw python3 -m pytest -v -p no:cacheprovider "$raw" &
done
sanitize memcheck ours trees-asserts-True python3 -c "$with_asserts" True "$trees" &
for tool in memcheck racecheck initcheck; do
  # initcheck checks every kernel: memory written by an unchecked one could look uninitialised.
  sanitize "$tool" "$( [[ $tool == initcheck ]] && echo all || echo ours )" trees-asserts-False \
    python3 -c "$with_asserts" False "$trees" &
done
wait
cat "$OUT/graphs.log"
