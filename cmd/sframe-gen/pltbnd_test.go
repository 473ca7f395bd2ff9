package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// The lazy .plt of ld 2.40 with IBT (-z ibtplt): PLT0 and each entry, and
// the BND form ld 2.29 to 2.3x wrote with -z bndplt (bnd jmp, one byte
// longer, so rel32 one less, then a shorter nop).
var (
	ibtPLT0  = []byte{0xff, 0x35, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0, 0x0f, 0x1f, 0x40, 0x00}
	ibtEntry = []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0, 0x66, 0x90}
	ibtSec   = []byte{0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0, 0, 0, 0, 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}
	// DW_CFA_def_cfa_expression: rsp+8 + ((rip&15) >= N) << 3, N = 9.
	pltExprLit9 = []byte{0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x39, 0x2a, 0x33, 0x24, 0x22}
)

// matches reports whether b has pattern's bytes where pattern is not zero.
func matches(b, pattern []byte) bool {
	if len(b) < len(pattern) {
		return false
	}
	for i, p := range pattern {
		if p != 0 && b[i] != p {
			return false
		}
	}
	return true
}

// toBNDPLT rewrites the lazy IBT .plt and .plt.sec of the x86-64 shared
// library at path, as ld 2.40 links them, into the IBT+BND form of older
// ld (endbr64; push $i; bnd jmp PLT0; nop), with its .eh_frame's PLT
// expression saying DW_OP_lit10 as that ld wrote it, while the entries'
// push still ends at offset 9.
func toBNDPLT(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	rel := func(p []byte) { le.PutUint32(p, le.Uint32(p)-1) }
	plt, sec, eh := f.Section(".plt"), f.Section(".plt.sec"), f.Section(".eh_frame")
	if plt == nil || sec == nil || eh == nil || plt.Size < 32 || plt.Size%16 != 0 || sec.Size%16 != 0 {
		t.Fatalf("%s: no lazy IBT .plt with .plt.sec and .eh_frame", path)
	}
	p := b[plt.Offset : plt.Offset+plt.Size]
	if !matches(p, ibtPLT0) {
		t.Fatalf("PLT0 % x is not ld 2.40's", p[:16])
	}
	copy(p[9:13], p[8:12]) // jmp *disp32(%rip): the displacement, one byte on
	copy(p[6:9], []byte{0xf2, 0xff, 0x25})
	rel(p[9:])
	copy(p[13:], []byte{0x0f, 0x1f, 0x00})
	for e := p[16:]; len(e) >= 16; e = e[16:] {
		if !matches(e, ibtEntry) {
			t.Fatalf("PLT entry % x is not ld 2.40's IBT entry", e[:16])
		}
		copy(e[10:15], e[9:14]) // jmp rel32, one byte on
		e[9] = 0xf2
		rel(e[11:])
		e[15] = 0x90
	}
	for e := b[sec.Offset : sec.Offset+sec.Size]; len(e) >= 16; e = e[16:] {
		if !matches(e, ibtSec) {
			t.Fatalf(".plt.sec entry % x is not ld 2.40's", e[:16])
		}
		copy(e[7:11], e[6:10])
		copy(e[4:7], []byte{0xf2, 0xff, 0x25})
		rel(e[7:])
		copy(e[11:], []byte{0x0f, 0x1f, 0x44, 0x00, 0x00})
	}
	ehb := b[eh.Offset : eh.Offset+eh.Size]
	i := bytes.Index(ehb, pltExprLit9)
	if i < 0 || bytes.Count(ehb, pltExprLit9) != 1 {
		t.Fatalf("%s: .eh_frame has not one PLT expression with DW_OP_lit9", path)
	}
	ehb[i+8] = 0x3a // DW_OP_lit10
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestIBTBNDPLT: a shared library whose lazy PLT has IBT and BND
// (endbr64; push; bnd jmp), for which older GNU ld wrote a CFA expression
// saying the push takes effect at entry offset 10 while it ends at 9, the
// start of the bnd jmp. generate writes the push's effect at 9 (as GNU
// ld's own SFrame for IBT PLTs does), what the code does at that
// instruction boundary; verify reads the expression at the boundary too
// (a note, no problem). The library is linked by the machine's ld with
// -z ibtplt and rewritten into the older ld's BND form; a program calling
// through the PLT still runs.
func TestIBTBNDPLT(t *testing.T) {
	gcc := sysfiles.NeedProgram(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "lib.c")
	os.WriteFile(src, []byte("int ext1(int x) { return x + 1; }\nint ext2(int x) { return x * 2; }\n"+
		"int f(int x) { return ext1(x) + ext2(x); }\n"), 0o644)
	main := filepath.Join(dir, "main.c")
	os.WriteFile(main, []byte("#include <stdio.h>\nint f(int);\nint main(void) { printf(\"%d\\n\", f(20)); return 0; }\n"), 0o644)
	lib := filepath.Join(dir, "libbnd.so")
	gccBuild(t, gcc, lib, "-O2", "-fPIC", "-fcf-protection", "-shared", "-Wl,-z,ibtplt", "-Wl,-z,lazy", src)
	toBNDPLT(t, lib)
	prog := filepath.Join(dir, "prog")
	gccBuild(t, gcc, prog, "-O2", main, "-L"+dir, "-lbnd", "-Wl,-rpath,"+dir, "-Wl,-z,lazy")
	want := runProgram(t, prog)

	if _, stderr, code := runCLI(lib); code != exitOK {
		t.Fatalf("generate: exit %d:\n%s", code, stderr)
	}
	dump, _, _ := runCLI("dump", lib)
	if !strings.Contains(dump, "0000000000000009  sp+16") {
		t.Errorf("the PLT entries' FRE is not at offset 9:\n%s", dump)
	}
	stdout, stderr, code := runCLI("verify", lib)
	if code != exitOK || !strings.Contains(stdout, "read at that instruction's start, where the push has run") {
		t.Errorf("verify: exit %d, want 0 and the PLT boundary note:\n%s%s", code, stdout, stderr)
	}
	if got := runProgram(t, prog); got != want || want != "61\n" {
		t.Errorf("program prints %q after the patch, %q before, want \"61\\n\"", got, want)
	}
}
