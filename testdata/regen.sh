#!/bin/sh
# regen.sh: regenerate the golden files under testdata/ with the GNU reference
# tools (binutils with SFrame v3: as --gsframe, ld, objdump/readelf --sframe).
#
#   testdata/regen.sh [gas] [cc] [link] [sample] [v2]     (default: all, in this order)
#
# Tools: directory of the wrappers from $GNU_SFRAME_REF, else whatever
# testdata/gnu-sframe-ref.sh prints (it installs them on first use into
# $HOME/.cache/gnu-sframe-ref). Also needs gcc, g++, aarch64-linux-gnu-gcc,
# s390x-linux-gnu-gcc (Debian 12) for the cc, link and sample stages.
# Every command runs inside the output directory with relative file names, and
# no debug info is produced, so outputs carry no absolute paths or timestamps;
# running this twice gives byte-identical files (check with `git status`).
set -eu
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=0
TD=$(cd "$(dirname "$0")" && pwd)

if [ -z "${GNU_SFRAME_REF:-}" ]; then
  GNU_SFRAME_REF=$("$TD/gnu-sframe-ref.sh")
fi
[ -n "${GNU_SFRAME_REF:-}" ] && [ -x "$GNU_SFRAME_REF/x86_64-as" ] || {
  echo "regen.sh: GNU reference tools not found in ${GNU_SFRAME_REF:-?} (run testdata/gnu-sframe-ref.sh, or set GNU_SFRAME_REF)" >&2; exit 1; }
REF=$GNU_SFRAME_REF
GCCB=$(dirname "$REF")          # holds gcc-ARCH/{as,ld} for gcc -B

# tool ARCH NAME: path of a reference wrapper (aarch64_be uses the aarch64 tools).
tool() { case $1 in aarch64_be) echo "$REF/aarch64-$2" ;; *) echo "$REF/$1-$2" ;; esac; }

# sframe_text OBJDUMP FILE: objdump --sframe from the "Contents of" line on.
sframe_text() {
  "$1" --sframe "$2" 2>&1 | sed -n '/^Contents of the SFrame section .sframe:/,$p'
}

# sframe_relocs READELF FILE: one line per .rela.sframe entry:
# "OFFSET TYPE SYMBOL ADDEND", offset and addend in hex with 0x (addend signed).
sframe_relocs() {
  "$1" -rW "$2" | awk '
    /^Relocation section/ { on = ($0 ~ /'"'"'\.rela\.sframe'"'"'/); hdr = 1; next }
    on && hdr && /Offset/ { hdr = 0; next }
    on && NF >= 7 { off = $1; sub(/^0+/, "", off); if (off == "") off = "0"
                    printf "0x%s %s %s %s0x%s\n", off, $3, $5, ($6 == "-" ? "-" : ""), $7 }
    on && NF == 0 { on = 0 }'
}

# sframe_bytes OBJCOPY READELF FILE OUT: raw .sframe bytes, or no file if none.
sframe_bytes() {
  rm -f "$4"
  if "$2" -SW "$3" | grep -q ' \.sframe '; then
    "$1" -O binary --only-section=.sframe "$3" "$4"
    chmod 644 "$4"
  fi
}

# ---------------------------------------------------------------- stage gas
# testdata/gas/ARCH/NAME.s -> NAME.o, NAME.gs.o, NAME.gs.objdump,
# NAME.gs.warnings, NAME.frames, NAME.frames-raw, NAME.gs.relocs, NAME.gs.sframe
gas_one() { # arch name
  a=$1 n=$2
  as=$(tool "$a" as) od=$(tool "$a" objdump) re=$(tool "$a" readelf) oc=$(tool "$a" objcopy)
  eb=""; [ "$a" = aarch64_be ] && eb=-EB
  # extra assembler flags for one input: a line "# as-flags: ..." in NAME.s
  eb="$eb $(sed -n 's/^# as-flags: //p' "$n.s")"
  "$as" $eb -o "$n.o" "$n.s"
  "$as" $eb --gsframe -o "$n.gs.o" "$n.s" 2> "$n.gs.warnings" || {
    echo "regen.sh: $a/$n.s: as --gsframe failed:" >&2; cat "$n.gs.warnings" >&2; exit 1; }
  sframe_text "$od" "$n.gs.o" > "$n.gs.objdump"
  sframe_relocs "$re" "$n.gs.o" > "$n.gs.relocs"
  sframe_bytes "$oc" "$re" "$n.gs.o" "$n.gs.sframe"
  case $n in
    many-fres) rm -f "$n.frames" ;;   # 66k rows: too big to keep as text
    *) "$re" --debug-dump=frames-interp "$n.o" > "$n.frames" 2>&1
       "$re" --debug-dump=frames "$n.o" > "$n.frames-raw" 2>&1 ;;
  esac
}

stage_gas() {
  for a in x86_64 aarch64 aarch64_be s390x; do
    d=$TD/gas/$a
    [ -d "$d" ] || continue
    ( cd "$d"
      for s in *.s; do
        [ -e "$s" ] || continue
        gas_one "$a" "${s%.s}"
      done )
  done
}

# ---------------------------------------------------------------- stage link
# testdata/link/src/{demo,main}.c -> testdata/link/ARCH/: objects with and
# without --gsframe, linked with the reference ld into shared libraries (lazy
# and -z now PLT; x86_64 also -z ibtplt) and PIE / non-PIE executables. X.gs.*
# is GNU ld's SFrame reference; X (no .gs) has no .sframe: what sframe-gen patches.
cc_for() { case $1 in x86_64) echo gcc ;; *) echo "$1-linux-gnu-gcc" ;; esac; }

# link_dumps ARCH FILE: FILE.phdrs, FILE.sections, FILE.frames / FILE.objdump
link_dumps() {
  re=$(tool "$1" readelf) od=$(tool "$1" objdump)
  "$re" -lW "$2" > "$2.phdrs"
  "$re" -SW "$2" > "$2.sections"
  case $2 in
    *.gs.*) sframe_text "$od" "$2" > "$2.objdump"
            sframe_bytes "$(tool "$1" objcopy)" "$re" "$2" "$2.sframe" ;;
    *) "$re" --debug-dump=frames-interp "$2" > "$2.frames" 2>&1 ;;
  esac
}

gasmix_inputs() {
  case $1 in
    x86_64) echo basic addr2 dataword fp drap flex signal undefined remember quirks restore sections empty argsize ;;
    aarch64) echo basic addr2 dataword pauth signal undefined remember quirks sections empty ;;
    s390x) echo basic addr2 dataword fpra flex signal undefined remember quirks sections empty ;;
  esac
}

stage_link() {
  for a in x86_64 aarch64 s390x; do
    d=$TD/link/$a
    mkdir -p "$d"
    ( cd "$d"
      cc=$(cc_for "$a")
      B="-B $GCCB/gcc-$a"
      CF="-O2 -g0 -fasynchronous-unwind-tables"
      for gs in "" .gs; do
        W=""; [ -n "$gs" ] && W=-Wa,--gsframe
        $cc $B $CF $W -fPIC -c ../src/demo.c -o "demo.pic$gs.o"
        $cc $B $CF $W -fPIE -DUSE_DEMO -c ../src/main.c -o "main.pie$gs.o"
        $cc $B $CF $W -fno-PIE -DUSE_DEMO -c ../src/main.c -o "main.nopie$gs.o"
        $cc $B -shared -Wl,-soname,libdemo.so -Wl,-z,lazy "demo.pic$gs.o" -o "lazy$gs.so"
        $cc $B -shared -Wl,-soname,libdemo.so -Wl,-z,now "demo.pic$gs.o" -o "now$gs.so"
        if [ "$a" = x86_64 ]; then
          $cc $B -shared -Wl,-soname,libdemo.so -Wl,-z,lazy -Wl,-z,ibtplt "demo.pic$gs.o" -o "ibt$gs.so"
        fi
        $cc $B -pie "main.pie$gs.o" "lazy$gs.so" -o "pie$gs.exe"
        $cc $B -no-pie "main.nopie$gs.o" "lazy$gs.so" -o "nopie$gs.exe"
        # static-linked demo with -ffunction-sections + --gc-sections: ld
        # drops the FDEs (and SFrame FDEs) of discarded functions
        $cc $B $CF $W -fPIE -ffunction-sections -c ../src/demo.c -o "demo.fs$gs.o"
        $cc $B $CF $W -fPIE -ffunction-sections -c ../src/unused.c -o "unused.fs$gs.o"
        $cc $B -pie -Wl,--gc-sections "main.pie$gs.o" "demo.fs$gs.o" "unused.fs$gs.o" -o "gc$gs.exe"
        rm -f "demo.fs$gs.o" "unused.fs$gs.o"
        "$(tool "$a" ld)" -r "demo.pic$gs.o" "main.pie$gs.o" -o "relocatable$gs.o"
        # ld alone, no crt files: on s390x ld makes PLT SFrame only when the
        # first input has .sframe (so not through gcc, where crti.o is first)
        "$(tool "$a" ld)" -shared -soname libdemo.so "demo.pic$gs.o" -o "direct$gs.so"
      done
      sframe_relocs "$(tool "$a" readelf)" relocatable.gs.o > relocatable.gs.relocs
      # the hand-written gas inputs linked into one shared object by ld alone
      # (no libc): ld's merge of flex, signal, 0-FRE, RA-undefined and
      # multi-section FDEs. Without SFrame: the same from the plain .o files.
      for gs in "" .gs; do
        objs=""
        for n in $(gasmix_inputs "$a"); do objs="$objs ../../gas/$a/$n$gs.o"; done
        "$(tool "$a" ld)" -shared -soname gasmix.so $objs -o "gasmix$gs.so"
      done
      # real code: the tree-sitter runtime (cc/ARCH/O2) in a PIE, and on
      # x86_64 LevelDB (C++, exceptions, libstdc++) in a PIE.
      for gs in "" .gs; do
        W=""; [ -n "$gs" ] && W=-Wa,--gsframe
        $cc $B $CF $W -fPIE -I../../cc/src/tree-sitter/include -c ../src/tsmain.c -o "tsmain$gs.o"
        $cc $B -pie "tsmain$gs.o" "../../cc/$a/O2/tree-sitter$gs.o" -o "tree-sitter$gs.exe"
        rm -f "tsmain$gs.o"
        if [ "$a" = x86_64 ]; then
          g++ $B $CF $W -fPIE -I../../cc/src/leveldb/include -c ../src/ldbmain.cc -o "ldbmain$gs.o"
          g++ $B -pie "ldbmain$gs.o" "../../cc/$a/O2/leveldb$gs.o" -lpthread -o "leveldb$gs.exe"
          rm -f "ldbmain$gs.o"
        fi
      done
      for f in *.so *.exe; do link_dumps "$a" "$f"; done
      for f in *.gs.o; do sframe_text "$(tool "$a" objdump)" "$f" > "${f%.o}.objdump"; done )
  done
}

# ---------------------------------------------------------------- stage sample
# testdata/sample/hello.c -> hello-x86_64 (PIE, no SFrame: the `make run`
# sample) and hello-x86_64.gs (the same built with GNU's SFrame) + its dump.
stage_sample() {
  ( cd "$TD/sample"
    B="-B $GCCB/gcc-x86_64"
    gcc $B -O2 -g0 -fPIE -pie hello.c -o hello-x86_64
    gcc $B -O2 -g0 -fPIE -pie -Wa,--gsframe hello.c -o hello-x86_64.gs
    sframe_text "$REF/x86_64-objdump" hello-x86_64.gs > hello-x86_64.gs.objdump )
}

# ---------------------------------------------------------------- stage cc
# Real compiled code: testdata/cc/src/{tree-sitter,leveldb,misc} compiled per
# ARCH/VARIANT into testdata/cc/ARCH/VARIANT/NAME.{o,gs.o,gs.objdump,
# gs.warnings,gs.relocs,gs.sframe}. leveldb (C++, x86_64 only: no cross g++
# here) is compiled per file and combined with `ld -r` (reference ld).
# -pipe keeps temporary file names out of the warnings ("{standard input}").
cc_variants() {
  case $1 in
    x86_64) echo "O0:-O0 O2:-O2 Os:-Os O2-omit-fp:-O2,-fomit-frame-pointer O2-fp:-O2,-fno-omit-frame-pointer O2-stackrealign:-O2,-mstackrealign" ;;
    aarch64) echo "O2:-O2 O2-pac-ret:-O2,-mbranch-protection=pac-ret O2-pac-ret-b-key:-O2,-mbranch-protection=pac-ret+b-key O2-be:-O2,-mbig-endian,-I../../src/be-include" ;;
    s390x) echo "O2:-O2 O2-backchain:-O2,-mbackchain O2-soft-float:-O2,-msoft-float" ;;
  esac
}

# cc_dumps ARCH NAME: the text and bytes of NAME.gs.o
cc_dumps() {
  t=$1; case $VARIANT in *-be) t=aarch64_be ;; esac
  sframe_text "$(tool "$t" objdump)" "$2.gs.o" > "$2.gs.objdump"
  sframe_relocs "$(tool "$t" readelf)" "$2.gs.o" > "$2.gs.relocs"
  sframe_bytes "$(tool "$t" objcopy)" "$(tool "$t" readelf)" "$2.gs.o" "$2.gs.sframe"
}

stage_cc() {
  for a in x86_64 aarch64 s390x; do
    cc=$(cc_for "$a")
    for v in $(cc_variants "$a"); do
      VARIANT=${v%%:*}
      flags=$(echo "${v#*:}" | tr , ' ')
      d=$TD/cc/$a/$VARIANT
      mkdir -p "$d"
      ( cd "$d"
        C="$cc -B $GCCB/gcc-$a -pipe -g0 $flags"
        TS="-I../../src/tree-sitter/include -I../../src/tree-sitter/src"
        $C $TS -c ../../src/tree-sitter/src/lib.c -o tree-sitter.o
        $C $TS -Wa,--gsframe -c ../../src/tree-sitter/src/lib.c -o tree-sitter.gs.o 2> tree-sitter.gs.warnings
        cc_dumps "$a" tree-sitter
        $C -c ../../src/misc/drap.c -o drap.o
        $C -Wa,--gsframe -c ../../src/misc/drap.c -o drap.gs.o 2> drap.gs.warnings
        cc_dumps "$a" drap
        if [ "$a" = x86_64 ] && { [ "$VARIANT" = O2 ] || [ "$VARIANT" = O0 ]; }; then
          L=../../src/leveldb
          CXX="g++ -B $GCCB/gcc-$a -pipe -g0 $flags -std=gnu++11 -DLEVELDB_PLATFORM_POSIX -DOS_LINUX -DLEVELDB_ATOMIC_PRESENT -I$L -I$L/include"
          rm -rf tmp.leveldb; mkdir tmp.leveldb
          : > leveldb.gs.warnings
          for f in $L/db/*.cc $L/table/*.cc $L/util/*.cc $L/port/*.cc; do
            b=$(basename "$f" .cc)
            $CXX -c "$f" -o "tmp.leveldb/$b.o"
            $CXX -Wa,--gsframe -c "$f" -o "tmp.leveldb/$b.gs.o" 2>> leveldb.gs.warnings
          done
          ld=$(tool "$a" ld)
          "$ld" -r -o leveldb.o $(ls tmp.leveldb/*.o | grep -v '\.gs\.o$')
          "$ld" -r -o leveldb.gs.o tmp.leveldb/*.gs.o
          rm -rf tmp.leveldb
          cc_dumps "$a" leveldb
        fi )
    done
  done
}

# ---------------------------------------------------------------- stage v2
# SFrame version 2 as GNU binutils 2.44 writes it (Debian 13's; installed by
# testdata/gnu-old-ref.sh in a private prefix: the newest v2 release Debian's
# mirror serves), into testdata/v2/:
#   gas/ARCH/NAME.{sframe,relocs,objdump,warnings}   as 2.44 --gsframe on testdata/gas/ARCH/NAME.s
#                                                    (NAME.failed: 2.44's error, when it fails)
#   cc/ARCH/VARIANT/NAME.{sframe,relocs,objdump}     the C corpus of stage cc, compiled with as 2.44
#     (not the C++ one: stage cc combines it with ld -r, and ld 2.44 -r's .sframe is no reference:
#     it sorts the index and its .rela.sframe offsets do not fall on the 20-byte FDEs)
#   cxx/x86_64/NAME.{o,sframe,relocs,objdump,warnings}  C++ files of leveldb by g++ -> as 2.44,
#     NAME.o without SFrame (the input), the rest from the --gsframe build
#   link/ARCH/X.gs and X.gs.{sframe,addr,objdump}: testdata/link/src linked by ld 2.44
# The inputs sframe-gen reads are the plain objects of stages gas and cc (same
# gcc; as 2.47 and 2.44 encode the same instructions) and, for link, X.gs
# itself (sframe-gen reads its .eh_frame: its addresses are ld's).
old_tool() { case $1 in aarch64_be) echo "$OLD/aarch64-$2" ;; *) echo "$OLD/$1-$2" ;; esac; }

old_dumps() { # tool-arch base-without-.o object
  sframe_text "$(old_tool "$1" objdump)" "$3" > "$2.objdump"
  sframe_relocs "$(old_tool "$1" readelf)" "$3" > "$2.relocs"
  sframe_bytes "$(old_tool "$1" objcopy)" "$(old_tool "$1" readelf)" "$3" "$2.sframe"
}

stage_v2() {
  OLD=${GNU_OLD_REF:-$("$TD/gnu-old-ref.sh")}
  OLDB=$(dirname "$OLD")
  for a in x86_64 aarch64 aarch64_be; do      # 2.44 has no s390x SFrame
    d=$TD/v2/gas/$a; rm -rf "$d"; mkdir -p "$d"
    ( cd "$TD/gas/$a"
      for s in *.s; do
        n=${s%.s}
        eb=""; [ "$a" = aarch64_be ] && eb=-EB
        eb="$eb $(sed -n 's/^# as-flags: //p' "$s")"
        if "$(old_tool "$a" as)" $eb --gsframe -o "$d/$n.o" "$s" 2> "$d/$n.warnings"; then
          old_dumps "$a" "$d/$n" "$d/$n.o"
        else
          # 2.44 fails (crash or fatal error): keep its message, first line only
          sed -n '2p' "$d/$n.warnings" | sed 's/^[^:]*: //' > "$d/$n.failed"
          rm -f "$d/$n.warnings"
        fi
        rm -f "$d/$n.o"
        case $n in many-fres) rm -f "$d/$n.objdump" ;; esac   # 66k lines
      done )
  done
  for a in x86_64 aarch64; do
    cc=$(cc_for "$a")
    for v in $(cc_variants "$a"); do
      VARIANT=${v%%:*}
      flags=$(echo "${v#*:}" | tr , ' ')
      t=$a; case $VARIANT in *-be) t=aarch64_be ;; esac
      d=$TD/v2/cc/$a/$VARIANT; rm -rf "$d"; mkdir -p "$d"
      ( cd "$TD/cc/$a/$VARIANT"
        C="$cc -B $OLDB/gcc-$a -pipe -g0 $flags"
        TS="-I../../src/tree-sitter/include -I../../src/tree-sitter/src"
        $C $TS -Wa,--gsframe -c ../../src/tree-sitter/src/lib.c -o "$d/tree-sitter.o"
        $C -Wa,--gsframe -c ../../src/misc/drap.c -o "$d/drap.o"
        for n in tree-sitter drap; do old_dumps "$t" "$d/$n" "$d/$n.o"; rm -f "$d/$n.o"; done )
    done
  done
  # C++ (exceptions, COMDAT sections): a few leveldb files, each object kept
  # without SFrame (the input) beside as 2.44's section.
  d=$TD/v2/cxx/x86_64; rm -rf "$d"; mkdir -p "$d"
  ( cd "$d"
    L=../../../cc/src/leveldb
    CXX="g++ -B $OLDB/gcc-x86_64 -pipe -g0 -O2 -std=gnu++11 -DLEVELDB_PLATFORM_POSIX -DOS_LINUX -DLEVELDB_ATOMIC_PRESENT -I$L -I$L/include"
    for f in db/version_set table/table util/env_posix; do
      n=$(basename "$f")
      $CXX -c "$L/$f.cc" -o "$n.o"
      $CXX -Wa,--gsframe -c "$L/$f.cc" -o "$n.gs.o" 2> "$n.warnings"
      old_dumps x86_64 "$n" "$n.gs.o"; rm -f "$n.gs.o"
    done )
  stage_v2link
}

stage_v2link() {
  OLD=${GNU_OLD_REF:-$("$TD/gnu-old-ref.sh")}
  OLDB=$(dirname "$OLD")
  for a in x86_64 aarch64; do
    d=$TD/v2/link/$a; rm -rf "$d"; mkdir -p "$d"
    ( cd "$d"
      cc=$(cc_for "$a")
      B="-B $OLDB/gcc-$a"
      CF="-O2 -g0 -fasynchronous-unwind-tables"
      for gs in .gs; do
        W=-Wa,--gsframe
        $cc $B $CF $W -fPIC -c ../../../link/src/demo.c -o "demo$gs.o"
        $cc $B $CF $W -fPIE -DUSE_DEMO -c ../../../link/src/main.c -o "main$gs.o"
        $cc $B -shared -Wl,-soname,libdemo.so -Wl,-z,lazy "demo$gs.o" -o "lazy$gs.so"
        $cc $B -shared -Wl,-soname,libdemo.so -Wl,-z,now "demo$gs.o" -o "now$gs.so"
        if [ "$a" = x86_64 ]; then
          $cc $B -shared -Wl,-soname,libdemo.so -Wl,-z,lazy -Wl,-z,ibtplt "demo$gs.o" -o "ibt$gs.so"
        fi
        $cc $B -pie "main$gs.o" "lazy$gs.so" -o "pie$gs.exe"
        rm -f "demo$gs.o" "main$gs.o"
      done
      for f in *.gs.so *.gs.exe; do
        sframe_text "$(old_tool "$a" objdump)" "$f" > "$f.objdump"
        sframe_bytes "$(old_tool "$a" objcopy)" "$(old_tool "$a" readelf)" "$f" "$f.sframe"
        "$(old_tool "$a" readelf)" -SW "$f" | awk '$2 == ".sframe" { print "0x" $4 }' > "$f.addr"
      done )
  done
}

# ---------------------------------------------------------------- main
# (all in one function called on the last line, so editing this file while it
# runs cannot change what the running shell reads next)
main() {
  stages=${*:-gas cc link sample v2}   # link uses gas and cc outputs
  for st in $stages; do
    case $st in
      gas|link|sample|cc|v2|v2link) "stage_$st" ;;
      *) echo "regen.sh: unknown stage $st (gas link sample cc v2)" >&2; exit 2 ;;
    esac
  done
}
main "$@"; exit $?
