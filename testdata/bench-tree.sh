#!/usr/bin/env bash
# bench-tree.sh: the batch form on a whole tree, against cp -a of the same
# tree, alternated in one run (docs/performance.md, "A tree").
#
#   testdata/bench-tree.sh [DIR]    default DIR: /usr/lib/x86_64-linux-gnu (its *.so* files)
#   RUNS=N (default 7), JOBS=N (default 2), SMALL=N small files (default 400)
#   SFRAME_GEN=PATH: time that binary instead of building the tree's.
#   BASE=PATH: also time that sframe-gen (an older build) in the same rounds,
#     on its own fresh copy, for a comparison made in the same conditions.
#   FLAGS="--sync": more flags for the timed sframe-gen runs.
#
# Tree: a copy (cp -a: symbolic links kept) of DIR's *.so* files, made once.
# Each round: two fresh copies A and B (untimed, then sync); then, in turns
# (the order swapped every round), `cp -a TREE B2` and `sframe-gen -q -j JOBS A`
# (in place: every file read, patched, renamed; synced too with FLAGS=--sync),
# each after a sync.
# The file system's state moves these times: on ext4 without a journal a
# new inode is sought past those freed in the last minute, so cp -a itself
# takes 0.3 s in one run and 1 s in the next (docs/performance.md); each
# round's ratio compares runs made in the same state.
# Printed: the median wall times, the median of the per-round ratios
# (target <= 1.5), the peak RSS of the batch run (target <= 64 MiB), a
# second run over the patched tree (everything up to date: nothing written),
# and the wall time added per small file (< 100 FDEs: SMALL copies of the
# small linked files of testdata/link/x86_64), batch minus cp -a, divided by
# the number of files (target <= 0.25 ms).
set -euo pipefail
export LC_NUMERIC=C
cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}
JOBS=${JOBS:-2}
SMALL=${SMALL:-400}
FLAGS=${FLAGS:-}
DIR=${1:-/usr/lib/x86_64-linux-gnu}
if [ -n "${SFRAME_GEN:-}" ]; then
  BIN=$(readlink -f "$SFRAME_GEN")
else
  CGO_ENABLED=0 go build -o bin/sframe-gen ./cmd/sframe-gen
  BIN=$PWD/bin/sframe-gen
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sframe-tree.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

mkdir "$TMP/tree"
cp -a "$DIR"/*.so* "$TMP/tree/"
files=$(find "$TMP/tree" -type f | wc -l)
links=$(find "$TMP/tree" -type l | wc -l)
bytes=$(du -sb "$TMP/tree" | cut -f1)
echo "tree: $DIR/*.so*: $files files, $links symbolic links, $((bytes >> 20)) MiB; sframe-gen -j $JOBS $FLAGS; $RUNS rounds; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./testdata/pagecost

# wall CMD...: "WALL CPU" seconds of one run of CMD, after a sync (CPU:
# user+system from /usr/bin/time, 10 ms resolution; steadier than the wall
# time on a loaded machine).
wall() {
  local t0 t1
  sync
  t0=$EPOCHREALTIME
  /usr/bin/time -o "$TMP/cpu" -f '%U %S' "$@" >/dev/null 2>&1 || true
  t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" -v c="$(tail -n1 "$TMP/cpu")" 'BEGIN { split(c, x, " "); printf "%.4f %.2f\n", b - a, x[1] + x[2] }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$TMP/cp" ; : >"$TMP/sfg" ; : >"$TMP/ratio" ; : >"$TMP/base" ; : >"$TMP/bratio"
BASEBIN=${BASE:+$(readlink -f "$BASE")}
for r in $(seq "$RUNS"); do
  rm -rf "$TMP/a" "$TMP/b" "$TMP/c"
  cp -a "$TMP/tree" "$TMP/a"
  [ -n "$BASEBIN" ] && cp -a "$TMP/tree" "$TMP/c"
  b=
  if [ $((r % 2)) -eq 1 ]; then
    c=$(wall cp -a "$TMP/tree" "$TMP/b"); s=$(wall "$BIN" -q -j "$JOBS" $FLAGS "$TMP/a")
    [ -n "$BASEBIN" ] && b=$(wall "$BASEBIN" -q -j "$JOBS" $FLAGS "$TMP/c")
  else
    [ -n "$BASEBIN" ] && b=$(wall "$BASEBIN" -q -j "$JOBS" $FLAGS "$TMP/c")
    s=$(wall "$BIN" -q -j "$JOBS" $FLAGS "$TMP/a"); c=$(wall cp -a "$TMP/tree" "$TMP/b")
  fi
  echo "$c" >>"$TMP/cp"; echo "$s" >>"$TMP/sfg"
  awk -v s="${s% *}" -v c="${c% *}" 'BEGIN { printf "%.3f\n", s / c }' >>"$TMP/ratio"
  if [ -n "$b" ]; then
    echo "$b" >>"$TMP/base"
    awk -v s="${b% *}" -v c="${c% *}" 'BEGIN { printf "%.3f\n", s / c }' >>"$TMP/bratio"
  fi
done
printf 'cp -a %.3f s (CPU %.2f s)   sframe-gen -j %s %.3f s (CPU %.2f s)   wall ratio %.3f (median of the rounds; min %.3f, max %.3f; of the medians %.3f)\n' \
  "$(cut -d' ' -f1 "$TMP/cp" | median)" "$(cut -d' ' -f2 "$TMP/cp" | median)" "$JOBS" \
  "$(cut -d' ' -f1 "$TMP/sfg" | median)" "$(cut -d' ' -f2 "$TMP/sfg" | median)" \
  "$(median <"$TMP/ratio")" "$(sort -g "$TMP/ratio" | head -1)" "$(sort -g "$TMP/ratio" | tail -1)" \
  "$(awk -v s="$(cut -d' ' -f1 "$TMP/sfg" | median)" -v c="$(cut -d' ' -f1 "$TMP/cp" | median)" 'BEGIN { print s / c }')"
if [ -n "$BASEBIN" ]; then
  printf 'BASE %s: %.3f s (CPU %.2f s)   wall ratio %.3f (median of the rounds; min %.3f, max %.3f)\n' "$BASE" \
    "$(cut -d' ' -f1 "$TMP/base" | median)" "$(cut -d' ' -f2 "$TMP/base" | median)" \
    "$(median <"$TMP/bratio")" "$(sort -g "$TMP/bratio" | head -1)" "$(sort -g "$TMP/bratio" | tail -1)"
fi
printf 'per round (cp -a wall, sframe-gen/cp -a%s):' "${BASEBIN:+, BASE/cp -a}"
paste -d' ' <(cut -d' ' -f1 "$TMP/cp") "$TMP/ratio" ${BASEBIN:+"$TMP/bratio"} | awk '{ printf " %.2f:%s", $1, $2; if (NF > 2) printf "/%s", $3 } END { print "" }'

rm -rf "$TMP/a" "$TMP/b" "$TMP/c"
cp -a "$TMP/tree" "$TMP/a"
sync
/usr/bin/time -o "$TMP/time" -f '%e %M' "$BIN" -j "$JOBS" "$TMP/a" 2>"$TMP/summary" || true
read -r e m <"$TMP/time"
echo "peak RSS of the batch run: $((m / 1024)) MiB ($e s); $(tail -1 "$TMP/summary" | sed 's/^sframe-gen: //')"
sync
before=$(find "$TMP/a" -type f -newer "$TMP/time" | wc -l)
/usr/bin/time -o "$TMP/time" -f '%e %M' "$BIN" -j "$JOBS" "$TMP/a" 2>"$TMP/summary" || true
read -r e m <"$TMP/time"
after=$(find "$TMP/a" -type f -newer "$TMP/time" | wc -l)
echo "second run: $e s, $((m / 1024)) MiB, files written: $((after - before)); $(tail -1 "$TMP/summary" | sed 's/^sframe-gen: //')"

# Small files: SMALL copies of the small linked goldens (< 100 FDEs each).
rm -rf "$TMP/a" "$TMP/b" "$TMP/small"
mkdir "$TMP/small"
set -- testdata/link/x86_64/{pie,nopie,gc}.exe testdata/link/x86_64/{lazy,now,direct}.so
for i in $(seq "$SMALL"); do
  f=${*:$(( (i - 1) % $# + 1 )):1}
  cp "$f" "$TMP/small/$i-$(basename "$f")"
done
: >"$TMP/cp" ; : >"$TMP/sfg" ; : >"$TMP/added" ; : >"$TMP/base" ; : >"$TMP/badded"
for r in $(seq "$RUNS"); do
  rm -rf "$TMP/a" "$TMP/b" "$TMP/c"
  cp -a "$TMP/small" "$TMP/a"
  [ -n "$BASEBIN" ] && cp -a "$TMP/small" "$TMP/c"
  b=
  if [ $((r % 2)) -eq 1 ]; then
    c=$(wall cp -a "$TMP/small" "$TMP/b"); s=$(wall "$BIN" -q -j "$JOBS" $FLAGS "$TMP/a")
    [ -n "$BASEBIN" ] && b=$(wall "$BASEBIN" -q -j "$JOBS" $FLAGS "$TMP/c")
  else
    [ -n "$BASEBIN" ] && b=$(wall "$BASEBIN" -q -j "$JOBS" $FLAGS "$TMP/c")
    s=$(wall "$BIN" -q -j "$JOBS" $FLAGS "$TMP/a"); c=$(wall cp -a "$TMP/small" "$TMP/b")
  fi
  echo "$c" >>"$TMP/cp"; echo "$s" >>"$TMP/sfg"
  awk -v s="${s% *}" -v c="${c% *}" -v n="$SMALL" 'BEGIN { printf "%.4f\n", (s - c) * 1000 / n }' >>"$TMP/added"
  if [ -n "$b" ]; then
    echo "$b" >>"$TMP/base"
    awk -v s="${b% *}" -v c="${c% *}" -v n="$SMALL" 'BEGIN { printf "%.4f\n", (s - c) * 1000 / n }' >>"$TMP/badded"
  fi
done
printf 'small files (%d, < 100 FDEs): cp -a %.3f s (CPU %.2f s), sframe-gen %.3f s (CPU %.2f s): %.3f ms added per file (median of the rounds; min %.3f, max %.3f)\n' \
  "$SMALL" "$(cut -d' ' -f1 "$TMP/cp" | median)" "$(cut -d' ' -f2 "$TMP/cp" | median)" \
  "$(cut -d' ' -f1 "$TMP/sfg" | median)" "$(cut -d' ' -f2 "$TMP/sfg" | median)" \
  "$(median <"$TMP/added")" "$(sort -g "$TMP/added" | head -1)" "$(sort -g "$TMP/added" | tail -1)"
if [ -n "$BASEBIN" ]; then
  printf 'small files, BASE %s: %.3f s (CPU %.2f s): %.3f ms added per file (median of the rounds; min %.3f, max %.3f)\n' "$BASE" \
    "$(cut -d' ' -f1 "$TMP/base" | median)" "$(cut -d' ' -f2 "$TMP/base" | median)" \
    "$(median <"$TMP/badded")" "$(sort -g "$TMP/badded" | head -1)" "$(sort -g "$TMP/badded" | tail -1)"
fi
