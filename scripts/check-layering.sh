#!/usr/bin/env bash
# The layering rules: the folder tree is the data flow, and no file includes a folder above
# its own. Each folder may include the folders listed for it (and itself):
#   base                                   the ground floor
#   graph        base                      the hand-off between synth and sim
#   hwprofiles   base graph
#   topology     base graph hwprofiles
#   synth        base graph hwprofiles topology            } side by side: neither
#   sim          base graph hwprofiles topology            } includes the other
#   measured     ... synth sim                             (Kineto traces, replay, retime)
#   interop      ... synth sim                             (ASTRA-sim configs)
#   experiments  ... synth sim measured interop            (runs, compare, sweep)
#   cli          everything; tests, fuzz and bench too (they sit on top)
# Prints every include that breaks a rule and exits 1; CI runs it first.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed=(
  [base]="base"
  [graph]="base graph"
  [hwprofiles]="base graph hwprofiles"
  [topology]="base graph hwprofiles topology"
  [synth]="base graph hwprofiles topology synth"
  [sim]="base graph hwprofiles topology sim"
  [measured]="base graph hwprofiles topology synth sim measured"
  [interop]="base graph hwprofiles topology synth sim interop"
  [experiments]="base graph hwprofiles topology synth sim measured interop experiments"
)
top="base graph hwprofiles topology synth sim measured interop experiments cli tests fuzz bench"
bad=0
while IFS= read -r file; do
  folder=${file%%/*}
  if [[ " $top " != *" $folder "* ]]; then
    echo "$file: source folder '$folder' has no layering rule (scripts/check-layering.sh)"
    bad=1
    continue
  fi
  [ -n "${allowed[$folder]:-}" ] || continue  # a top folder: may include anything
  while IFS=: read -r line target; do
    dir=${target%%/*}
    [[ "$target" == */* ]] || continue  # a system or generated header without a folder
    if [[ " ${allowed[$folder]} " != *" $dir "* ]]; then
      echo "$file:$line: $folder/ includes \"$target\" from $dir/, a layer above it"
      bad=1
    fi
  done < <(grep -noE '^#include "[^"]+"' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)"/\1:\2/')
done < <(git ls-files '*.h' '*.cpp' '*.proto')
if [ "$bad" -ne 0 ]; then
  exit 1
fi
echo "layering: ok"
