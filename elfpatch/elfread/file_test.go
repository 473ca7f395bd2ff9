package elfread

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// testdataFile reads a file of the repository's testdata.
func testdataFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestObjectsAt reads an ELF file, a static archive of two objects and a
// text file at their paths: the file is its one object, named by its
// path; the archive's ELF members are its objects, named ARCHIVE(MEMBER),
// the others left out; the text file is not ELF; a directory is refused.
func TestObjectsAt(t *testing.T) {
	dir := t.TempDir()
	obj := testdataFile(t, "gas/x86_64/addr2.o")
	ar := []byte("!<arch>\n")
	for _, m := range []struct {
		name string
		data []byte
	}{{"addr2.o", obj}, {"README", []byte("text\n")}, {"addr4.o", testdataFile(t, "gas/x86_64/addr4.o")}} {
		ar = fmt.Appendf(ar, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", m.name+"/", "0", "0", "0", "644", len(m.data))
		ar = append(ar, m.data...)
		if len(m.data)%2 == 1 {
			ar = append(ar, '\n')
		}
	}
	files := map[string][]byte{"a.o": obj, "lib.a": ar, "text": []byte("not ELF at all")}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path  string
		names []string // the objects' names, in order
		err   string
	}{
		{"a.o", []string{"a.o"}, ""},
		{"lib.a", []string{"lib.a(addr2.o)", "lib.a(addr4.o)"}, ""},
		{"text", nil, ErrNotELF.Error()},
		{".", nil, "not a regular file (a directory)"},
	} {
		path := filepath.Join(dir, tc.path)
		var names []string
		m := NewMeter(nil)
		found, err := m.ObjectsAt(path, func(o Object) bool {
			if o.Err != nil || o.File == nil || o.Size == 0 {
				t.Errorf("%s: object %+v", tc.path, o)
			}
			names = append(names, strings.TrimPrefix(o.Name(path), dir+"/"))
			return o.Member == "addr4.o"
		})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.path, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.path, err)
		case found != (tc.path == "lib.a"):
			t.Errorf("%s: found %v, want it only where fn found a member", tc.path, found)
		}
		if strings.Join(names, " ") != strings.Join(tc.names, " ") {
			t.Errorf("%s: objects %q, want %q", tc.path, names, tc.names)
		}
	}
}

// TestChargeNotesVerify: a core's notes cost twice their size, a check of
// .sframe against the CFI the sum of its parts' charges, and a charge
// over the budget fails naming what it was for.
func TestChargeNotesVerify(t *testing.T) {
	f, err := elf.Open(filepath.Join("..", "..", "testdata", "link", "x86_64", "lazy.gs.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := os.Stat(filepath.Join("..", "..", "testdata", "link", "x86_64", "lazy.gs.so"))
	if err != nil {
		t.Fatal(err)
	}
	var parts, whole []Cost
	record := func(to *[]Cost) func(Cost) error {
		return func(c Cost) error { *to = append(*to, c); return nil }
	}
	pm := ChargeTo(record(&parts))
	for _, charge := range []func() error{
		func() error { return pm.ChargeSFrame(f, st.Size()) },
		func() error { return pm.ChargeCFI(f, cfi.Auto) },
		func() error { return pm.ChargeNames(f, st.Size()) },
	} {
		if err := charge(); err != nil {
			t.Fatal(err)
		}
	}
	if err := ChargeTo(record(&whole)).ChargeVerify(f, st.Size(), cfi.Auto); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(whole) != fmt.Sprint(parts) || len(whole) < 3 {
		t.Errorf("ChargeVerify charged %v, want %v", whole, parts)
	}

	var notes []Cost
	if err := ChargeTo(record(&notes)).ChargeNotes(3 << 20); err != nil {
		t.Fatal(err)
	}
	if want := []Cost{{Bytes: 6 << 20, What: "notes of " + FormatSize(3<<20)}}; fmt.Sprint(notes) != fmt.Sprint(want) {
		t.Errorf("ChargeNotes charged %v, want %v", notes, want)
	}
	m := NewMeter(NewMemoryBudget(MemoryReserve + 1<<20))
	defer m.Release()
	var over *OverBudgetError
	if err := m.ChargeNotes(1 << 20); !errors.As(err, &over) || !strings.Contains(err.Error(), "notes of") {
		t.Errorf("notes over the budget: %v, want an *OverBudgetError naming them", err)
	}
}
