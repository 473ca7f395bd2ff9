package elfpatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestPatchLinkedExisting patches GNU-built files that already have .sframe
// and PT_GNU_SFRAME: with the same section (in place), and with a bigger
// one (moved; still one PT_GNU_SFRAME, same section index).
func TestPatchLinkedExisting(t *testing.T) {
	for _, tg := range targets(t)[:3] {
		if tg.arch == "aarch64" {
			continue // covered by x86_64 (LE) and s390x (BE)
		}
		t.Run(tg.arch, func(t *testing.T) {
			dir := t.TempDir()
			gs, _ := tg.build(t, dir, "hello", helloC, "-fPIE", "-pie")
			sec, addr := sectionOf(t, gs, ".sframe")
			want := tg.exec(t, gs)
			od := sysfiles.GNURef.Tool(t, tg.tool, "objdump")

			same := filepath.Join(dir, "same")
			lay := patchFile(t, gs, same, sec, addr)
			if !lay.InPlace || lay.Addr != addr {
				t.Errorf("same section: %+v, want in place at %#x", lay, addr)
			}
			if got, w := sframeText(t, od, same), sframeText(t, od, gs); got != w {
				t.Errorf("objdump --sframe differs:\n%s\nwant\n%s", got, w)
			}
			checkELF(t, tg, same)

			// A bigger section: every FDE twice (decoded and re-encoded by emit).
			s, err := emit.Decode(sec)
			if err != nil {
				t.Fatal(err)
			}
			n := s.NumFDEs()
			starts := make([]uint64, n)
			for i := range s.Index {
				starts[i] = s.FuncStart(i, addr)
			}
			// The second copy of each FDE has a copy of its FRE data
			// (libsframe reads no shared block in a big-endian section).
			for i := range n {
				if err := s.AppendCopy(i, s.Index[i].Size); err != nil {
					t.Fatal(err)
				}
			}
			big := func(a uint64) ([]byte, error) {
				c := *s
				c.Index = append([]emit.IndexEntry(nil), s.Index...)
				for i := range c.Index {
					c.SetFuncStart(i, starts[i%n], a)
				}
				return c.Encode()
			}
			b0, err := big(0)
			if err != nil {
				t.Fatal(err)
			}
			moved := filepath.Join(dir, "moved")
			fi, _ := os.Open(gs)
			defer fi.Close()
			fo, _ := os.OpenFile(moved, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o755)
			defer fo.Close()
			lay, err = PatchLinked(fi, fo, len(b0), big)
			if err != nil {
				t.Fatal(err)
			}
			fo.Close()
			if lay.InPlace {
				t.Errorf("bigger section patched in place: %+v", lay)
			}
			t.Logf("%+v", lay)
			if got := tg.exec(t, moved); got != want {
				t.Errorf("moved: prints %q, want %q", got, want)
			}
			checkELF(t, tg, moved)
			out := sframeText(t, od, moved)
			if c := strings.Count(out, "func idx"); c != 2*n {
				t.Errorf("moved: %d functions in objdump, want %d\n%s", c, 2*n, out)
			}
			again := filepath.Join(dir, "again")
			fi2, _ := os.Open(moved)
			defer fi2.Close()
			fo2, _ := os.OpenFile(again, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o755)
			defer fo2.Close()
			if _, err := PatchLinked(fi2, fo2, len(b0), big); err != nil {
				t.Fatal(err)
			}
			if !sameFile(t, moved, again) {
				t.Errorf("second patch of the moved file differs")
			}
		})
	}
}

// TestPatchLinkedShared patches a shared library and runs a program that
// loads the patched copy.
func TestPatchLinkedShared(t *testing.T) {
	const libC = `int twice(int x) { return 2 * x; }
int thrice(int x) { return twice(x) + x; }
`
	const mainC = `#include <stdio.h>
int thrice(int);
int main(void) { printf("%d\n", thrice(14)); return 0; }
`
	for _, tg := range targets(t) {
		t.Run(tg.arch, func(t *testing.T) {
			dir := t.TempDir()
			gs, plain := tg.build(t, dir, "libt", libC, "-shared", "-fPIC")
			// The program links against libt.so.
			so := filepath.Join(dir, "libt.so")
			if err := os.Rename(plain, so); err != nil {
				t.Fatal(err)
			}
			mc := filepath.Join(dir, "main.c")
			os.WriteFile(mc, []byte(mainC), 0o644)
			exe := filepath.Join(dir, "main")
			bdir := sysfiles.GNURef.GCC(t, tg.arch)
			run(t, tg.gcc, "-B", bdir, "-o", exe, mc, "-L"+dir, "-lt")
			pdir := filepath.Join(dir, "patched")
			os.Mkdir(pdir, 0o755)
			sec, addr := sectionOf(t, gs, ".sframe")
			lay := patchFile(t, so, filepath.Join(pdir, "libt.so"), sec, addr)
			t.Logf("%+v", lay)
			checkELF(t, tg, filepath.Join(pdir, "libt.so"))
			od := sysfiles.GNURef.Tool(t, tg.tool, "objdump")
			if got, w := sframeText(t, od, filepath.Join(pdir, "libt.so")), sframeText(t, od, gs); got != w {
				t.Errorf("objdump --sframe differs:\n%s\nwant\n%s", got, w)
			}
			os.Setenv("LD_LIBRARY_PATH", pdir)
			defer os.Unsetenv("LD_LIBRARY_PATH")
			if got := tg.exec(t, exe); got != "42\n" {
				t.Errorf("program with patched library prints %q", got)
			}
			// The table grows in place (the build-id note and .gnu.hash
			// move), so the distribution's own strip (Debian 12: binutils
			// 2.40, which misplaces a PT_LOAD that starts with a moved
			// table over .data) keeps a library that loads.
			if lay.PhdrsMoved {
				t.Errorf("program header table moved: %+v", lay)
			}
			strip := "strip"
			if tg.qemu != "" {
				strip = tg.arch + "-linux-gnu-strip"
			}
			sysfiles.NeedProgram(t, strip)
			sdir := filepath.Join(dir, "stripped")
			os.Mkdir(sdir, 0o755)
			run(t, strip, "--strip-unneeded", "-o", filepath.Join(sdir, "libt.so"), filepath.Join(pdir, "libt.so"))
			checkELF(t, tg, filepath.Join(sdir, "libt.so"))
			os.Setenv("LD_LIBRARY_PATH", sdir)
			if got := tg.exec(t, exe); got != "42\n" {
				t.Errorf("program with the patched library stripped by %s prints %q", strip, got)
			}
		})
	}
}
