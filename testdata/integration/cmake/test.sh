#!/usr/bin/env bash
# needs: cmake ninja gcc g++ readelf aarch64-linux-gnu-g++ s390x-linux-gnu-g++ qemu-aarch64 qemu-s390x
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp -r "$REPO/testdata/integration/cmake" proj
cp -r "$REPO/testdata/integration/common/src" proj/src
mod="$REPO/docs/integration"
build() { # build DIR ARCH [cmake args...]
  local dir=$1 arch=$2; shift 2
  cmake -S proj -B "$dir" -G Ninja -DSFRAME_GEN_CMAKE_DIR="$mod" "$@" >/dev/null
  cmake --build "$dir" >/dev/null
  local run; run=$(cross_runner "$arch")
  check_sframe "$dir/lib/libgreet.so"
  check_sframe "$dir/throw" $run
  LD_LIBRARY_PATH="$dir/lib" check_sframe "$dir/hello" $run
  # A rebuild with nothing changed runs neither the link nor the step.
  [ -z "$(cmake --build "$dir" | grep -v 'no work to do')" ] || fail "$dir: a second build did work"
}
build native x86_64
cmake --install native --prefix "$WORK/inst" >/dev/null
for f in bin/throw lib/libgreet.so; do check_sframe "$WORK/inst/$f"; done
LD_LIBRARY_PATH="$WORK/inst/lib" check_sframe "$WORK/inst/bin/hello"
# One target only: sframe_gen_target(hello).
cmake -S proj -B one -G Ninja -DSFRAME_GEN_CMAKE_DIR="$mod" -DONE_TARGET=ON >/dev/null
cmake --build one >/dev/null
LD_LIBRARY_PATH=one/lib check_sframe one/hello
! LC_ALL=C readelf -lW one/throw | grep -q GNU_SFRAME || fail "one/throw: SFrame without being asked"
build cross-aarch64 aarch64 -DCMAKE_TOOLCHAIN_FILE="$PWD/proj/toolchain-aarch64.cmake"
grep -rq -- "--arch=aarch64" cross-aarch64/CMakeFiles/rules.ninja || fail "cross build: --arch=aarch64 not passed"
build cross-s390x s390x -DCMAKE_TOOLCHAIN_FILE="$PWD/proj/toolchain-s390x.cmake"
echo "cmake: ok"
