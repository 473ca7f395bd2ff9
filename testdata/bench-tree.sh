#!/usr/bin/env bash
# bench-tree.sh: the batch form on a whole tree, against cp -a of the same
# tree, alternated in one run (docs/performance.md, "A tree").
#
#   testdata/bench-tree.sh [DIR]    default DIR: /usr/lib/x86_64-linux-gnu (its *.so* files)
#   RUNS=N (default 7), JOBS=N (default 2), SMALL=N small files (default 400)
#   SFRAME_GEN=PATH: time that binary instead of building the tree's.
#   BASE=PATH: also time that sframe-gen (an older build) in the same rounds,
#     in place on its own fresh copy and with --output-dir, for a
#     comparison made in the same conditions.
#   FLAGS="--sync": more flags for the timed sframe-gen runs.
#   OBJCOPY=PATH (default objcopy): the peer timed in the same rounds;
#     OBJCOPY= leaves it out.
#   CMDS="cp out ...": time only these of the commands below (cp, sfg,
#     out, rc, oc, base, baseout; cp always), and print only their lines.
#     An in-place run frees the inodes of the files it replaces, which
#     the commands after it in the round then meet (WAIT).
#   WAIT=SECONDS: each round starts that long after the last round's trees
#     are deleted (and synced): on ext4 without a journal a new inode is
#     sought past every inode freed in the minute before (cp -a took 0.2 s
#     in one round and 2 s in another); 65 lets none be that recent. The
#     trees are deleted, not kept: kept, the page cache grows into memory
#     the virtual machine's host has not backed yet, and every copy slows
#     (cp -a 0.3 s -> 2 s, 90% of it in the kernel's memcpy).
#   The tree is read (cat) before each timed command, so that every one
#   reads it from the page cache: a kernel that reclaims idle memory
#   (DAMON's pageout of memory idle for a minute, on the machines of
#   docs/performance.md) drops its pages during a WAIT, and a command then
#   waits for the disk (cp -a and --output-dir read the tree itself).
#   PREWARM=MiB: before each timed command (untimed, and before the fresh
#     copy an in-place command starts from), a file of that many MiB is
#     written and deleted, so that the page cache the command fills
#     is memory the virtual machine's host has backed, as on bare metal: a
#     host that takes back the memory its guest frees (free page
#     reporting) makes the first writes into it cost a fault of its own
#     each (400 MiB written in 0.62-0.68 s after 10-65 s idle, 0.10 s
#     right after another file's 400 MiB were deleted; docs/performance.md),
#     and in a round only the command that meets that memory first pays
#     it. 1024 covers the tree's copy and a run's own memory.
#   THEN_SYNC=1: each timed run ends after a sync, so that the writes to the
#     disk count for every command (cp -a leaves its data in the page cache
#     when it exits; a run in place has written most of it out at the
#     renames).
#
# Tree: a copy (cp -a: symbolic links kept) of DIR's *.so* files, made once.
# Each round, in an order rotated every round, each after a sync (an
# in-place run right after its own fresh copy of the tree, untimed):
#   cp -a TREE B                   the copy, the reference of the target;
#   sframe-gen -q -j JOBS A        in place: every file read, patched,
#                                  renamed (synced too with FLAGS=--sync);
#   sframe-gen -q -j JOBS --output-dir O TREE
#                                  a new patched tree, as cp -a makes a copy;
#   replacecopy -j JOBS R          every file replaced by a copy of itself
#                                  the same way (testdata/replacecopy): what
#                                  replacing the files costs the file system,
#                                  whatever the program;
#   OBJCOPY FILE, JOBS at a time, on a fresh copy X
#                                  the peer: GNU objcopy rewrites each file
#                                  (no options) and renames it over the old;
#   BASE -q -j JOBS C              with BASE=;
#   BASE -q -j JOBS --output-dir P TREE
#                                  with BASE=.
# The file system's state moves these times: on ext4 without a journal a
# new inode is sought past those freed in the last minute, so cp -a itself
# takes 0.3 s in one run and 1 s in the next (docs/performance.md); each
# round's ratio compares runs made in the same state.
# Printed: the median wall times, the median of the per-round ratios
# to cp -a, --output-dir / cp -a (target <= 1.3), the CPU the sections
# alone take (testdata/lowertree: every file's section made on one CPU,
# nothing written) against cp -a's wall and the bound it sets on JOBS
# CPUs (cp -a's CPU and the sections', shared between them, over cp -a's
# wall), in place / replacecopy
# (the floor: target <= 1.15), in place / objcopy (target <= 0.5), the peak RSS of the batch run (target <= 64 MiB), a second
# run over the patched tree (everything up to date: nothing written), and
# the same rounds over SMALL small files (< 100 FDEs: copies of the small
# linked files of testdata/link/x86_64): the wall time each command adds
# per file, its time minus cp -a's divided by the number of files (target
# for the batch in place <= 0.25 ms).
set -euo pipefail
export LC_NUMERIC=C
cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}
JOBS=${JOBS:-2}
SMALL=${SMALL:-400}
FLAGS=${FLAGS:-}
THEN_SYNC=${THEN_SYNC:-}
WAIT=${WAIT:-0}
PREWARM=${PREWARM:-0}
OBJCOPY=${OBJCOPY-objcopy}
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
prewarmed=
[ "$PREWARM" = 0 ] || prewarmed=", $PREWARM MiB of page cache written and deleted before each command"
echo "tree: $DIR/*.so*: $files files, $links symbolic links, $((bytes >> 20)) MiB; sframe-gen -j $JOBS $FLAGS; $RUNS rounds${THEN_SYNC:+, each run timed to the end of a sync}$prewarmed; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./testdata/pagecost

# wall CMD...: "WALL CPU" seconds of one run of CMD, after a sync (CPU:
# user+system from /usr/bin/time, 10 ms resolution; steadier than the wall
# time on a loaded machine).
wall() {
  local t0 t1
  sync
  t0=$EPOCHREALTIME
  /usr/bin/time -o "$TMP/cpu" -f '%U %S' "$@" >/dev/null 2>&1 || true
  if [ -n "$THEN_SYNC" ]; then sync; fi
  t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" -v c="$(tail -n1 "$TMP/cpu")" 'BEGIN { split(c, x, " "); printf "%.4f %.2f\n", b - a, x[1] + x[2] }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

BASEBIN=${BASE:+$(readlink -f "$BASE")}
go build -o "$TMP/replacecopy" ./testdata/replacecopy
go build -o "$TMP/lowertree" ./testdata/lowertree
# timed NAME: one timed run of the command NAME stands for, appended to
# $TMP/NAME.
# An in-place command's fresh copy is made just before it (untimed), so
# that each one meets the file system in the same state: made first in
# a round, a copy met a slower search for free inodes (the same binary in
# two places of the round: CPU 1.65 s in one, 1.18 s in the other).
timed() {
  warm "$SRC"
  prewarm
  case $1 in
  cp) wall cp -a "$SRC" "$TMP/b" ;;
  sfg) fresh a && wall "$BIN" -q -j "$JOBS" $FLAGS "$TMP/a" ;;
  out) wall "$BIN" -q -j "$JOBS" $FLAGS --output-dir "$TMP/o" "$SRC" ;;
  rc) fresh r && wall "$TMP/replacecopy" -j "$JOBS" "$TMP/r" ;;
  base) fresh c && wall "$BASEBIN" -q -j "$JOBS" $FLAGS "$TMP/c" ;;
  baseout) wall "$BASEBIN" -q -j "$JOBS" $FLAGS --output-dir "$TMP/p" "$SRC" ;;
  oc) fresh x && wall sh -c 'find "$1" -type f -print0 | xargs -0 -n 1 -P "$2" "$3"' sh "$TMP/x" "$JOBS" "$OBJCOPY" ;;
  esac >>"$TMP/$1"
}
fresh() { cp -a "$SRC" "$TMP/$1"; }
# warm DIR: DIR's files read, into the page cache.
warm() { find "$1" -type f -exec cat {} + >/dev/null; }
# prewarm: PREWARM MiB of page cache written, then freed (PREWARM).
prewarm() {
  [ "$PREWARM" != 0 ] || return 0
  dd if=/dev/zero of="$TMP/prewarm" bs=1M count="$PREWARM" status=none
  rm -f "$TMP/prewarm"
}
if [ -n "${CMDS:-}" ]; then
  read -r -a cmds <<<"$CMDS"
  [[ " ${cmds[*]} " == *" cp "* ]] || cmds=(cp "${cmds[@]}")
else
  cmds=(cp sfg out rc ${OBJCOPY:+oc} ${BASEBIN:+base baseout})
fi
# rounds SRC: RUNS rounds of every command on SRC, in an order rotated
# every round.
rounds() {
  SRC=$1
  for c in "${cmds[@]}"; do : >"$TMP/$c"; done
  for r in $(seq "$RUNS"); do
    rm -rf "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/r" "$TMP/o" "$TMP/p" "$TMP/x"
    if [ "$WAIT" != 0 ]; then
      sync
      sleep "$WAIT"
    fi
    n=${#cmds[@]}
    for k in $(seq 0 $((n - 1))); do
      timed "${cmds[$(( (k + r) % n ))]}"
    done
  done
}
rounds "$TMP/tree"
# ratio A B: the per-round ratios of A's wall times to B's.
ratio() { paste -d' ' "$TMP/$1" "$TMP/$2" | awk '{ printf "%.3f\n", $1 / $3 }'; }
# summary A B: the median of A/B over the rounds, min and max.
summary() { local f; f=$(ratio "$1" "$2"); printf '%.3f (median of the rounds; min %.3f, max %.3f)' "$(median <<<"$f")" "$(sort -g <<<"$f" | head -1)" "$(sort -g <<<"$f" | tail -1)"; }
med() { cut -d' ' -f"$2" "$TMP/$1" | median; }
# has NAME: NAME was timed (CMDS).
has() { [ -s "$TMP/$1" ]; }
printf 'cp -a %.3f s (CPU %.2f s)\n' "$(med cp 1)" "$(med cp 2)"
if has sfg; then
  printf 'sframe-gen -j %s %.3f s (CPU %.2f s): / cp -a %s\n' "$JOBS" "$(med sfg 1)" "$(med sfg 2)" "$(summary sfg cp)"
fi
if has out; then
  printf 'sframe-gen -j %s --output-dir (a new tree) %.3f s (CPU %.2f s): / cp -a %s\n' \
    "$JOBS" "$(med out 1)" "$(med out 2)" "$(summary out cp)"
fi
lower=$("$TMP/lowertree" "$TMP/tree")
lcpu=${lower%% s CPU*}
printf 'the sections alone (testdata/lowertree, one CPU, nothing written): %s; / cp -a wall %.3f; --output-dir bound on %s CPUs (cp -a CPU + sections CPU) / %s / cp -a wall: %.3f\n' \
  "$lower" "$(awk -v l="$lcpu" -v c="$(med cp 1)" 'BEGIN { print l / c }')" "$JOBS" "$JOBS" \
  "$(awk -v l="$lcpu" -v c="$(med cp 1)" -v u="$(med cp 2)" -v j="$JOBS" 'BEGIN { print (u + l) / j / c }')"
if has rc; then
  printf 'replacecopy -j %s (every file replaced by a copy of itself) %.3f s (CPU %.2f s): / cp -a %s\n' \
    "$JOBS" "$(med rc 1)" "$(med rc 2)" "$(summary rc cp)"
  has sfg && printf 'in place / replacecopy (the floor) %s\n' "$(summary sfg rc)"
fi
if has oc; then
  printf '%s, %s at a time %.3f s (CPU %.2f s): / cp -a %s\n' \
    "$OBJCOPY" "$JOBS" "$(med oc 1)" "$(med oc 2)" "$(summary oc cp)"
  has sfg && printf 'in place / objcopy %s\n' "$(summary sfg oc)"
fi
if has base; then
  printf 'BASE %s: %.3f s (CPU %.2f s): / cp -a %s\n' "$BASE" "$(med base 1)" "$(med base 2)" "$(summary base cp)"
  has sfg && printf 'in place / BASE in place %s\n' "$(summary sfg base)"
fi
if has baseout; then
  printf 'BASE --output-dir %.3f s (CPU %.2f s): / cp -a %s\n' "$(med baseout 1)" "$(med baseout 2)" "$(summary baseout cp)"
  has out && printf -- '--output-dir / BASE --output-dir %s\n' "$(summary out baseout)"
fi
# per round: cp -a's wall, then each other command's over it.
others=()
for c in "${cmds[@]}"; do [ "$c" = cp ] || others+=("$c"); done
printf 'per round (cp -a wall: %s / cp -a):' "$(IFS=/; echo "${others[*]}")"
for r in $(seq "$RUNS"); do
  printf ' %.2f:' "$(sed -n "${r}p" "$TMP/cp" | cut -d' ' -f1)"
  sep=
  for c in "${others[@]}"; do
    printf '%s%s' "$sep" "$(ratio "$c" cp | sed -n "${r}p")"
    sep=/
  done
done
echo

rm -rf "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/r" "$TMP/o" "$TMP/p" "$TMP/x"
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
rounds "$TMP/small"
# added NAME: NAME's wall time minus cp -a's, per file, in each round.
added() { paste -d' ' "$TMP/$1" "$TMP/cp" | awk -v n="$SMALL" '{ printf "%.4f\n", ($1 - $3) * 1000 / n }'; }
# per NAME LABEL: NAME's line of the small files' figures.
per() {
  local f; f=$(added "$1")
  printf '  %s %.3f s (CPU %.2f s): %.3f ms added per file (median of the rounds; min %.3f, max %.3f)\n' "$2" \
    "$(med "$1" 1)" "$(med "$1" 2)" "$(median <<<"$f")" "$(sort -g <<<"$f" | head -1)" "$(sort -g <<<"$f" | tail -1)"
}
printf 'small files (%d, < 100 FDEs): cp -a %.3f s (CPU %.2f s); against it:\n' "$SMALL" "$(med cp 1)" "$(med cp 2)"
has sfg && per sfg "sframe-gen in place"
has out && per out "sframe-gen --output-dir"
has rc && per rc "replacecopy"
has oc && per oc "$OBJCOPY"
has base && per base "BASE $BASE"
has baseout && per baseout "BASE --output-dir"
true
