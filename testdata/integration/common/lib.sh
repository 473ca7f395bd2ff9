# Shared checks for the integration fixtures (sourced by each fixture's test.sh).
# The test driver (cmd/sframe-gen/integration_test.go) runs every fixture as
#   bash testdata/integration/TOOL/test.sh
# in a fresh working directory ($WORK), with sframe-gen first on PATH and
# REPO set to the repository's root.
set -euo pipefail
: "${REPO:?REPO: the repository root}" "${WORK:?WORK: a scratch directory}"

fail() { echo "FAIL: $*" >&2; exit 1; }

# check_sframe FILE [RUNNER...]: FILE has a PT_GNU_SFRAME segment, sframe-gen
# verify finds nothing wrong with its .sframe, and FILE runs (through RUNNER,
# e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu, when given) with status 0.
check_sframe() {
  local f=$1; shift
  LC_ALL=C readelf -lW "$f" | grep -q 'GNU_SFRAME' || fail "$f: no PT_GNU_SFRAME segment"
  sframe-gen verify "$f" >/dev/null || fail "$f: sframe-gen verify found problems"
  case "$f" in
    *.so|*.so.*) ;;
    *) "$@" "$f" >/dev/null || fail "$f: does not run" ;;
  esac
}

# check_object FILE: a relocatable object with .sframe and .rela.sframe.
check_object() {
  LC_ALL=C readelf -SW "$1" | grep -q '\.rela\.sframe' || fail "$1: no .rela.sframe"
}

# cross_runner ARCH: the command that runs a program of ARCH on this machine.
cross_runner() {
  case "$1" in
    x86_64) echo "" ;;
    aarch64) echo "qemu-aarch64 -L /usr/aarch64-linux-gnu" ;;
    s390x) echo "qemu-s390x -L /usr/s390x-linux-gnu" ;;
  esac
}
