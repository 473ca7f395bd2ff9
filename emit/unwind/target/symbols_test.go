package target

import (
	"debug/elf"
	"path/filepath"
	"testing"
)

// openTestdata opens an ELF file of testdata/link/x86_64.
func openTestdata(t *testing.T, name string) *elf.File {
	t.Helper()
	f, err := elf.Open(filepath.Join("..", "..", "..", "testdata", "link", "x86_64", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestSymbols names functions of a PIE (main 0x10e0+365, _start
// 0x1250+34, deregister_tm_clones 0x1280, _init 0x1000 and _fini 0x1358
// of size 0, .plt at 0x1020, its undefined imports at 0) and of an object (fib at .text+0x10): the
// function starting at an address (Lookup), else where it is (Name), and
// the function holding an address (Holding: a sized symbol holds its
// bytes, one of size 0 up to the next; an import at 0 holds nothing).
func TestSymbols(t *testing.T) {
	exe, obj := NewSymbols(openTestdata(t, "pie.exe")), NewSymbols(openTestdata(t, "demo.pic.o"))
	for _, c := range []struct {
		s        *Symbols
		section  int
		start    uint64
		lookup   string // "": none
		name     string
		holding  string
		holdsOff uint64
	}{
		{exe, 0, 0x10e0, "main", "main", "main", 0},
		{exe, 0, 0x10f0, "", "function at .text+0x10", "main", 0x10},
		{exe, 0, 0x1250, "_start", "_start", "_start", 0},
		{exe, 0, 0x1272, "", "function at .text+0x192", "", 0},
		{exe, 0, 0x1290, "", "function at .text+0x1b0", "deregister_tm_clones", 0x10},
		{exe, 0, 0x1020, "", "function at .plt", "_init", 0x20},
		{exe, 0, 0x1030, "", "function at .plt+0x10", "_init", 0x30},
		{exe, 0, 0x500, "", "function at .dynsym+0x148", "", 0},
		{exe, 0, 0x999999, "", "function at 0x999999", "_fini", 0x999999 - 0x1358},
		{obj, 1, 0x10, "fib", "fib", "", 0},
		{obj, 1, 0x5, "", "function at .text+0x5", "", 0},
		{obj, 2, 0x10, "", "function at .rela.text+0x10", "", 0},
		{obj, 99, 0x5, "", "function at section 99+0x5", "", 0},
		{nil, 0, 0x5, "", "function at 0x5", "", 0},
	} {
		name, ok := c.s.Lookup(c.section, c.start)
		if name != c.lookup || ok != (c.lookup != "") {
			t.Errorf("Lookup(%d, %#x) = %q, %v; want %q", c.section, c.start, name, ok, c.lookup)
		}
		if got := c.s.Name(c.section, c.start); got != c.name {
			t.Errorf("Name(%d, %#x) = %q, want %q", c.section, c.start, got, c.name)
		}
		if got, off := c.s.Holding(c.start); got != c.holding || off != c.holdsOff {
			t.Errorf("Holding(%#x) = %q+%#x, want %q+%#x", c.start, got, off, c.holding, c.holdsOff)
		}
	}
}
