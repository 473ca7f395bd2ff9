#!/usr/bin/env bash
# bench-lookup.sh: emit.Reader.Lookup against GNU libsframe's sframe_find_fre
# on the same SFrame section and the same PCs, alternated in one run
# (docs/performance.md, "PC lookup").
#
#   testdata/bench-lookup.sh [FILE]   default FILE: rust's (stable) libLLVM.so, else any big library
#   ROUNDS=N (default 7): rounds, each timing both sides (the order swapped every round)
#   PASSES=N (default 3): passes over the PCs in one timing (the best is kept)
#   PCS=N (default 1000000): random PCs inside functions, besides every FRE's start
#   GNU_SFRAME_REF: the reference prefix's bin (libsframe.a and its header beside it)
#
# The section is FILE's as sframe-gen --raw writes it for address 0, so a PC
# is an offset from the section's start, what sframe_find_fre takes. The PCs
# (testdata/lookupbench pcs) are every FRE's first address plus PCS random
# ones, shuffled; PLT stubs (PCMASK: libsframe and the specification differ)
# and flex FDEs (libsframe's getters need the FDE type, which sframe_find_fre
# does not return) are left out. Each side decodes the section once, untimed, then
# looks every PC up as an unwinder does (the FRE, then its CFA, RA and FP
# rules); both print the CPU ns per lookup of their best pass (the process's
# CPU time: a loaded machine's other work is not counted; the Go side's is
# the median of four copies of its loop, as the linker's placement of one
# moves its time), the PCs found and the sum of their CFA
# offsets, which must be equal. Printed: the medians and their ratio
# (Go / libsframe; below 1: emit.Reader is faster).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FILE=${1:-}
if [ -z "$FILE" ]; then
  for f in /root/.rustup/toolchains/stable-*/lib/libLLVM.so* /root/.rustup/toolchains/*/lib/libLLVM.so* /usr/lib/x86_64-linux-gnu/libLLVM*.so* /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
    [ -f "$f" ] && { FILE=$f; break; }
  done
fi
[ -n "$FILE" ] || { echo "bench-lookup.sh: no FILE given or found" >&2; exit 2; }
ROUNDS=${ROUNDS:-7} PASSES=${PASSES:-3} PCS=${PCS:-1000000}
ref=${GNU_SFRAME_REF:-/root/.cache/gnu-sframe-ref/bin}
root=$ref/../root
lib=$root/usr/lib/x86_64-linux-gnu/libsframe.a
[ -f "$lib" ] || { echo "bench-lookup.sh: no $lib (testdata/gnu-sframe-ref.sh installs it)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -std=gnu11 -O2 -Wall -Werror -I testdata/libsframe/include -I "$root/usr/include" \
  -o "$tmp/sframe-bench" testdata/libsframe/sframe-bench.c "$lib"
CGO_ENABLED=0 $GO build -o "$tmp/lookupbench" ./testdata/lookupbench
CGO_ENABLED=0 $GO build -o "$tmp/sframe-gen" ./cmd/sframe-gen
"$tmp/sframe-gen" --raw -o "$tmp/section" "$FILE"
"$tmp/lookupbench" pcs "$tmp/section" "$tmp/pcs" "$PCS"
echo "file: $FILE ($(stat -c %s "$tmp/section") bytes of .sframe, $(( $(stat -c %s "$tmp/pcs") / 8 )) PCs); $ROUNDS rounds of $PASSES passes; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

go_ns=() c_ns=() go_line="" c_line=""
for ((r = 0; r < ROUNDS; r++)); do
  for side in $( ((r % 2)) && echo "c go" || echo "go c"); do
    if [ "$side" = go ]; then
      go_line=$("$tmp/lookupbench" time "$tmp/section" "$tmp/pcs" "$PASSES"); go_ns+=("$(cut -d' ' -f2 <<<"$go_line")")
    else
      c_line=$("$tmp/sframe-bench" "$tmp/section" "$tmp/pcs" "$PASSES"); c_ns+=("$(cut -d' ' -f2 <<<"$c_line")")
    fi
  done
  if [ "${go_line#* * }" != "${c_line#* * }" ]; then
    echo "bench-lookup.sh: the two sides disagree: emit.Reader: $go_line; libsframe: $c_line" >&2
    exit 1
  fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
gm=$(median "${go_ns[@]}") cm=$(median "${c_ns[@]}")
echo "emit.Reader.Lookup: $gm CPU ns per lookup (rounds: ${go_ns[*]})"
echo "libsframe sframe_find_fre + offsets: $cm CPU ns per lookup (rounds: ${c_ns[*]})"
echo "agree: ${go_line#* * }"
awk -v g="$gm" -v c="$cm" 'BEGIN {printf "ratio emit.Reader / libsframe: %.2f\n", g / c}'
