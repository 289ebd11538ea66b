#!/bin/bash
# Records what the tool in TREE reports and writes over the installed torch and torch_xla
# packages, in both fix modes, so that two trees (two commits) can be compared byte for
# byte: a change meant to be only faster must leave every file of OUT the same.
#
#   git worktree add /tmp/before HEAD~1
#   benchmarks/record_output.sh /tmp/before /tmp/out-before
#   benchmarks/record_output.sh .           /tmp/out-after
#   diff -r /tmp/out-before /tmp/out-after && echo identical
#
# For each package and mode: the JSON report of `--check` and of `-o DIR` (the command
# benchmarks/sweep.py runs first), and the sha1 of every file written under DIR.
# Runs this checkout's .venv python with TREE as the working directory, so `-m migrate_xla`
# is TREE's code. About 5 minutes on 2 cores.
set -eu
TREE=$(cd "$1" && pwd)
OUT=$(mkdir -p "$2" && cd "$2" && pwd)
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY="$HERE/.venv/bin/python"
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
WRITTEN=$(mktemp -d)
trap 'rm -rf "$WRITTEN"' EXIT
cd "$TREE"
for mode in safe unsafe; do
  flags=()
  [ "$mode" = unsafe ] && flags=(--unsafe-fixes)
  for pkg in torch torch_xla; do
    "$PY" -m migrate_xla --check "${flags[@]}" --format json --exit-zero -j 2 "$SITE/$pkg" > "$OUT/check-$mode-$pkg.json"
    "$PY" -m migrate_xla -o "$WRITTEN/$mode-$pkg" "${flags[@]}" --format json --exit-zero -j 2 "$SITE/$pkg" > "$OUT/o-$mode-$pkg.json"
    (cd "$WRITTEN/$mode-$pkg" && find . -type f -print0 | sort -z | xargs -0 sha1sum) > "$OUT/o-$mode-$pkg.sha1"
  done
done
