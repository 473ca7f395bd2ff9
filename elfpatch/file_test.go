package elfpatch

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPatchFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "synth")
	if err := os.WriteFile(p, synthExec(binary.LittleEndian), 0o755); err != nil {
		t.Fatal(err)
	}
	sf := bytes.Repeat([]byte{1}, 40)
	enc := func(uint64) ([]byte, error) { return sf, nil }
	// In place.
	lay, err := PatchLinkedFile(p, p, len(sf), enc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if err := checkInvariants(b, len(sf)); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", st.Mode())
	}
	// To another file, then a failing one leaves no trace.
	q := filepath.Join(dir, "copy")
	if _, err := PatchLinkedFile(p, q, len(sf), enc); err != nil {
		t.Fatal(err)
	}
	if bq, _ := os.ReadFile(q); !bytes.Equal(bq, b) {
		t.Errorf("second patch (%+v) differs", lay)
	}
	bad := func(uint64) ([]byte, error) { return sf[:1], nil }
	if _, err := PatchLinkedFile(p, p, len(sf), bad); err == nil || !strings.Contains(err.Error(), "announced") {
		t.Errorf("error %v", err)
	}
	if b2, _ := os.ReadFile(p); !bytes.Equal(b2, b) {
		t.Errorf("file changed by a failed patch")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("directory holds %d files, want 2 (temporary file left?)", len(ents))
	}

	obj, err := os.ReadFile("../testdata/gas/x86_64/basic.o")
	if err != nil {
		t.Fatal(err)
	}
	o := filepath.Join(dir, "basic.o")
	os.WriteFile(o, obj, 0o644)
	if err := PatchObjectFile(o, o, make([]byte, 44), []Reloc{{Offset: 28, Type: 24, Section: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := PatchObjectFile(p, o, nil, nil); err == nil {
		t.Errorf("no error patching a linked file as an object")
	}
}
