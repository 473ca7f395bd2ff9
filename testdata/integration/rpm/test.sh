#!/usr/bin/env bash
# needs: rpmbuild rpm2cpio cpio find-debuginfo gcc g++ go readelf
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
mkdir -p top/SOURCES/src top/SOURCES/go
cp "$REPO/testdata/integration/deb/pkg/Makefile" top/SOURCES/
cp "$REPO"/testdata/integration/deb/pkg/go/* top/SOURCES/go/
cp "$REPO"/testdata/integration/common/src/* top/SOURCES/src/
printf '#!/bin/sh\necho not ELF\n' > top/SOURCES/src/run.sh
export GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOTOOLCHAIN=local
rpmbuild -bb --nodeps --define "_topdir $WORK/top" \
  --load="$REPO/docs/integration/macros.sframe-gen" \
  "$REPO/testdata/integration/rpm/sframe-demo.spec" >build.log 2>&1 || { tail -40 build.log; fail "rpmbuild"; }
# sframe-gen ran on the buildroot, before find-debuginfo.
awk '/sframe-gen -q/{s=NR} /find-debuginfo/{t=NR} END{exit !(s && t && s < t)}' build.log || fail "sframe-gen did not run before find-debuginfo"
mkdir root && (cd root && rpm2cpio ../top/RPMS/x86_64/sframe-demo-1.0-1.x86_64.rpm | cpio -idm --quiet)
r=root/usr
check_sframe $r/lib/sframe-demo/libgreet.so
LD_LIBRARY_PATH=$r/lib/sframe-demo check_sframe $r/bin/hello
check_sframe $r/bin/throw
# The Go program lost .debug_frame to find-debuginfo's strip; its SFrame stays.
LC_ALL=C readelf -lW $r/bin/hello-go | grep -q GNU_SFRAME || fail "hello-go: no PT_GNU_SFRAME"
LC_ALL=C readelf -SW $r/bin/hello-go | grep -q '\.debug_frame' && fail "hello-go: not stripped"
sframe-gen dump $r/bin/hello-go >/dev/null || fail "hello-go: .sframe does not decode"
$r/bin/hello-go >/dev/null || fail "hello-go does not run"
# --without sframe turns the step off.
rpmbuild -bb --nodeps --without sframe --define "_topdir $WORK/top" \
  --load="$REPO/docs/integration/macros.sframe-gen" \
  "$REPO/testdata/integration/rpm/sframe-demo.spec" >build2.log 2>&1 || { tail -20 build2.log; fail "rpmbuild --without sframe"; }
mkdir root2 && (cd root2 && rpm2cpio ../top/RPMS/x86_64/sframe-demo-1.0-1.x86_64.rpm | cpio -idm --quiet)
! LC_ALL=C readelf -lW root2/usr/bin/throw | grep -q GNU_SFRAME || fail "--without sframe: SFrame anyway"
echo "rpm: ok"
