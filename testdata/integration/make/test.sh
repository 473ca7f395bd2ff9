#!/usr/bin/env bash
# needs: make gcc g++ readelf aarch64-linux-gnu-g++ s390x-linux-gnu-g++ qemu-aarch64 qemu-s390x
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp "$REPO/testdata/integration/make/Makefile" .
cp -r "$REPO/testdata/integration/common/src" src
make -s
for f in hello throw libgreet.so; do check_sframe "./$f"; done
# The step ran inside the link rule: the targets are up to date now...
make -q || fail "make -q: targets out of date right after the build"
[ -z "$(make -s --no-print-directory 2>&1)" ] || fail "a second make did something"
# ...and a changed source relinks and patches again.
before=$(stat -c %Y.%i hello)
sleep 1.1; touch src/hello.c
make -s
[ "$(stat -c %Y.%i hello)" != "$before" ] || fail "hello not rebuilt after its source changed"
check_sframe ./hello
# Cross: the same Makefile with an aarch64 and an s390x compiler; --arch is not needed
# (sframe-gen reads each file's own ABI), the programs run under qemu-user.
for arch in aarch64 s390x; do
  mkdir -p "$arch" && cd "$arch"
  make -s -f ../Makefile SRC=../src CC=$arch-linux-gnu-gcc CXX=$arch-linux-gnu-g++
  for f in throw libgreet.so; do check_sframe "./$f" $(cross_runner $arch); done
  LD_LIBRARY_PATH=. check_sframe ./hello $(cross_runner $arch)
  cd ..
done
echo "make: ok"
