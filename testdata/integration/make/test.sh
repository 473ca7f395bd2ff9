#!/usr/bin/env bash
# needs: make gcc g++ readelf aarch64-linux-gnu-g++ s390x-linux-gnu-g++ qemu-aarch64 qemu-s390x
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
# GNU make as it is, with -j, and with .ONESHELL (the whole recipe in one shell).
for flavour in plain parallel oneshell; do
  case $flavour in
    plain) m=(make -s) ;;
    parallel) m=(make -s -j4) ;;
    oneshell) m=(make -s --eval=.ONESHELL:) ;;
  esac
  mkdir "$flavour" && cd "$flavour"
  cp "$REPO/testdata/integration/make/Makefile" .
  cp -r "$REPO/testdata/integration/common/src" src
  "${m[@]}"
  for f in hello throw libgreet.so; do check_sframe "./$f"; done
  # The step ran inside the link rule: the targets are up to date now...
  make -q || fail "$flavour: make -q: targets out of date right after the build"
  [ -z "$("${m[@]}" --no-print-directory 2>&1)" ] || fail "$flavour: a second make did something"
  # ...and a changed source relinks and patches again.
  before=$(stat -c %Y.%i hello)
  sleep 1.1; touch src/hello.c
  "${m[@]}"
  [ "$(stat -c %Y.%i hello)" != "$before" ] || fail "$flavour: hello not rebuilt after its source changed"
  check_sframe ./hello
  # A link that fails fails the build: the step does not run on the old file.
  sleep 1.1; echo 'int broken(' >> src/hello.c
  ! "${m[@]}" hello >/dev/null 2>&1 || fail "$flavour: make succeeded although hello.c does not compile"
  cd ..
done
# Cross: the same Makefile with an aarch64 and an s390x compiler; --arch is not needed
# (sframe-gen reads each file's own ABI), the programs run under qemu-user.
for arch in aarch64 s390x; do
  mkdir -p "$arch" && cd "$arch"
  make -s -j4 -f "$REPO/testdata/integration/make/Makefile" SRC="$REPO/testdata/integration/common/src" CC=$arch-linux-gnu-gcc CXX=$arch-linux-gnu-g++
  for f in throw libgreet.so; do check_sframe "./$f" $(cross_runner $arch); done
  LD_LIBRARY_PATH=. check_sframe ./hello $(cross_runner $arch)
  cd ..
done
echo "make: ok"
