#!/usr/bin/env bash
# Rewrites the golden results from the current build: every shipped scenario's summary.json
# and ranks.csv (tests/golden/scenarios/<name>/), the corpus of published runs
# (tests/golden/corpus/runs.csv), the validation table (tests/golden/validation.csv) and its
# per-effect breakdown (tests/golden/effects_table.md). Run it only when a change is meant to
# move results, and say in the commit which results moved and why.
# Usage: scripts/regen-golden.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
for scenario in scenarios/*.yaml; do
  name=$(basename "$scenario" .yaml)
  out=tests/golden/scenarios/$name
  tmp=$(mktemp -d)
  "$build/tessera" run "$scenario" --quiet --out "$tmp"
  mkdir -p "$out"
  cp "$tmp/summary.json" "$tmp/ranks.csv" "$out/"
  rm -rf "$tmp"
  echo "wrote $out"
done
tmp=$(mktemp -d)
"$build/tessera" runs tests/validation/runs/public_runs.yaml \
  --recipes tests/validation/runs/recipes.yaml --summary --out "$tmp" >/dev/null
mkdir -p tests/golden/corpus
cp "$tmp/runs.csv" tests/golden/corpus/runs.csv
rm -rf "$tmp"
echo "wrote tests/golden/corpus/runs.csv"
table=$build/tests/validation/validation.csv
rm -f "$table"
# The test fails while its golden copy is stale; what matters here is the table it writes.
"$build/tests/validation/validation_test" --gtest_filter=Validation.MegatronA100 >/dev/null || true
[ -f "$table" ] || { echo "validation_test wrote no $table" >&2; exit 1; }
cp "$table" tests/golden/validation.csv
echo "wrote tests/golden/validation.csv"
effects=$build/tests/validation/effects_table.md
rm -f "$effects"
"$build/tests/validation/effects_test" >/dev/null || true
[ -f "$effects" ] || { echo "effects_test wrote no $effects" >&2; exit 1; }
cp "$effects" tests/golden/effects_table.md
echo "wrote tests/golden/effects_table.md"
git status --short tests/golden
