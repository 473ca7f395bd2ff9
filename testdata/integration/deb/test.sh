#!/usr/bin/env bash
# needs: dpkg-buildpackage dh dpkg-deb fakeroot gcc g++ ar go readelf cmp
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
unset DEB_SFRAME_OBJECTS DEB_SFRAME_OBJECTS_FLAGS SFRAME_GEN_FLAGS DEB_BUILD_OPTIONS

# build NAME [VAR=VALUE...]: dpkg-buildpackage -b in sframe-demo (always the
# same path, so that two builds can be compared), its log in NAME.log and its
# packages unpacked under NAME/PACKAGE; the .debs are kept in NAME/debs.
build() {
  local name=$1; shift
  (cd sframe-demo && env "$@" dpkg-buildpackage -us -uc -b >"$WORK/$name.log" 2>&1) ||
    { tail -40 "$WORK/$name.log"; fail "$name: dpkg-buildpackage"; }
  mkdir -p "$name/debs"
  mv ./*.deb ./*.udeb "$name/debs/" && rm -f ./*.changes ./*.buildinfo
  for deb in "$name"/debs/*; do
    local pkg=${deb##*/}; pkg=${pkg%%_*}
    dpkg-deb -x "$deb" "$name/$pkg"
  done
}
# sections FILE: the section names of FILE (every member of an archive).
sections() { LC_ALL=C readelf -SW "$1" | awk '$1 == "[" { print $3 } $1 ~ /^\[/ && $1 != "[" { print $2 }'; }

build default
log=default.log
awk '/dh_sframe/{s=NR} /dh_strip/{t=NR} END{exit !(s && t && s < t)}' $log || fail "dh_sframe not before dh_strip"
run=$(grep '^[[:space:]]*sframe-gen -q' $log) || fail "dh_sframe did not run sframe-gen"
# Executables and shared libraries of the arch-dependent packages, udeb included.
for f in debian/sframe-demo/usr/bin/hello debian/sframe-demo/usr/bin/hello-go debian/sframe-demo/usr/bin/throw \
         debian/sframe-demo/usr/lib/sframe-demo/libgreet.so debian/sframe-demo-udeb/usr/bin/hello-udeb; do
  case " $run " in *" $f "*) ;; *) fail "dh_sframe did not give sframe-gen $f: $run" ;; esac
done
# Nothing else: not the script, not the -X'd fixture, not the arch:all package, not the archive.
case "$run" in *run.sh*|*testdata*|*sframe-demo-data*|*libgreet.a*) fail "dh_sframe gave sframe-gen more: $run" ;; esac
grep -q 'libgreet-dev: left alone 1 static archive.*libgreet\.a.*DEB_SFRAME_OBJECTS=1' $log ||
  fail "the build log does not say the archive was left alone and how to opt in"

r=default/sframe-demo/usr
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
# -Xtestdata: the fixture there has no SFrame (dh_strip, which -X does not reach, stripped it).
sections $r/share/sframe-demo/testdata/fixture | grep -qx '\.sframe' && fail "dh_sframe -Xtestdata patched testdata/fixture"
$r/share/sframe-demo/testdata/fixture >/dev/null || fail "testdata/fixture does not run"
# The udeb's program.
check_sframe default/sframe-demo-udeb/usr/bin/hello-udeb
# The arch:all package: its ELF fixture is as the upstream build made it (nor strip nor sframe-gen).
cmp default/sframe-demo-data/usr/share/sframe-demo-data/fixture sframe-demo/fixture ||
  fail "the Architecture: all package's fixture was changed"
# The -dev package's static archive: no member has SFrame.
a=default/libgreet-dev/usr/lib/sframe-demo/libgreet.a
sections $a | grep -q '^\.text' || fail "libgreet.a: no sections read: $(sections $a)"
sections $a | grep -qx '\.sframe' && fail "libgreet.a was given SFrame by default"
# dh leaves dh_sframe out of binary-indep, as it does dh_strip, and runs it with -a otherwise.
(cd sframe-demo && dh binary-indep --with sframe --no-act) | grep -q 'dh_sframe' && fail "dh binary-indep runs dh_sframe"
(cd sframe-demo && mv debian/rules debian/rules.test && printf '%%:\n\tdh $@ --with sframe\n' >debian/rules &&
  dh binary --with sframe --no-act; mv debian/rules.test debian/rules) | grep -qx '[[:space:]]*dh_sframe -a' ||
  fail "dh binary does not run dh_sframe -a"

# The same build again: the same packages, byte for byte.
build again
for deb in default/debs/*; do
  cmp "$deb" "again/debs/${deb##*/}" || fail "${deb##*/} differs between two builds"
done

# Opted in as docs/integration.md#debhelper says, with the version binutils
# 2.41-2.44 link: the archive's member gets version 2 SFrame.
cp sframe-demo/debian/rules rules.default
grep '^export DEB_SFRAME_OBJECTS' "$REPO/docs/integration.md" >>sframe-demo/debian/rules
[ "$(grep -c '^export DEB_SFRAME_OBJECTS' sframe-demo/debian/rules)" = 2 ] || fail "docs/integration.md: no opt-in lines to test"
build objects
cp rules.default sframe-demo/debian/rules
grep -q 'left alone [0-9]* static' objects.log && fail "DEB_SFRAME_OBJECTS=1: the log still says something was left alone"
a=objects/libgreet-dev/usr/lib/sframe-demo/libgreet.a
sections $a | grep -qx '\.sframe' || fail "DEB_SFRAME_OBJECTS=1: libgreet.a has no .sframe"
sections $a | grep -qx '\.rela\.sframe' || fail "DEB_SFRAME_OBJECTS=1: libgreet.a has no .rela.sframe"
mkdir members && (cd members && ar x "$WORK/$a") && sframe-gen dump members/greet.o | grep -q 'SFRAME_VERSION_2' ||
  fail "DEB_SFRAME_OBJECTS_FLAGS: greet.o's SFrame is not version 2"
# The linked files still get the default version.
sframe-gen dump objects/sframe-demo/usr/bin/throw | grep -q 'SFRAME_VERSION_3' || fail "throw: not version 3 when objects are opted in"
echo "deb: ok"
