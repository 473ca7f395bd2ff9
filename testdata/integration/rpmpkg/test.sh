#!/usr/bin/env bash
# needs: rpmbuild rpm rpm2cpio cpio go readelf
# sframe-gen as an RPM (docs/integration/sframe-gen.spec): rpmbuild -bb of a
# copy of this tree with no network, and what the package holds.
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
mkdir tree && tar -C "$REPO" --exclude=./.git --exclude=./bin -cf - . | tar -C tree -xf -
export GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOMODCACHE="${GOMODCACHE:-$(go env GOMODCACHE)}"
# --nodeps: the Go toolchain is not rpm's golang package here.
(cd tree && unshare -n rpmbuild -bb --nodeps --build-in-place --define "_topdir $WORK/top" \
  docs/integration/sframe-gen.spec >"$WORK/build.log" 2>&1) || { tail -40 build.log; fail "rpmbuild sframe-gen.spec"; }
version=$(sed -n 's/^Version: *//p' tree/docs/integration/sframe-gen.spec)
rpm=$(ls top/RPMS/*/sframe-gen-"$version"-1.*.rpm) || fail "no sframe-gen-$version RPM: $(ls -R top/RPMS)"
mkdir root && (cd root && rpm2cpio "../$rpm" | cpio -idm --quiet)
for f in usr/bin/sframe-gen usr/bin/dh_sframe usr/share/man/man1/sframe-gen.1 usr/share/man/man1/dh_sframe.1 \
         usr/share/bash-completion/completions/sframe-gen usr/share/sframe-gen/cmake/SFrameGen.cmake \
         "$(rpm --eval '%{_rpmmacrodir}' | sed 's|^/||')/macros.sframe-gen" usr/share/perl5/Debian/Debhelper/Sequence/sframe.pm; do
  [ -f "root/$f" ] || fail "the RPM does not install /$f"
done
root/usr/bin/sframe-gen --version | grep -qx "sframe-gen $version" || fail "the RPM's sframe-gen is not version $version"
# Its own program has SFrame (kept by brp-strip) and runs on itself.
LC_ALL=C readelf -lW root/usr/bin/sframe-gen | grep -q GNU_SFRAME || fail "/usr/bin/sframe-gen: no PT_GNU_SFRAME"
root/usr/bin/sframe-gen dump root/usr/bin/sframe-gen >/dev/null || fail "/usr/bin/sframe-gen: .sframe does not decode"
reqs=$(rpm -qp --requires "$rpm" 2>/dev/null) && grep -qx '/usr/bin/perl' <<<"$reqs" || fail "rpm -qp --requires: $reqs"
grep -q 'Debhelper' <<<"$reqs" && fail "the RPM requires debhelper's perl modules: $reqs"
echo "rpmpkg: ok"
