#!/usr/bin/env bash
# needs: make go perl man tar dh
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
# make install into a DESTDIR, from a copy of the tree (the build writes bin/).
mkdir src && tar -C "$REPO" --exclude=./.git --exclude=./bin -cf - . | tar -C src -xf -
make -s -C src install DESTDIR="$WORK/dest" PREFIX=/usr >/dev/null
d=dest/usr
for f in bin/sframe-gen bin/dh_sframe share/man/man1/sframe-gen.1 share/man/man1/dh_sframe.1 share/bash-completion/completions/sframe-gen \
         share/sframe-gen/cmake/SFrameGen.cmake share/perl5/Debian/Debhelper/Sequence/sframe.pm \
         lib/rpm/macros.d/macros.sframe-gen share/doc/sframe-gen/integration.md; do
  [ -f "$d/$f" ] || fail "make install did not install $f"
done
[ -x $d/bin/sframe-gen ] && $d/bin/sframe-gen --version | grep -q '^sframe-gen ' || fail "installed sframe-gen does not run"
# The man page renders without a warning.
warn=$(MANWIDTH=80 man --warnings -l $d/share/man/man1/sframe-gen.1 2>&1 >/dev/null) || fail "man: $warn"
[ -z "$warn" ] || fail "man page warnings: $warn"
# dh_sframe(1), made from the command's POD, renders and is its page.
warn=$(MANWIDTH=80 man --warnings -l $d/share/man/man1/dh_sframe.1 2>&1 >/dev/null) || fail "man dh_sframe: $warn"
[ -z "$warn" ] || fail "dh_sframe(1) warnings: $warn"
MANWIDTH=80 man -l $d/share/man/man1/dh_sframe.1 2>/dev/null | grep -q 'DEB_SFRAME_OBJECTS' || fail "dh_sframe(1) does not describe DEB_SFRAME_OBJECTS"
# dh finds the installed add-on and puts dh_sframe right before dh_strip.
mkdir -p pkg/debian && cp "$REPO"/testdata/integration/deb/pkg/debian/{control,changelog} pkg/debian/
seq=$(cd pkg && PATH="$WORK/$d/bin:$PATH" PERL5LIB="$WORK/$d/share/perl5" dh binary --with sframe --no-act) || fail "dh --with sframe: $seq"
echo "$seq" | grep -A1 -x '[[:space:]]*dh_sframe\( -a\)\?' | tail -n1 | grep -q 'dh_strip' || fail "dh_sframe not right before dh_strip: $seq"
perl -c $d/bin/dh_sframe >/dev/null 2>&1 || fail "dh_sframe does not compile"
make -s -C src uninstall DESTDIR="$WORK/dest" PREFIX=/usr
[ -z "$(find dest -type f)" ] || fail "make uninstall left: $(find dest -type f)"
echo "install: ok"
