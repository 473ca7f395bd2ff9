#!/bin/sh
# gnu-old-ref.sh: install the GNU binutils 2.44 that Debian 13 (trixie) ships
# (the last SFrame version 2 release Debian's mirror serves: 2.45 is served by
# no suite) for x86-64, aarch64 and s390x, with its libsframe (libsframe1) and
# sframe-api.h, into a private prefix, without touching the system's binutils.
# Prints the directory holding the wrappers.
#
#   testdata/gnu-old-ref.sh [PREFIX]     default PREFIX: $HOME/.cache/gnu-old-ref
#
# Wrappers made in PREFIX/bin: {x86_64,aarch64,s390x}-{as,ld,objdump,readelf,objcopy}
# running through the unpacked ld.so; PREFIX/gcc-ARCH/{as,ld} for
# `ARCH-gcc -B PREFIX/gcc-ARCH -Wa,--gsframe ...`. libsframe 2.44 for C
# programs: PREFIX/root/usr/lib/x86_64-linux-gnu/libsframe.so* and
# PREFIX/root/usr/include/sframe-api.h (trixie ships them in libsframe1 and
# binutils-dev).
# Idempotent: a second run with the wrappers in place only prints the path.
set -eu
exec "$(dirname "$0")/debian-binutils.sh" "${1:-${HOME:-/root}/.cache/gnu-old-ref}" trixie "objdump as ld readelf objcopy" libsframe1 binutils-dev
