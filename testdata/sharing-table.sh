#!/usr/bin/env bash
# sharing-table.sh [FILE...]: the table of docs/sharing.md. For each file,
# `sframe-gen stats --json --dry-run` gives the .sframe the default command
# writes (shared FRE blocks, or one block per function and why), the size
# with one block per function (GNU ld's layout and size), and .eh_frame +
# .eh_frame_hdr. Without FILEs, the machine's big programs and libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
SFRAME_GEN=${SFRAME_GEN:-bin/sframe-gen}
[ -x "$SFRAME_GEN" ] || make -s build
if [ $# -eq 0 ]; then
  set -- $(ls -d /root/.rustup/toolchains/stable-*/lib/libLLVM.so.* \
    /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 /usr/bin/node /usr/lib/gcc/x86_64-linux-gnu/12/cc1plus \
    /usr/bin/python3.11 /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
    /usr/aarch64-linux-gnu/lib/libc.so.6 /usr/aarch64-linux-gnu/lib/libstdc++.so.6 \
    /usr/s390x-linux-gnu/lib/libc.so.6 /usr/s390x-linux-gnu/lib/libstdc++.so.6 2>/dev/null)
fi
echo '| file | ABI | `.eh_frame` + `.eh_frame_hdr` | one block per function (GNU ld) | default | default / GNU ld | default / `.eh_frame` + hdr |'
echo '|---|---|---|---|---|---|---|'
for f in "$@"; do
  "$SFRAME_GEN" stats --json --dry-run "$f" | jq -r --arg f "$f" '
    (.eh_frame_bytes + .eh_frame_hdr_bytes) as $eh
    | "| `\($f)` | \(.abi | sub("SFRAME_ABI_"; "") | ascii_downcase) | \($eh) | \(.sframe_bytes_unshared) | \(.sframe_bytes)\(if .shared then "" else " (not shared: \(.unshared_reason | sub(" \\(.*"; "")))" end) | \(.sframe_bytes * 1000 / .sframe_bytes_unshared | floor / 1000) | \(if $eh > 0 then (.sframe_bytes * 1000 / $eh | floor / 1000) else "-" end) |"'
done
