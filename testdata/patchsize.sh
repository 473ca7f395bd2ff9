#!/bin/sh
# patchsize.sh: how much a patch adds to linked files, and what re-runs with
# other options do to them. For each FILE: its size, the size after one run
# (and the bytes added), the .sframe section's size, the size after
# alternating --sframe-version 2 and 3 three times each on that output, and
# the PT_LOAD count of the three.
#
#   testdata/patchsize.sh [FILE...]   default: the machine's libz, ls and libc,
#                                     and the aarch64 and s390x cross libc6's
#                                     libatomic, libgcc_s and libc
#   SFRAME_GEN=PATH: run that binary instead of building the tree's.
set -eu
TD=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
if [ -z "${SFRAME_GEN:-}" ]; then
  (cd "$TD/.." && go build -o "$W/sframe-gen" ./cmd/sframe-gen)
  SFRAME_GEN=$W/sframe-gen
fi
if [ $# -eq 0 ]; then
  for f in "$(gcc -print-file-name=libz.so)" "$(command -v ls)" "$(gcc -print-file-name=libc.so.6)"; do
    set -- "$@" "$(readlink -f "$f")"
  done
  for a in aarch64 s390x; do
    for l in libatomic.so.1 libgcc_s.so.1 libc.so.6; do
      p=$($a-linux-gnu-gcc -print-file-name=$l 2>/dev/null) && [ -f "$p" ] && set -- "$@" "$(readlink -f "$p")"
    done
  done
fi
loads() { readelf -lW "$1" | grep -c ' LOAD '; }
printf 'file\tsize\tone run\tadded\t.sframe\tsix re-runs\tPT_LOADs\n'
for f in "$@"; do
  cp "$f" "$W/in"
  "$SFRAME_GEN" -q -o "$W/one" "$W/in"
  cp "$W/one" "$W/alt"
  for i in 1 2 3; do
    "$SFRAME_GEN" -q --sframe-version 2 "$W/alt"
    "$SFRAME_GEN" -q --sframe-version 3 "$W/alt"
  done
  sec=$(readelf -SW "$W/one" | awk '$2 == ".sframe" { print $6 }')
  in=$(stat -c %s "$W/in"); one=$(stat -c %s "$W/one")
  printf '%s (%s)\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$f")" "$(readelf -h "$f" | sed -n 's/.*Machine: *//p')" \
    "$in" "$one" "$((one - in))" "$((0x$sec))" "$(stat -c %s "$W/alt")" "$(loads "$W/in") $(loads "$W/one") $(loads "$W/alt")"
done
