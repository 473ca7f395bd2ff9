#!/usr/bin/env bash
# bench.sh: whole-command timings of sframe-gen on big real binaries, each as a
# ratio against a reference command timed in the same run (so machine noise
# mostly cancels), plus peak memory, time per FDE across binary sizes, and
# the size of the section against GNU ld's on the linked twins of testdata/link.
#
#   testdata/bench.sh [FILE...]     default: the big binaries found on this machine
#   RUNS=N (default 5): each command runs N times, the commands of a file
#     taking turns; STAT=median (default) reports the median wall and CPU
#     times, STAT=best the run with the best wall time (before round 6, the
#     only way, each command's runs one after the other).
#   SIZES=0: skip the size comparison.
#   SFRAME_GEN=PATH: time that binary instead of building the tree's.
#
# Timing table, per file (wall = elapsed, cpu = user+system of the process):
#   readelf      readelf --debug-dump=frames-interp FILE >/dev/null
#   raw          sframe-gen --raw -o OUT FILE (the section only, written to a file)
#                target: raw/re <= 0.030 (readelf 33x slower)
#   raw0         sframe-gen --raw FILE >/dev/null (the section to /dev/null, as
#                readelf's output): raw0/re
#   cp           cp FILE OUT (OUT removed before each run)
#   patch        sframe-gen -o OUT FILE (the whole patched file; OUT removed
#                before each run, so no fsync, as cp)
#                target: pat/cp <= 1.2
#   replace      sframe-gen -o OUT FILE over an existing OUT (what an in-place
#                run costs: the output is synced before it replaces the file)
#   RSS          peak resident memory of the patch run (target <= 64 MiB)
#   raw_PF pat_PF  page faults of a raw and a patch run (minor faults, one run
#                each: a fresh page's cost times these is what a host where
#                fresh memory is dear adds; pagecost, printed first, says
#                what a page costs here)
#   ns/FDE       wall time of the raw run per CFI FDE (should be flat);
#   cns/FDE      the same in CPU time (10 ms resolution: meaningful from ~10k FDEs)
#
# Size table, per linked twin X / X.gs of testdata/link (X.gs linked by GNU ld
# from objects assembled with --gsframe): the .sframe of sframe-gen --raw X
# (default mode, and --gas-compat) against X.gs's .sframe, restricted to the
# functions (start addresses) both have: index entry (16) + attribute record
# (5) + FREs, summed. Also the whole sections and the functions one side
# has and the other not.
set -euo pipefail
export LC_NUMERIC=C # $EPOCHREALTIME with a point
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
STAT=${STAT:-median}
if [ -n "${SFRAME_GEN:-}" ]; then
  BIN=$(readlink -f "$SFRAME_GEN") # a prebuilt binary (e.g. an older version, for before/after)
else
  CGO_ENABLED=0 go build -o bin/sframe-gen ./cmd/sframe-gen
  BIN=$PWD/bin/sframe-gen
fi
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

# one CMD...: "WALL_NS CPU_NS" of one run of CMD (CPU: user+system from
# /usr/bin/time, 10 ms resolution). Files named in $CLEAN are removed before
# the run, and the page cache is written back (sync), outside the timing, so
# that no run pays for the writeback of an earlier one's 200 MB.
# The wall time is read from bash's $EPOCHREALTIME (no process started to
# read the clock); what /usr/bin/time adds is timed on /bin/true and printed
# as "harness" (about 1-2 ms: counted in every wall time, readelf's too).
one() {
  local t0 t1 c
  [ -n "${CLEAN:-}" ] && rm -f $CLEAN
  sync
  t0=$EPOCHREALTIME
  /usr/bin/time -o "$TMP/time" -f '%U %S' "$@" >/dev/null 2>&1 || true
  t1=$EPOCHREALTIME
  c=$(tail -n1 "$TMP/time")
  awk -v t0="$t0" -v t1="$t1" -v c="$c" 'BEGIN { split(c, a, " "); printf "%d %d\n", (t1 - t0) * 1e9, (a[1] + a[2]) * 1e9 }'
}

# pick FILE: "WALL_NS CPU_NS" of the runs in FILE (one line each): with
# STAT=median the median wall time and the median CPU time, with STAT=best
# the run with the best wall time.
pick() {
  if [ "$STAT" = best ]; then
    sort -n "$1" | head -n1
  else
    paste <(cut -d' ' -f1 "$1" | sort -n) <(cut -d' ' -f2 "$1" | sort -n) |
      awk '{ w[NR] = $1; c[NR] = $2 } END { m = int((NR + 1) / 2); print w[m], c[m] }'
  fi
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, RUNS=$RUNS, STAT=$STAT"
: >"$TMP/t.true"
for ((i = 0; i < RUNS; i++)); do one /bin/true >>"$TMP/t.true"; done
read -r harness _ < <(pick "$TMP/t.true")
awk -v h="$harness" 'BEGIN { printf "harness: %.1f ms of wall time per run (/bin/true timed alike)\n", h / 1e6 }'
go run ./testdata/pagecost # what a fresh page costs here (docs/performance.md)
printf '%-40s %7s %8s %8s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %6s %7s %7s %6s %6s\n' \
  file FDEs re_wall re_cpu raw_wal raw_cpu raw/re rawc/re raw0/re cp_wall cp_cpu pat_wal pat_cpu pat/cp rep_wal RSS_Mi ns/FDE cns/FDE raw_PF pat_PF
for f in "$@"; do
  fdes=$("$BIN" stats --json "$f" 2>/dev/null | sed -n 's/.*"cfi_functions": *\([0-9]*\).*/\1/p' | head -n1)
  fdes=${fdes:-0}
  cp "$f" "$TMP/in"
  : >"$TMP/t.re"; : >"$TMP/t.raw"; : >"$TMP/t.raw0"; : >"$TMP/t.cp"; : >"$TMP/t.pat"; : >"$TMP/t.rep"
  # The commands compared take turns, so that each ratio compares runs made
  # in the same minutes (this machine's speed moves by a third within
  # minutes), and in the same conditions: the runs that write 200 MB (cp,
  # patch) apart from those that do not (readelf, raw), after which each
  # of those met memory that the writes and their removal had just
  # churned (measured: raw 45 ms and readelf 958 among them, 27-30 and
  # 810-850 apart).
  for ((i = 0; i < RUNS; i++)); do
    one sh -c "$READELF --debug-dump=frames-interp $TMP/in >/dev/null" >>"$TMP/t.re"
    CLEAN="$TMP/raw" one "$BIN" --raw -o "$TMP/raw" "$TMP/in" >>"$TMP/t.raw"
    one "$BIN" --raw "$TMP/in" >>"$TMP/t.raw0" # to standard output: /dev/null, as readelf's
  done
  for ((i = 0; i < RUNS; i++)); do
    CLEAN="$TMP/copy" one cp "$TMP/in" "$TMP/copy" >>"$TMP/t.cp"
    CLEAN="$TMP/out" one "$BIN" -o "$TMP/out" "$TMP/in" >>"$TMP/t.pat"
  done
  rm -f "$TMP/copy"
  # The replacing runs (each syncs 200 MB to disk) apart, so as not to
  # disturb the others.
  for ((i = 0; i < RUNS; i++)); do
    one "$BIN" -o "$TMP/out" "$TMP/in" >>"$TMP/t.rep" # over the output of the run before
  done
  read -r re rec < <(pick "$TMP/t.re")
  read -r raw rawc < <(pick "$TMP/t.raw")
  read -r raw0 _ < <(pick "$TMP/t.raw0")
  read -r cpt cpc < <(pick "$TMP/t.cp")
  read -r pat patc < <(pick "$TMP/t.pat")
  read -r rep repc < <(pick "$TMP/t.rep")
  /usr/bin/time -o "$TMP/time" -f '%M %R' "$BIN" -o "$TMP/out2" "$TMP/in" >/dev/null 2>&1
  read -r rss patpf < <(tail -n1 "$TMP/time")
  rm -f "$TMP/raw"
  /usr/bin/time -o "$TMP/time" -f '%R' "$BIN" --raw -o "$TMP/raw" "$TMP/in" >/dev/null 2>&1
  rawpf=$(tail -n1 "$TMP/time")
  awk -v n="$(basename "$f")" -v fd="$fdes" -v re="$re" -v rec="$rec" -v raw="$raw" -v rawc="$rawc" -v raw0="$raw0" \
      -v cp="$cpt" -v cpc="$cpc" -v pat="$pat" -v patc="$patc" -v rep="$rep" -v rss="$rss" -v rawpf="$rawpf" -v patpf="$patpf" 'BEGIN {
    printf "%-40s %7d %8.0f %8.0f %7.0f %7.0f %7.3f %7.3f %7.3f %7.0f %7.0f %7.0f %7.0f %7.2f %7.0f %6.1f %7.0f %7.0f %6d %6d\n",
      substr(n, 1, 40), fd, re/1e6, rec/1e6, raw/1e6, rawc/1e6, raw/re, (rec > 0 ? rawc/rec : 0), raw0/re,
      cp/1e6, cpc/1e6, pat/1e6, patc/1e6, pat/cp, rep/1e6, rss/1024, (fd > 0 ? raw/fd : 0), (fd > 0 ? rawc/fd : 0), rawpf, patpf
  }'
  rm -f "$TMP"/in "$TMP"/raw "$TMP"/copy "$TMP"/out "$TMP"/out2
done
echo "(times in ms; raw/re and pat/cp are wall-time ratios, rawc/re the CPU-time ratio; CPU = user+sys)"

[ "${SIZES:-1}" = 0 ] && exit 0
echo
echo "size against GNU ld (bytes of the functions both sections describe; whole sections; functions only in one)"
printf '%-34s %-10s %9s %9s %7s %9s %9s %6s %6s %6s\n' twin mode ours gnu ratio ours_all gnu_all only_us only_gnu bigger
for gs in testdata/link/*/*.gs.so testdata/link/*/*.gs.exe; do
  plain=${gs/.gs./.}
  [ -f "$plain" ] || continue
  "$BIN" dump --json "$gs" >"$TMP/gnu.json" 2>/dev/null || continue
  for mode in default gas-compat; do
    flags=()
    [ "$mode" = gas-compat ] && flags=(--gas-compat)
    "$BIN" "${flags[@]}" -o "$TMP/ours" "$plain" 2>/dev/null || continue
    "$BIN" dump --json "$TMP/ours" >"$TMP/ours.json" 2>/dev/null || continue
    python3 - "$TMP/ours.json" "$TMP/gnu.json" "${gs#testdata/link/}" "$mode" <<'EOF'
import json, sys
from collections import Counter
def funcs(path):
    d = json.load(open(path))
    out = {}
    for f in d["functions"]:
        asz = {"addr1": 1, "addr2": 2, "addr4": 4}[f["fre_type"]]
        n = 16 + 5
        for e in f["fres"]:
            n += asz + 1 + len(e["words"]) * (1 << ((e["info"] >> 5) & 3))
        out[(f["pc"], f["size"])] = out.get((f["pc"], f["size"]), 0) + n
    return out
ours, gnu = funcs(sys.argv[1]), funcs(sys.argv[2])
# The .gs twin's code may sit at other addresses (ld put .sframe before
# it): match functions by size and start address shifted by the most
# common shift among same-size functions.
shifts = Counter()
for (pc, sz) in gnu:
    for (qc, qz) in ours:
        if sz == qz:
            shifts[pc - qc] += 1
delta = shifts.most_common(1)[0][0] if shifts else 0
ours = {(pc + delta, sz): n for (pc, sz), n in ours.items()}
both = ours.keys() & gnu.keys()
o = sum(ours[k] for k in both); g = sum(gnu[k] for k in both)
bigger = sum(1 for k in both if ours[k] > gnu[k])
print("%-34s %-10s %9d %9d %7.4f %9d %9d %6d %6d %6d" % (sys.argv[3], sys.argv[4], o, g, o / g if g else 0,
      28 + sum(ours.values()), 28 + sum(gnu.values()), len(ours.keys() - gnu.keys()), len(gnu.keys() - ours.keys()), bigger))
EOF
  done
done
echo "(bigger: functions whose SFrame is larger in ours than in GNU's)"
