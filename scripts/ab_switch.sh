#!/usr/bin/env bash
# A/B timing of one kernel switch (an environment variable that "0" turns off) on the GPU
# machine: the benchmark's cases matching CASES, once with VAR=0 (or VAR=$AB_VALUE, for a
# switch that takes a value) and once with VAR unset, each in its own process, back to back.
# Only the Markdown tables come back ($OUT/ab-<VAR>-off.md, -on.md), because the device tool
# returns at most 8 files.
# usage: scripts/ab_switch.sh VAR CASES [more `python -m bench` arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
var=$1 cases=$2
shift 2
OUT=${OUT:-/tmp/ab}
scratch=$(mktemp -d)
for side in off on; do
  if [[ $side == off ]]; then export "$var=${AB_VALUE:-0}"; else unset "$var"; fi
  python3 -m bench --device cuda --out-dir "$scratch" --name "ab-$var-$side" --cases "$cases" "$@"
  cp "$scratch/ab-$var-$side.md" "$OUT/"
done
rm -rf "$scratch"
