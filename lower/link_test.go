package lower

import (
	"bytes"
	"debug/elf"
	"fmt"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

func run(t *testing.T, dir string, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
}

const pltCaller = `
	.text
	.globl foo
	.type foo,@function
foo:	.cfi_startproc
	sub $8,%rsp
	.cfi_def_cfa_offset 16
	call ext1@PLT
	call ext2@PLT
	call ext3@PLT
	add $8,%rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.globl bar
	.type bar,@function
bar:	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register 6
	call ext1@PLT
	leave
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
`

// TestLinkedX86 links an object made by as --gsframe with GNU ld and
// rebuilds the output .sframe from the linked file's .eh_frame: the
// functions' FDEs by Lower, the PLT FDEs by PLT, placed and sorted.
func TestLinkedX86(t *testing.T) {
	as, ld := sysfiles.GNURef.Tool(t, "x86_64", "as"), sysfiles.GNURef.Tool(t, "x86_64", "ld")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.s"), []byte(pltCaller), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, as, "--gsframe", "-o", "f.o", "f.s")
	lib := "\t.globl ext1,ext2,ext3\next1:\next2:\next3:\n\tret\n"
	if err := os.WriteFile(filepath.Join(dir, "l.s"), []byte(lib), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, as, "-o", "l.o", "l.s")
	run(t, dir, ld, "-shared", "-o", "libe.so", "l.o")
	exe := []string{"f.o", "-L.", "-le", "--no-dynamic-linker", "-e", "foo"}
	for _, tc := range []struct {
		name    string
		flags   []string
		variant PLTVariant
	}{
		{"lazy", []string{"-shared", "f.o"}, PLTLazy},
		{"ibt", []string{"-shared", "-z", "ibtplt", "f.o"}, PLTLazyIBT},
		{"exe-now", append([]string{"-z", "now"}, exe...), PLTLazy},
		{"pie-ibt", append([]string{"-pie", "-z", "ibtplt"}, exe...), PLTLazyIBT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.name + ".out"
			run(t, dir, ld, append(append([]string{}, tc.flags...), "-o", out)...)
			f, err := elf.Open(filepath.Join(dir, out))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			checkLinked(t, f, tc.variant)
		})
	}
}

const s390xPLTCaller = `
	.text
	.globl foo
	.type foo,@function
foo:	.cfi_startproc
	stmg %r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	brasl %r14,ext1@PLT
	brasl %r14,ext2@PLT
	lmg %r14,%r15,272(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br %r14
	.cfi_endproc
`

func TestLinkedS390X(t *testing.T) {
	as, ld := sysfiles.GNURef.Tool(t, "s390x", "as"), sysfiles.GNURef.Tool(t, "s390x", "ld")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.s"), []byte(s390xPLTCaller), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, as, "--gsframe", "-o", "f.o", "f.s")
	run(t, dir, ld, "-shared", "-o", "f.so", "f.o")
	f, err := elf.Open(filepath.Join(dir, "f.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkLinked(t, f, 0)
}

func checkLinked(t *testing.T, f *elf.File, variant PLTVariant) {
	target, err := TargetForELF(f)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := cfi.Read(f, cfi.EHFrame)
	if err != nil {
		t.Fatal(err)
	}
	// ld's own .eh_frame FDEs for the PLT are not where its SFrame PLT
	// FDEs come from: leave them out and use the fixed tables.
	var plts []PLTSection
	kinds := map[string]PLTKind{".plt": PLTMain, ".plt.sec": PLTSec, ".plt.got": PLTGot}
	for _, s := range f.Sections {
		if k, ok := kinds[s.Name]; ok {
			plts = append(plts, PLTSection{Kind: k, Addr: s.Addr, Size: s.Size})
		}
	}
	inPLT := func(a uint64) bool {
		for _, p := range plts {
			if a >= p.Addr && a < p.Addr+p.Size {
				return true
			}
		}
		return false
	}
	kept := frames.FDEs[:0]
	for _, fde := range frames.FDEs {
		if !inPLT(fde.Start) {
			kept = append(kept, fde)
		}
	}
	frames.FDEs = kept
	res, err := Lower(frames, target, Options{GasCompat: true})
	if err != nil {
		t.Fatal(err)
	}
	fdes, err := pltFDEs(target, variant, plts)
	if err != nil {
		t.Fatal(err)
	}
	// pltForELF must find the same layout from the code.
	if v, secs, err := pltForELF(f, target); err != nil {
		t.Errorf("pltForELF: %v", err)
	} else if (target.Arch == AMD64 && v != variant) || fmt.Sprint(secs) != fmt.Sprint(plts) {
		t.Errorf("pltForELF: variant %d sections %v, want %d %v", v, secs, variant, plts)
	}
	res.appendPLT(fdes)
	sf := f.Section(".sframe")
	res.Place(sf.Addr)
	got, err := res.Section.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want, err := sf.Data()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf(".sframe differs from ld's\n got % x\nwant % x", got, want)
	}
}
