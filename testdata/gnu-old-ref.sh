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
PREFIX=${1:-${HOME:-/root}/.cache/gnu-old-ref}
SUITE=trixie
if [ -x "$PREFIX/bin/x86_64-objdump" ] && "$PREFIX/bin/x86_64-objdump" --version >/dev/null 2>&1; then
  echo "$PREFIX/bin"; exit 0
fi
mkdir -p "$PREFIX/apt/lists/partial" "$PREFIX/apt/cache/archives/partial" "$PREFIX/debs" "$PREFIX/root" "$PREFIX/bin"
# Reuse the Debian mirror this machine is already configured with.
uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
if [ -z "$uri" ]; then
  uri=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\/debian\)[[:space:]].*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n1)
fi
[ -n "$uri" ] || { echo "gnu-old-ref: no Debian mirror found in the apt configuration" >&2; exit 1; }
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $SUITE main" > "$PREFIX/apt/sources.list"
A="-o Dir::Etc::SourceList=$PREFIX/apt/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$PREFIX/apt/lists -o Dir::Cache=$PREFIX/apt/cache -o Dir::State::status=/dev/null -o APT::Sandbox::User=root"
apt-get $A -q update >&2
cd "$PREFIX/debs"
apt-get $A -q download binutils-x86-64-linux-gnu binutils-aarch64-linux-gnu binutils-s390x-linux-gnu \
  binutils-common libbinutils libctf-nobfd0 libctf0 libjansson4 libsframe1 binutils-dev \
  libzstd1 zlib1g libc6 libgcc-s1 >&2
for f in *.deb; do dpkg -x "$f" "$PREFIX/root"; done
R=$PREFIX/root
for a in x86_64 aarch64 s390x; do
  for t in as ld objdump readelf objcopy; do
    cat > "$PREFIX/bin/$a-$t" <<W
#!/bin/sh
exec $R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path $R/usr/lib/x86_64-linux-gnu $R/usr/bin/$a-linux-gnu-$t "\$@"
W
    chmod +x "$PREFIX/bin/$a-$t"
  done
  mkdir -p "$PREFIX/gcc-$a"
  ln -sf "$PREFIX/bin/$a-as" "$PREFIX/gcc-$a/as"
  ln -sf "$PREFIX/bin/$a-ld" "$PREFIX/gcc-$a/ld"
done
"$PREFIX/bin/x86_64-objdump" --version | head -n1 >&2
echo "$PREFIX/bin"
