#!/usr/bin/env bash
# clang-tidy's size and complexity checks (.clang-tidy) on the .cpp files a change touches,
# outside tests/, fuzz/ and bench/. The change is every commit since BASE (default: the
# newest commit at least 6 hours older than HEAD, so about one submission; from commit dates,
# so the same tree always checks the same files). Functions listed in .clang-tidy-baseline
# (path:function) predate the gate and are let through until they are split; a function it
# lists that no longer violates should be removed from it. Needs a configured build folder
# (compile_commands.json). Usage: scripts/tidy.sh [build-dir] [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
base=${2:-}
if [ -z "$base" ]; then
  head_time=$(git log -1 --format=%ct HEAD)
  base=$(git rev-list -1 --before="$((head_time - 6 * 3600))" HEAD || true)
  [ -n "$base" ] || base=$(git rev-list --max-parents=0 HEAD | tail -n 1)
fi
mapfile -t files < <(git diff --name-only --diff-filter=AMR "$base" HEAD -- '*.cpp' |
                     grep -vE '^(tests|fuzz|bench)/' || true)
if [ ${#files[@]} -eq 0 ]; then
  echo "tidy: no source file changed since $(git rev-parse --short "$base")"
  exit 0
fi
report=$(mktemp)
trap 'rm -f "$report"' EXIT
# -Wno-unknown-warning-option: GCC-only warning flags in the compile commands.
printf '%s\n' "${files[@]}" | xargs -P2 -n4 clang-tidy -p "$build" --quiet \
  --extra-arg=-Wno-unknown-warning-option 2>/dev/null | grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning):' >"$report" || true
bad=0
while IFS= read -r line; do
  path=${line%%:*}
  path=${path#"$PWD/"}
  fn=$(sed -nE "s/.*function '([^']+)'.*/\1/p" <<<"$line")
  if [ -n "$fn" ] && grep -qxF "$path:$fn" .clang-tidy-baseline; then
    continue
  fi
  echo "${line#"$PWD/"}"
  bad=1
done <"$report"
if [ "$bad" -ne 0 ]; then
  echo "tidy: split the functions above (or, for code that predates the gate, see .clang-tidy-baseline)"
  exit 1
fi
echo "tidy: ok (${#files[@]} files changed since $(git rev-parse --short "$base"))"
