#!/usr/bin/env bash
# needs: cmake make ninja gcc g++ readelf aarch64-linux-gnu-g++ s390x-linux-gnu-g++ qemu-aarch64 qemu-s390x
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp -r "$REPO/testdata/integration/cmake" proj
cp -r "$REPO/testdata/integration/common/src" proj/src
mod="$REPO/docs/integration"
# Every build runs with CMake's default generator on Linux (Unix Makefiles, whose link
# rules run through `cmake -E cmake_link_script`, without a shell) and with Ninja.
generators=("Unix Makefiles" "Ninja")
build() { # build DIR ARCH GENERATOR [cmake args...]
  local dir=$1 arch=$2 gen=$3; shift 3
  local out
  out=$(cmake -S proj -B "$dir" -G "$gen" -DSFRAME_GEN_CMAKE_DIR="$mod" "$@" 2>&1) || fail "$dir: cmake -G '$gen': $out"
  out=$(cmake --build "$dir" 2>&1) || fail "$dir: build with $gen failed: $out"
  local run; run=$(cross_runner "$arch")
  check_sframe "$dir/lib/libgreet.so"
  check_sframe "$dir/throw" $run
  LD_LIBRARY_PATH="$dir/lib" check_sframe "$dir/hello" $run
  LD_LIBRARY_PATH="$dir/lib" check_sframe "$dir/-one" $run
  # A rebuild with nothing changed runs neither the link nor the step, and leaves the files.
  local before; before=$(stat -c '%n %Y %i' "$dir/hello" "$dir/throw" "$dir/lib/libgreet.so")
  out=$(cmake --build "$dir" 2>&1)
  ! grep -qi 'linking\|sframe-gen' <<<"$out" || fail "$dir: a second build did work: $out"
  [ "$before" = "$(stat -c '%n %Y %i' "$dir/hello" "$dir/throw" "$dir/lib/libgreet.so")" ] || fail "$dir: a second build rewrote a target"
}
for gen in "${generators[@]}"; do
  g=${gen// /-}
  build "native-$g" x86_64 "$gen"
  rm -rf "$WORK/inst"
  cmake --install "native-$g" --prefix "$WORK/inst" >/dev/null
  for f in bin/throw lib/libgreet.so; do check_sframe "$WORK/inst/$f"; done
  LD_LIBRARY_PATH="$WORK/inst/lib" check_sframe "$WORK/inst/bin/hello"
  # One target only: sframe_gen_target(hello).
  cmake -S proj -B "one-$g" -G "$gen" -DSFRAME_GEN_CMAKE_DIR="$mod" -DONE_TARGET=ON >/dev/null
  out=$(cmake --build "one-$g" 2>&1) || fail "one-$g: build with $gen failed: $out"
  ! grep -q '\$<' <<<"$out" || fail "one-$g: a generator expression printed as it is: $out"
  LD_LIBRARY_PATH="one-$g/lib" check_sframe "one-$g/hello"
  LD_LIBRARY_PATH="one-$g/lib" check_sframe "one-$g/-one"
  ! LC_ALL=C readelf -lW "one-$g/throw" | grep -q GNU_SFRAME || fail "one-$g/throw: SFrame without being asked"
  for arch in aarch64 s390x; do
    build "cross-$arch-$g" $arch "$gen" -DCMAKE_TOOLCHAIN_FILE="$PWD/proj/toolchain-$arch.cmake"
    grep -rq --include=rules.ninja --include=link.txt -- "--arch=$arch" "cross-$arch-$g" || fail "cross-$arch-$g: --arch=$arch not passed"
  done
done
echo "cmake: ok"
