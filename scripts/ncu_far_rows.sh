#!/usr/bin/env bash
# Probe for the GPU machine (not the library, not the suite): where the 5-D permute's box kernel
# and the (2, 1, 0) lean tiles lose against kernels of the same family on near rows
# (bench/NOTES.md v33: (2, 1, 0) runs at the far-row write bound of a write-only kernel, the 5-D
# permute 0.05-0.08 below its bound). One ncu pass per case over our kernel's first timed launch,
# DRAM and L2 traffic by direction, L2 hit rates, the traffic that crosses between the two L2
# partitions, instructions and occupancy, as CSV on stdout:
#
#     bash scripts/ncu_far_rows.sh [case[@impl] ...] > $OUT/ncu-far-rows.csv   # on the GPU machine
#
# Cases are suite names (bench/cases.py) or shapes ("fp16 8191x8193", bench/profile_case.py);
# the defaults pair each far-row case with a near-row one on the same kernel family. ncu leaves
# the clocks alone (--clock-control none, as the device notes ask); each case takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# The repo after any given path, so that PYTHONPATH can put another build of torch_transpose first.
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"
metrics=(
  gpu__time_duration.sum
  dram__bytes_read.sum
  dram__bytes_write.sum
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  lts__t_sectors_op_read.sum
  lts__t_sectors_op_write.sum
  lts__t_sector_op_read_hit_rate.pct
  lts__t_sector_op_write_hit_rate.pct
  smsp__inst_executed.sum
  sm__warps_active.avg.pct_of_peak_sustained_active
)
# Sectors that crossed between the two L2 partitions: asked for first, dropped if this ncu does
# not know the metric (a report that names an unknown metric fails whole).
optional_metric=lts__t_sectors_srcunit_ltcfabric.sum
# A case may name another implementation after an @ ("fp32 16x4194304@compile", any of
# bench.impls.IMPLS): its first timed kernel is profiled, whatever its name (Inductor's and
# PyTorch's kernels are not named as ours are; profile_case launches nothing else while timed).
# NCU_METRICS="a,b,...": these metrics instead of the list above (other kernels' questions).
# NCU_SECTIONS="SpeedOfLight WarpStateStats ...": ncu's named sections instead of the metric list
# (their metric names differ between ncu versions; the sections' do not), one row per metric.
profile() {  # case[@impl], metric list
  local case=${1%@*} impl=torch_transpose filter="regex:(transpose|copy)_kernel" what=(--metrics "$2") section
  if [[ $1 == *@* ]]; then impl=${1##*@}; filter="regex:."; fi
  if [[ -n ${NCU_SECTIONS:-} ]]; then
    what=()
    for section in $NCU_SECTIONS; do what+=(--section "$section"); done
  fi
  ncu --clock-control none --profile-from-start off -k "$filter" --launch-count 1 \
      --csv --print-units base "${what[@]}" python3 -m bench.profile_case "$case" 2 "$impl" 2>&1 | grep '^"' || true
}
if [[ $# -eq 0 ]]; then
  set -- "fp32 5-D 20x30x40x50x60 (4,2,0,3,1)" "fp32 batched 65536x8x8" \
         "fp32 1024x1024x64 (2, 1, 0)" "fp32 1024x1024x64 (0, 2, 1)" "fp32 8192x8192"
fi
header_done=0
for case in "$@"; do
  # Our kernels are all named *_transpose_kernel or *_copy_kernel; profile_case runs ours alone
  # between cudaProfilerStart and Stop, after two warm-up calls.
  list=${NCU_METRICS:-$(IFS=,; echo "${metrics[*]}")}
  report=$(profile "$case" "$list,$optional_metric")
  # Again without the optional metric, unless NCU_SECTIONS names no metric: the same run again.
  [[ -n $report || -n ${NCU_SECTIONS:-} ]] || report=$(profile "$case" "$list")
  if [[ -z $report ]]; then
    echo "no ncu report for $case" >&2
    continue
  fi
  # ncu's CSV: one row per metric; keep the header once and tag each row with the case.
  if [[ $header_done == 0 ]]; then
    echo "\"case\",$(head -1 <<< "$report")"
    header_done=1
  fi
  tail -n +2 <<< "$report" | sed "s/^/\"$case\",/"
done
