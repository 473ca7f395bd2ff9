#!/bin/sh
# gnu-sframe-ref.sh: install the GNU binutils that Debian's unstable suite
# (sid) serves, 2.46 or newer: SFrame version 3 (as --gsframe, ld,
# readelf/objdump --sframe), for x86-64, aarch64 and s390x, with its
# libsframe (libsframe3, libsframe-dev), unpacked into a private prefix
# without touching the system's binutils. The tests' reference tools: they
# find the prefix through $GNU_SFRAME_REF, else $HOME/.cache/gnu-sframe-ref/bin.
# Prints the directory holding the wrappers.
#
#   testdata/gnu-sframe-ref.sh [PREFIX]     default PREFIX: $HOME/.cache/gnu-sframe-ref
#   export GNU_SFRAME_REF=$(testdata/gnu-sframe-ref.sh)
#
# Needs apt-get and dpkg (a Debian or Ubuntu machine with a Debian mirror in
# its apt sources) and the network; about 40 MB. Wrappers made in
# PREFIX/bin: {x86_64,aarch64,s390x}-{as,ld,objdump,readelf,objcopy,strip,nm}
# running through the unpacked ld.so; PREFIX/gcc-ARCH/{as,ld} for
# `ARCH-gcc -B PREFIX/gcc-ARCH -Wa,--gsframe ...` (the cross compilers are
# Debian's gcc-aarch64-linux-gnu and gcc-s390x-linux-gnu). libsframe for C
# programs: PREFIX/root/usr/lib/x86_64-linux-gnu/libsframe.{a,so*} and
# PREFIX/root/usr/include/sframe-api.h.
# Idempotent: a second run with the wrappers in place only prints the path.
set -eu
exec "$(dirname "$0")/debian-binutils.sh" "${1:-${HOME:-/root}/.cache/gnu-sframe-ref}" sid "as ld objdump readelf objcopy strip nm" libsframe3 libsframe-dev
