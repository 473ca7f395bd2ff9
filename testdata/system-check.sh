#!/bin/sh
# system-check.sh: what generate writes, verify must accept, on every file of a machine.
#
#   testdata/system-check.sh [-j N] [-k] [DIR...]      default DIR: /usr
#
# Copies every 64-bit ELF file and static archive under the DIRs (regular files, not
# following symbolic links) into a scratch tree, runs one batch `sframe-gen` over it, runs
# `sframe-gen verify` on every file it patched, then a second batch run, which must write
# nothing. Prints the counts and every failure: files the batch failed on, files verify
# rejects (exit 1: problems; exit 2: cannot be checked), files the second run rewrote.
# Exit status 0 when there is no failure, 1 otherwise.
#
# Archives: `sframe-gen verify` reads them when it can; otherwise each ELF member is
# extracted (`ar x`, members of one name: the last) and verified as FILE.a(MEMBER).
#
# Not part of `make test`: on a Debian machine with the CI packages, /usr holds about 3,200
# such files (3.6 GB). -j N: jobs for the batch and verify (default: the CPUs). -k: keep
# the scratch tree. SFRAME_GEN: the binary to run (default: built from this checkout).
# Run it with nice, in the background, on a shared machine.
set -eu
jobs=$(nproc 2>/dev/null || echo 2)
keep=0
while [ $# -gt 0 ]; do
  case $1 in
    -j) jobs=$2; shift 2 ;;
    -k) keep=1; shift ;;
    --) shift; break ;;
    -*) echo "usage: $0 [-j N] [-k] [DIR...]" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- /usr
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/system-check.XXXXXX")
cleanup() { [ "$keep" = 1 ] && echo "scratch tree kept: $scratch" || rm -rf "$scratch"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

bin=${SFRAME_GEN:-}
if [ -z "$bin" ]; then
  bin=$scratch/sframe-gen
  (cd "$here" && PATH=/usr/local/go/bin:$PATH go build -o "$bin" ./cmd/sframe-gen)
fi

# The files: 64-bit ELF (EI_CLASS 2) or "!<arch>\n", copied with their paths under tree/.
tree=$scratch/tree
mkdir -p "$tree"
list=$scratch/files
find "$@" -xdev -type f -size +7c -print0 2>/dev/null |
  perl -0 -ne 'chomp; open(my $f, "<", $_) or next; my $n = read($f, my $m, 8);
    print "$_\0" if $n == 8 && (substr($m, 0, 5) eq "\x7fELF\x02" || $m eq "!<arch>\n")' > "$list"
tr '\0' '\n' < "$list" | wc -l | sed 's/^/files found: /'
# cp --parents keeps the paths; hard links between copies are not kept (each is a file).
xargs -0 -r cp --parents -t "$tree" < "$list" 2>"$scratch/cp.err" || true
[ -s "$scratch/cp.err" ] && sed 's/^/copy: /' "$scratch/cp.err" | head -20
du -sh "$tree" | sed 's/\t.*//; s/^/scratch tree: /'

# One batch run.
start=$(date +%s)
"$bin" -q -j "$jobs" --report "$scratch/run1.jsonl" "$tree" 2>"$scratch/run1.err" || true
echo "batch run: $(( $(date +%s) - start )) s"
status() { sed -n 's/.*"status":"\([a-z-]*\)".*/\1/p' "$1" | sort | uniq -c | sed 's/^ */  /'; }
echo "statuses:"; status "$scratch/run1.jsonl"
fail=0
if grep -q '"status":"failed"' "$scratch/run1.jsonl"; then
  echo "batch failures:"
  grep '"status":"failed"' "$scratch/run1.jsonl" |
    sed 's/.*"file":"\([^"]*\)".*"reason":"\(\([^"\\]\|\\.\)*\)".*/  \1: \2/; s/\\"/"/g' | sed "s|$tree||"
  fail=1
fi

# verify on every patched file (archives: the archive, or each ELF member).
patched=$scratch/patched
sed -n 's/.*"file":"\([^"]*\)","status":"patched".*/\1/p' "$scratch/run1.jsonl" > "$patched"
cat > "$scratch/verify-one.sh" <<'EOF'
#!/bin/sh
# verify-one.sh BIN FILE: one line "RC FILE" per checked file, the findings into FILE.verify.
bin=$1; f=$2
one() {
  "$bin" verify "$1" > "$2.verify" 2>&1 && rc=0 || rc=$?
  # An archive member without CFI is left without SFrame by generate.
  [ "$rc" = 2 ] && [ "$(wc -l < "$2.verify")" = 1 ] && grep -q ': no .sframe section$' "$2.verify" && rc=skip
  echo "$rc $3"
}
if [ "$(head -c 8 "$f")" = '!<arch>' ]; then # the newline is cut
  if "$bin" verify "$f" > "$f.verify" 2>&1; then echo "0 $f"; exit 0; fi
  if ! grep -q 'magic' "$f.verify"; then echo "1 $f"; exit 0; fi
  d=$(mktemp -d "$f.members.XXXXXX")
  (cd "$d" && ar x "$f" 2>/dev/null)
  for m in "$d"/*; do
    [ -f "$m" ] && [ "$(head -c 4 "$m" | tail -c 3)" = ELF ] || continue
    one "$m" "$m" "$f($(basename "$m"))"
  done
  exit 0
fi
one "$f" "$f" "$f"
EOF
chmod +x "$scratch/verify-one.sh"
start=$(date +%s)
tr '\n' '\0' < "$patched" | xargs -0 -r -n 1 -P "$jobs" "$scratch/verify-one.sh" "$bin" > "$scratch/verify.txt"
echo "verify: $(wc -l < "$scratch/verify.txt") files checked in $(( $(date +%s) - start )) s (of $(wc -l < "$patched") patched)"
awk '{n[$1]++} END {printf "  exit 0 (accepted): %d\n  exit 1 (problems): %d\n  exit 2 (cannot be checked): %d\n  archive members without SFrame (no CFI): %d\n", n[0], n[1], n[2], n["skip"]}' "$scratch/verify.txt"
if awk '$1 != 0 && $1 != "skip" {found=1} END {exit !found}' "$scratch/verify.txt"; then
  echo "verify failures:"
  awk '$1 != 0 && $1 != "skip" {rc=$1; $1=""; sub(/^ /, ""); print rc "\t" $0}' "$scratch/verify.txt" | while IFS="$(printf '\t')" read -r rc f; do
    out=$f
    case $f in *\(*\)) a=${f%%(*}; m=${f#*(}; m=${m%)}; out=$(ls -d "$a".members.*/"$m" 2>/dev/null | head -1) ;; esac
    echo "  ${f#"$tree"} (exit $rc):"
    grep -v ': note: ' "$out.verify" 2>/dev/null | sed "s|$tree|…|g; s/^/    /" | head -5
  done
  fail=1
fi

# A second run writes nothing.
find "$tree" -name '*.members.*' -prune -exec rm -rf {} + 2>/dev/null || true
find "$tree" -name '*.verify' -delete
"$bin" -q -j "$jobs" --report "$scratch/run2.jsonl" "$tree" 2>/dev/null || true
again=$(grep -c '"status":"patched"' "$scratch/run2.jsonl" || true)
echo "second run: $again files rewritten"
if [ "$again" != 0 ]; then
  grep '"status":"patched"' "$scratch/run2.jsonl" | sed 's/.*"file":"\([^"]*\)".*/  \1/' | sed "s|$tree||" | head -20
  fail=1
fi
exit $fail
