#!/usr/bin/env bash
# bench.sh: whole-command timings of sframe-gen on big real binaries, each as a
# ratio against a reference command timed in the same run (so machine noise
# mostly cancels), plus peak memory and time per FDE across binary sizes.
#
#   testdata/bench.sh [FILE...]     default: the big binaries found on this machine
#
# Reports, per file:
#   raw/readelf  sframe-gen --raw (section only) vs readelf --debug-dump=frames-interp
#                (target: readelf at least 30x slower, i.e. ratio <= 0.033)
#   patch/cp     sframe-gen -o OUT vs cp FILE OUT (target: <= 1.3)
#   peak RSS of sframe-gen -o OUT (target: <= 64 MiB)
#   ns per FDE of the --raw run (should be flat across sizes)
# Each command runs RUNS times (default 5); the best time counts.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
go build -o bin/sframe-gen ./cmd/sframe-gen
BIN=$PWD/bin/sframe-gen
READELF=${READELF:-readelf}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sframe-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

if [ $# -eq 0 ]; then
  set --
  for f in /root/.rustup/toolchains/*/lib/libLLVM.so.* /usr/lib/gcc/x86_64-linux-gnu/*/cc1plus \
           /usr/bin/node /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 /usr/bin/python3.11 \
           /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/bin/ls; do
    [ -f "$f" ] && set -- "$@" "$(readlink -f "$f")"
  done
fi

# best_ns CMD...: the best wall time of RUNS runs, in nanoseconds.
best_ns() {
  local best=0 t0 t1 d i
  for ((i = 0; i < RUNS; i++)); do
    t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
    d=$((t1 - t0))
    if [ "$best" -eq 0 ] || [ "$d" -lt "$best" ]; then best=$d; fi
  done
  echo "$best"
}

printf '%-44s %8s %9s %9s %7s %9s %9s %7s %8s %7s\n' file FDEs readelf_ms raw_ms raw/re cp_ms patch_ms pat/cp RSS_MiB ns/FDE
for f in "$@"; do
  fdes=$("$BIN" stats --json "$f" 2>/dev/null | sed -n 's/.*"cfi_fdes": *\([0-9]*\).*/\1/p' | head -n1)
  if [ -z "$fdes" ]; then fdes=$("$BIN" rows --json "$f" 2>/dev/null | wc -l); fi
  cp "$f" "$TMP/in"
  re=$(best_ns "$READELF" --debug-dump=frames-interp "$TMP/in")
  raw=$(best_ns "$BIN" --raw -o "$TMP/raw" "$TMP/in")
  cpt=$(best_ns cp "$TMP/in" "$TMP/copy")
  pat=$(best_ns "$BIN" -o "$TMP/out" "$TMP/in")
  rss=$( { /usr/bin/time -f '%M' "$BIN" -o "$TMP/out2" "$TMP/in" >/dev/null; } 2>&1 | tail -n1)
  awk -v n="$(basename "$f")" -v fd="$fdes" -v re="$re" -v raw="$raw" -v cp="$cpt" -v pat="$pat" -v rss="$rss" 'BEGIN {
    printf "%-44s %8d %9.1f %9.1f %7.3f %9.1f %9.1f %7.2f %8.1f %7.0f\n", n, fd, re/1e6, raw/1e6, raw/re, cp/1e6, pat/1e6, pat/cp, rss/1024, (fd > 0 ? raw/fd : 0)
  }'
  rm -f "$TMP"/in "$TMP"/raw "$TMP"/copy "$TMP"/out "$TMP"/out2
done
