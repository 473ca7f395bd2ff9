package sframegen

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit/stats"
)

// copyTestdata copies the testdata file src to dir/name, or writes data
// there when src is "".
func copyTestdata(t *testing.T, dir, name, src string, data []byte) {
	t.Helper()
	if src != "" {
		var err error
		if data, err = os.ReadFile(filepath.Join("testdata", src)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTreeStats reads a tree of a shared library with .sframe, an object
// without CFI, an object for an architecture without SFrame, a static
// archive of two objects, a text file and a FIFO, and a text file the
// user named: the statistics of the library and of each member, the rest
// counted as generating counts it, in the order of the walk.
func TestTreeStats(t *testing.T) {
	dir := t.TempDir()
	copyTestdata(t, dir, "a-lib.so", "link/x86_64/lazy.gs.so", nil)
	copyTestdata(t, dir, "b-nocfi.o", "gas/x86_64/nocfi.o", nil)
	riscv, err := os.ReadFile(filepath.Join("testdata", "gas", "x86_64", "addr2.o"))
	if err != nil {
		t.Fatal(err)
	}
	riscv[18], riscv[19] = byte(elf.EM_RISCV), 0 // e_machine, little-endian
	copyTestdata(t, dir, "c-riscv.o", "", riscv)
	ar := []byte("!<arch>\n")
	for _, name := range []string{"addr2.o", "addr4.o"} {
		data, err := os.ReadFile(filepath.Join("testdata", "gas", "x86_64", name))
		if err != nil {
			t.Fatal(err)
		}
		ar = fmt.Appendf(ar, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name+"/", "0", "0", "0", "644", len(data))
		ar = append(ar, data...)
		if len(data)%2 == 1 {
			ar = append(ar, '\n')
		}
	}
	copyTestdata(t, dir, "d-lib.a", "", ar)
	copyTestdata(t, dir, "e-text", "", []byte("not ELF\n"))
	if err := syscall.Mkfifo(filepath.Join(dir, "f-fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(t.TempDir(), "named.txt")
	copyTestdata(t, filepath.Dir(named), "named.txt", "", []byte("text\n"))

	tree, err := Walk([]string{dir, named}, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	g, err := NewGenerator(Options{}, Resources{})
	if err != nil {
		t.Fatal(err)
	}
	var objects, failed []string
	total := g.TreeStats(tree, elfread.NewMemoryBudget(1<<30), false, 2, func(f *stats.File) {
		for _, st := range f.Objects {
			objects = append(objects, fmt.Sprintf("%s %s dry=%v", filepath.Base(st.File), st.Kind, st.DryRun))
		}
		for _, fl := range f.Failed {
			failed = append(failed, fmt.Sprintf("%s: %v", filepath.Base(fl.Name), fl.Err))
		}
	})
	want := []string{"a-lib.so shared-library dry=false", "d-lib.a(addr2.o) archive-member dry=true", "d-lib.a(addr4.o) archive-member dry=true"}
	if strings.Join(objects, "; ") != strings.Join(want, "; ") {
		t.Errorf("objects %q, want %q", objects, want)
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "named.txt: "+elfread.ErrNotELF.Error()) {
		t.Errorf("failed %q, want the named text file, not ELF", failed)
	}
	var installed int64
	for _, name := range []string{"a-lib.so", "b-nocfi.o", "c-riscv.o", "d-lib.a"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		installed += st.Size()
	}
	if total.Files != 3 || total.FilesWithoutCFI != 1 || total.FilesSkipped != 2 || total.FilesFailed != 1 || total.InstalledBytes != installed {
		t.Errorf("total: %d described, %d without CFI, %d skipped, %d failed, %d bytes; want 3, 1, 2 (riscv, text), 1, %d",
			total.Files, total.FilesWithoutCFI, total.FilesSkipped, total.FilesFailed, total.InstalledBytes, installed)
	}
	if k := total.ByKind["archive-member"]; k == nil || k.Files != 2 {
		t.Errorf("archive members: %+v", k)
	}
}

// TestObjectStats: the statistics of an object are Stats' with the fields
// naming it, and what reading it takes is charged to the Meter: under a
// budget too small for it, an *elfread.OverBudgetError.
func TestObjectStats(t *testing.T) {
	path := filepath.Join("testdata", "link", "x86_64", "lazy.gs.so")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(Options{}, Resources{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{false, true} {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		o := elfread.Object{File: f, R: bytes.NewReader(data), Size: int64(len(data))}
		want, err := g.Stats(o.R, o.Size, f, dry)
		if err != nil {
			t.Fatal(err)
		}
		want.File, want.Kind, want.FileBytes = path, "shared-library", int64(len(data))
		m := elfread.NewMeter(elfread.NewMemoryBudget(1 << 30))
		got, err := g.ObjectStats(path, &o, m, dry)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("dry %v:\n got %+v\nwant %+v", dry, got, want)
		}
		if m.Held() == 0 {
			t.Errorf("dry %v: nothing charged", dry)
		}
		m.Release()
		small := elfread.NewMeter(elfread.NewMemoryBudget(elfread.MemoryReserve + 1))
		var over *elfread.OverBudgetError
		if _, err := g.ObjectStats(path, &o, small, dry); !errors.As(err, &over) {
			t.Errorf("dry %v under a budget of 1 byte: %v, want an *OverBudgetError", dry, err)
		}
	}
}
