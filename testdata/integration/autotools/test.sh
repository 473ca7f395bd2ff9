#!/usr/bin/env bash
# needs: autoreconf automake make gcc g++ readelf
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp -r "$REPO/testdata/integration/autotools" proj
cp -r "$REPO/testdata/integration/common/src" proj/src
cd proj
autoreconf -fi >/dev/null 2>&1
./configure --prefix=/usr >/dev/null
make -s -j4 >/dev/null
make -s -j4 install DESTDIR="$WORK/dest" >/dev/null
for f in hello throw; do check_sframe "$WORK/dest/usr/bin/$f"; done
# install-strip strips (install -s) before the hook runs: the .eh_frame stays.
make -s -j4 install-strip DESTDIR="$WORK/dest-strip" >/dev/null
for f in hello throw; do check_sframe "$WORK/dest-strip/usr/bin/$f"; done
# The build tree's programs are left as linked.
! LC_ALL=C readelf -lW hello | grep -q GNU_SFRAME || fail "build tree changed"
echo "autotools: ok"
