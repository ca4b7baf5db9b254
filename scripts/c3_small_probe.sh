#!/usr/bin/env bash
# Probe for the GPU machine (not the library, not the suite): where the time of the small C = 3
# image layouts goes (32x3x224x224 NCHW <-> NHWC, 9.6 MB in bf16, 19 MB in fp32; bench/NOTES.md
# v37: by GPU time bf16 NCHW->NHWC runs at 0.89-0.90 of copy while fp32, twice the bytes, runs at
# 1.05-1.07, so ours costs more than copy per call and less per byte).
#
#     bash scripts/c3_small_probe.sh > $OUT/c3-probe.txt   # on the GPU machine, built in place
#
# 1. bench.host_overhead: host, GPU and wall time per call of ours (allocating and out=), eager
#    and copy_, to split a call's GPU time from its host time.
# 2. ncu over our kernel's timed launches, L2 left warm between them (--cache-control none: the
#    suite reuses one input and output, so these layouts run from L2): duration, grid and
#    occupancy limits, how evenly the SMs are busy (sm__cycles_active max against average), L2
#    hits, DRAM bytes, instructions.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
cases=("bf16 NCHW->NHWC 32x3x224x224" "bf16 NHWC->NCHW 32x224x224x3" "fp32 NCHW->NHWC 32x3x224x224"
       "fp32 NHWC->NCHW 32x224x224x3")
joined=$(IFS=,; echo "${cases[*]}")
echo "## 1. host, GPU and wall time per call (us)"
python3 -m bench.host_overhead --cases "$joined" --calls 200
metrics=(
  gpu__time_duration.sum launch__grid_size launch__block_size launch__registers_per_thread
  launch__occupancy_limit_registers launch__occupancy_limit_shared_mem launch__occupancy_limit_warps
  launch__occupancy_limit_blocks launch__waves_per_multiprocessor
  sm__warps_active.avg.pct_of_peak_sustained_active sm__cycles_active.max sm__cycles_active.avg
  sm__cycles_elapsed.max lts__t_sector_hit_rate.pct dram__bytes_read.sum dram__bytes_write.sum
  smsp__inst_executed.sum
)
list=$(IFS=,; echo "${metrics[*]}")
echo "## 2. ncu, three timed launches per case (L2 warm)"
for case in "${cases[@]}"; do
  echo "### $case"
  ncu --clock-control none --cache-control none --profile-from-start off -k regex:interleave --launch-count 3 \
      --csv --print-units base --metrics "$list" python3 -m bench.profile_case "$case" 3 2>&1 |
    grep '^"' | awk -F'","' 'NR > 1 {gsub(/"/, "", $1); gsub(/"/, "", $NF); print "launch " $1 ": " $(NF-2) " = " $NF}' || echo "no ncu report for $case"
done
