#!/bin/sh
# debian-binutils.sh: the installer behind gnu-sframe-ref.sh and
# gnu-old-ref.sh. Downloads Debian SUITE's GNU binutils for x86-64, aarch64
# and s390x and the packages named after them, unpacks them into PREFIX
# without touching the system's binutils, and makes wrappers
# PREFIX/bin/{x86_64,aarch64,s390x}-TOOL (each TOOL of TOOLS) that run
# through the unpacked ld.so, and PREFIX/gcc-ARCH/{as,ld} for
# `ARCH-gcc -B PREFIX/gcc-ARCH -Wa,--gsframe ...`. Prints PREFIX/bin.
#
#   testdata/debian-binutils.sh PREFIX SUITE "TOOLS" PACKAGE...
#
# Needs apt-get and dpkg (a Debian or Ubuntu machine with a Debian mirror in
# its apt sources) and the network. Idempotent: with the wrappers in place
# it only prints the path.
set -eu
PREFIX=$1 SUITE=$2 TOOLS=$3
shift 3
first=${TOOLS%% *}
if [ -x "$PREFIX/bin/x86_64-$first" ] && "$PREFIX/bin/x86_64-$first" --version >/dev/null 2>&1; then
  echo "$PREFIX/bin"; exit 0
fi
mkdir -p "$PREFIX/apt/lists/partial" "$PREFIX/apt/cache/archives/partial" "$PREFIX/debs" "$PREFIX/root" "$PREFIX/bin"
# Reuse the Debian mirror this machine is already configured with.
uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
if [ -z "$uri" ]; then
  uri=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\/debian\)[[:space:]].*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n1)
fi
[ -n "$uri" ] || { echo "$0: no Debian mirror found in the apt configuration" >&2; exit 1; }
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $SUITE main" > "$PREFIX/apt/sources.list"
A="-o Dir::Etc::SourceList=$PREFIX/apt/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$PREFIX/apt/lists -o Dir::Cache=$PREFIX/apt/cache -o Dir::State::status=/dev/null -o APT::Sandbox::User=root"
apt-get $A -q update >&2
cd "$PREFIX/debs"
apt-get $A -q download binutils-x86-64-linux-gnu binutils-aarch64-linux-gnu binutils-s390x-linux-gnu \
  binutils-common libbinutils libctf-nobfd0 libctf0 libjansson4 libzstd1 zlib1g libc6 libgcc-s1 "$@" >&2
for f in *.deb; do dpkg -x "$f" "$PREFIX/root"; done
R=$PREFIX/root
for a in x86_64 aarch64 s390x; do
  for t in $TOOLS; do
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
"$PREFIX/bin/x86_64-$first" --version | head -n1 >&2
echo "$PREFIX/bin"
