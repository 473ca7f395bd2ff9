#!/usr/bin/env bash
# needs: dpkg-buildpackage dh dpkg dpkg-deb dpkg-checkbuilddeps fakeroot lintian man unshare gcc g++ ar go readelf
# sframe-gen as a Debian package (debian/, docs/integration.md#debhelper):
# dpkg-buildpackage -b of a copy of this tree with no network, lintian, the
# package installed in a scratch root with dpkg --root, and the test package
# of ../deb built with Build-Depends: dh-sequence-sframe using only what that
# root has.
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
mkdir tree && tar -C "$REPO" --exclude=./.git --exclude=./bin -cf - . | tar -C tree -xf -
# manifest: every file of the tree but bin/ (the build's output, as in make build), with its sum.
manifest() { (cd tree && find . -path ./bin -prune -o -type f -print0 | sort -z | xargs -0 md5sum); }
manifest >before
export GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOMODCACHE="${GOMODCACHE:-$(go env GOMODCACHE)}"
unset DEB_SFRAME_OBJECTS DEB_SFRAME_OBJECTS_FLAGS SFRAME_GEN SFRAME_GEN_FLAGS PERL5LIB
arch=$(dpkg --print-architecture)

# No network at all (a new network namespace): the modules come from the cache.
# -d: the Go toolchain may be one installed outside dpkg (debian/README.source).
# The tests are go test's; the build here checks the packaging.
(cd tree && DEB_BUILD_OPTIONS=nocheck unshare -n dpkg-buildpackage -us -uc -b -d >"$WORK/self.log" 2>&1) ||
  { tail -40 self.log; fail "dpkg-buildpackage of sframe-gen"; }
deb=sframe-gen_$(dpkg-parsechangelog -l tree/debian/changelog -S Version)_$arch.deb
[ -f "$deb" ] || fail "no $deb: $(ls)"
lint=$(lintian --fail-on error,warning "$deb" 2>&1) || fail "lintian $deb: $lint"
case "$lint" in *E:*|*W:*) fail "lintian $deb: $lint" ;; esac
# The tree is as it was: the build's files went to debian/ (cleaned by clean) and bin/.
(cd tree && dpkg-buildpackage -us -uc -d -T clean >/dev/null 2>&1) || fail "debian/rules clean"
manifest >after
cmp -s before after || fail "the build changed the tree: $(diff before after)"

# A scratch root with its own dpkg database; the package has no maintainer scripts.
root=$WORK/root
mkdir -p $root/var/lib/dpkg/info $root/var/lib/dpkg/updates && : >$root/var/lib/dpkg/status
dpkg --root=$root --log=/dev/null -i "$deb" >/dev/null || fail "dpkg --root -i $deb"
for f in usr/bin/sframe-gen usr/bin/dh_sframe usr/share/man/man1/sframe-gen.1.gz usr/share/man/man1/dh_sframe.1.gz \
         usr/share/bash-completion/completions/sframe-gen usr/share/sframe-gen/cmake/SFrameGen.cmake \
         usr/lib/rpm/macros.d/macros.sframe-gen usr/share/perl5/Debian/Debhelper/Sequence/sframe.pm; do
  [ -f $root/$f ] || fail "the package does not install /$f"
done
$root/usr/bin/sframe-gen --version | grep -q "^sframe-gen $(dpkg-parsechangelog -l tree/debian/changelog -S Version)\$" ||
  fail "the packaged sframe-gen's version is not the package's: $($root/usr/bin/sframe-gen --version)"
# The package's own program got SFrame from its build (dh $@ --with sframe in debian/rules).
LC_ALL=C readelf -lW $root/usr/bin/sframe-gen | grep -q GNU_SFRAME || fail "/usr/bin/sframe-gen: no PT_GNU_SFRAME"
# The manual pages, through man's search path.
export MANPATH=$root/usr/share/man MANWIDTH=80
[ "$(man -w dh_sframe)" = $root/usr/share/man/man1/dh_sframe.1.gz ] || fail "man -w dh_sframe: $(man -w dh_sframe 2>&1)"
man dh_sframe 2>/dev/null | grep -q 'DEB_SFRAME_OBJECTS' || fail "man dh_sframe does not show the page"
man sframe-gen 2>/dev/null | grep -q 'sframe-gen' || fail "man sframe-gen does not show the page"
# The root's dpkg database says dh-sequence-sframe is there.
dpkg-checkbuilddeps --admindir=$root/var/lib/dpkg -d 'dh-sequence-sframe' /dev/null ||
  fail "the scratch root does not satisfy Build-Depends: dh-sequence-sframe"

# A package asking for the add-on by Build-Depends alone, built with the
# root's programs and perl modules only (-d: the host's dpkg database does
# not have the package): no other sframe-gen or dh_sframe on PATH.
path=$root/usr/bin
for d in $(echo "$PATH" | tr : ' '); do
  [ -e "$d/sframe-gen" ] || [ -e "$d/dh_sframe" ] || path=$path:$d
done
cp -r "$REPO/testdata/integration/deb/pkg" demo
mkdir demo/src && cp "$REPO"/testdata/integration/common/src/* demo/src/
printf '#!/bin/sh\necho not ELF\n' > demo/src/run.sh
sed -i 's/^Build-Depends: debhelper-compat (= 13)$/&, dh-sequence-sframe/' demo/debian/control
grep -q 'dh-sequence-sframe' demo/debian/control || fail "could not add dh-sequence-sframe to Build-Depends"
sed -i 's/dh \$@ --with sframe/dh $@/' demo/debian/rules
grep -q -- '--with' demo/debian/rules && fail "demo/debian/rules still has --with"
(cd demo && PATH=$path PERL5LIB=$root/usr/share/perl5 DH_VERBOSE=1 GOTOOLCHAIN=local \
  dpkg-buildpackage -us -uc -b -d >"$WORK/demo.log" 2>&1) || { tail -40 demo.log; fail "dpkg-buildpackage with dh-sequence-sframe"; }
grep -q "override_dh_sframe" demo.log || fail "dh did not put dh_sframe in the sequence from Build-Depends"
grep -q "^[[:space:]]*sframe-gen -q" demo.log || fail "dh_sframe did not run sframe-gen: $(grep -n sframe demo.log)"
dpkg-deb -x sframe-demo_1.0_$arch.deb out
LD_LIBRARY_PATH=out/usr/lib/sframe-demo check_sframe out/usr/bin/hello
check_sframe out/usr/bin/throw
echo "debpkg: ok"
