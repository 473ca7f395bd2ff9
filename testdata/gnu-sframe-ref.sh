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
PREFIX=${1:-${HOME:-/root}/.cache/gnu-sframe-ref}
SUITE=sid
if [ -x "$PREFIX/bin/x86_64-as" ] && "$PREFIX/bin/x86_64-as" --version >/dev/null 2>&1; then
  echo "$PREFIX/bin"; exit 0
fi
mkdir -p "$PREFIX/apt/lists/partial" "$PREFIX/apt/cache/archives/partial" "$PREFIX/debs" "$PREFIX/root" "$PREFIX/bin"
# Reuse the Debian mirror this machine is already configured with.
uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
if [ -z "$uri" ]; then
  uri=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\/debian\)[[:space:]].*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n1)
fi
[ -n "$uri" ] || { echo "gnu-sframe-ref.sh: no Debian mirror found in the apt configuration" >&2; exit 1; }
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $SUITE main" > "$PREFIX/apt/sources.list"
A="-o Dir::Etc::SourceList=$PREFIX/apt/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$PREFIX/apt/lists -o Dir::Cache=$PREFIX/apt/cache -o Dir::State::status=/dev/null -o APT::Sandbox::User=root"
apt-get $A -q update >&2
cd "$PREFIX/debs"
apt-get $A -q download binutils-x86-64-linux-gnu binutils-aarch64-linux-gnu binutils-s390x-linux-gnu \
  binutils-common libbinutils libctf-nobfd0 libctf0 libjansson4 libsframe3 libsframe-dev \
  libzstd1 zlib1g libc6 libgcc-s1 >&2
for f in *.deb; do dpkg -x "$f" "$PREFIX/root"; done
R=$PREFIX/root
for a in x86_64 aarch64 s390x; do
  for t in as ld objdump readelf objcopy strip nm; do
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
"$PREFIX/bin/x86_64-as" --version | head -n1 >&2
echo "$PREFIX/bin"
