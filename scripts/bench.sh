#!/usr/bin/env bash
# Speed benchmark: runs `tessera run SCENARIO --perf` pinned to one core RUNS times and prints
# the median wall time and peak memory, with the perf lines of the median run.
# Usage: scripts/bench.sh [scenario] [runs] [run options...]   (default: GPT-3 175B on 1024
# H100, 5 runs); further options go to `tessera run`, e.g. --set 'model.moe.routing={skew:
# zipf, s: 1.2, seed: 1}'.
set -euo pipefail
scenario=${1:-scenarios/gpt3-175b-h100.yaml}
runs=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
bin=${TESSERA:-build/tessera}
tmp=$(mktemp -d)
for i in $(seq 1 "$runs"); do
  taskset -c 0 "$bin" run "$scenario" --perf --quiet "$@" > "$tmp/run$i.txt"
done
for i in $(seq 1 "$runs"); do
  total=$(grep -o 'total [0-9.]* s' "$tmp/run$i.txt" | awk '{print $2}')
  echo "$total $i"
done | sort -n > "$tmp/sorted"
median=$(awk -v n="$runs" 'NR == int((n + 1) / 2) {print $2}' "$tmp/sorted")
echo "scenario: $scenario, $runs runs on one core; times (s): $(awk '{printf "%s ", $1}' "$tmp/sorted")"
echo "median run:"
cat "$tmp/run$median.txt"
rm -rf "$tmp"
