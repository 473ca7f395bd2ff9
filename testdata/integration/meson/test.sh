#!/usr/bin/env bash
# needs: meson ninja gcc g++ readelf aarch64-linux-gnu-g++ s390x-linux-gnu-g++ qemu-aarch64 qemu-s390x
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp -r "$REPO/testdata/integration/meson" proj
cp -r "$REPO/testdata/integration/common/src" proj/src
build() { # build DIR ARCH [meson setup args...]
  local dir=$1 arch=$2; shift 2
  meson setup "$dir" proj --prefix=/usr --libdir=lib "$@" >/dev/null
  meson compile -C "$dir" >/dev/null
  local run; run=$(cross_runner "$arch")
  check_sframe "$dir/libgreet.so.sframe"
  check_sframe "$dir/throw.sframe" $run
  LD_LIBRARY_PATH="$dir" check_sframe "$dir/hello.sframe" $run
  # The targets themselves are left as linked.
  ! LC_ALL=C readelf -lW "$dir/hello" | grep -q GNU_SFRAME || fail "$dir/hello changed in place"
  [ -z "$(ninja -C "$dir" | grep -v 'no work to do' | grep -v '^ninja: Entering')" ] || fail "$dir: a second build did work"
  DESTDIR="$WORK/dest-$dir" meson install -C "$dir" --no-rebuild >/dev/null
  local d="$WORK/dest-$dir/usr"
  check_sframe "$d/lib/libgreet.so"
  check_sframe "$d/bin/throw" $run
  LD_LIBRARY_PATH="$d/lib" check_sframe "$d/bin/hello" $run
}
build native x86_64
build cross-aarch64 aarch64 --cross-file proj/cross-aarch64.ini
build cross-s390x s390x --cross-file proj/cross-s390x.ini
echo "meson: ok"
