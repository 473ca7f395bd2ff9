#!/usr/bin/env bash
# needs: dpkg-buildpackage dh dpkg-deb fakeroot gcc g++ go readelf
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp -r "$REPO/testdata/integration/deb/pkg" sframe-demo
mkdir sframe-demo/src && cp "$REPO"/testdata/integration/common/src/* sframe-demo/src/
printf '#!/bin/sh\necho not ELF\n' > sframe-demo/src/run.sh
# dh_sframe and the add-on from the repository, as `make install` puts them on a system.
export PATH="$REPO/docs/integration:$PATH"
export PERL5LIB="$REPO/docs/integration/perl5${PERL5LIB:+:$PERL5LIB}"
export DH_VERBOSE=1
export GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOTOOLCHAIN=local
(cd sframe-demo && dpkg-buildpackage -us -uc -b >"$WORK/build.log" 2>&1) || { tail -40 "$WORK/build.log"; fail "dpkg-buildpackage"; }
grep -q '^[[:space:]]*sframe-gen -q.* debian/sframe-demo' build.log || fail "dh_sframe did not run sframe-gen over the package"
# dh_sframe ran before dh_strip.
awk '/dh_sframe/{s=NR} /dh_strip/{t=NR} END{exit !(s && t && s < t)}' build.log || fail "dh_sframe not before dh_strip"
deb=$(ls sframe-demo_1.0_*.deb)
dpkg-deb -x "$deb" root
r=root/usr
check_sframe $r/lib/sframe-demo/libgreet.so
LD_LIBRARY_PATH=$r/lib/sframe-demo check_sframe $r/bin/hello
check_sframe $r/bin/throw
# The Go program: stripped by dh_strip, its .debug_frame is gone (in the -dbgsym
# package if any), so verify has nothing to compare with; the section is there,
# decodes, and the program runs.
LC_ALL=C readelf -lW $r/bin/hello-go | grep -q GNU_SFRAME || fail "hello-go: no PT_GNU_SFRAME"
LC_ALL=C readelf -SW $r/bin/hello-go | grep -q '\.debug_frame' && fail "hello-go: not stripped by dh_strip"
sframe-gen dump $r/bin/hello-go >/dev/null || fail "hello-go: .sframe does not decode"
$r/bin/hello-go >/dev/null || fail "hello-go does not run"
[ "$(head -c 2 $r/share/sframe-demo/run.sh)" = '#!' ] || fail "run.sh changed"
echo "deb: ok"
