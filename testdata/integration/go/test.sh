#!/usr/bin/env bash
# needs: go readelf strip
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp "$REPO"/testdata/integration/go/{main.go,go.mod} .
export GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# The recipe: build with .debug_frame (no -s), then sframe-gen.
go build -o demo .
sframe-gen -q demo
check_sframe ./demo
# Stripping afterwards keeps the section (it is loaded): strip after, never before.
strip -o demo.stripped demo
LC_ALL=C readelf -lW demo.stripped | grep -q GNU_SFRAME || fail "strip dropped PT_GNU_SFRAME"
./demo.stripped >/dev/null || fail "stripped demo does not run"
# -ldflags=-s leaves no call-frame information: sframe-gen says so (-v) and
# leaves the file as it is.
go build -ldflags=-s -o demo.s .
out=$(sframe-gen -v demo.s 2>&1) || fail "sframe-gen on a -s build: $out"
echo "$out" | grep -q 'no call-frame information' || fail "no word about the missing CFI: $out"
! LC_ALL=C readelf -lW demo.s | grep -q GNU_SFRAME || fail "a -s build got SFrame"
echo "go: ok"
