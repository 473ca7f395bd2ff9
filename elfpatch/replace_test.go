package elfpatch

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestPlanLinkedUnchanged: a file patched with a section is unchanged by a
// plan with the same section, changed by one with other bytes, and Write
// gives what PatchLinked gives; the same when the plan is given the
// file's bytes already read, and bytes of another size are refused.
func TestPlanLinkedUnchanged(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		in := synthExec(bo)
		sf := bytes.Repeat([]byte{0x5a}, 120)
		out, _, err := patchBytes(t, in, sf)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		check := func(data, section []byte, want bool) {
			t.Helper()
			for _, read := range []bool{false, true} {
				checkPlan(t, dir, data, section, want, read)
			}
		}
		check(in, sf, false)
		check(out, sf, true)
		check(out, bytes.Repeat([]byte{0x5b}, 120), false)
		check(out, bytes.Repeat([]byte{0x5a}, 112), false)
		f, err := os.Open(filepath.Join(dir, "f"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := PlanLinked(f, out[:len(out)-1], len(sf), func(uint64) ([][]byte, error) { return [][]byte{sf}, nil }); err == nil {
			t.Errorf("PlanLinked took bytes of another size than the file's")
		}
		f.Close()
	}
}

// checkPlan is TestPlanLinkedUnchanged's check of one plan: the file data
// planned with section (given its bytes read when read) is unchanged when
// want says so, and written as PatchLinked writes it.
func checkPlan(t *testing.T, dir string, data, section []byte, want, read bool) {
	t.Helper()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, data, 0o755)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var given []byte
	if read {
		given = data
	}
	plan, err := PlanLinked(f, given, len(section), func(uint64) ([][]byte, error) { return [][]byte{section}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := plan.Unchanged(); err != nil || got != want {
		t.Errorf("Unchanged: %v, %v; want %v", got, err, want)
	}
	w, _ := os.Create(filepath.Join(dir, "w"))
	defer w.Close()
	if err := plan.Write(w); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(w.Name())
	if patched, _, _ := patchBytes(t, data, section); !bytes.Equal(written, patched) {
		t.Errorf("Write differs from PatchLinked (bytes given: %v)", read)
	}
}

// TestEmptyOutput: an output is emptied before it is written, but an empty
// one is not truncated (ext4 writes a file truncated to size 0 out at its
// last close). /dev/null refuses a truncation, so a write to it fails if
// one is made; a file with bytes is emptied.
func TestEmptyOutput(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if err := empty(null); err != nil {
		t.Errorf("empty(%s): %v", os.DevNull, err)
	}
	in := synthExec(binary.LittleEndian)
	sf := bytes.Repeat([]byte{0x5a}, 120)
	dir := t.TempDir()
	p := filepath.Join(dir, "in")
	if err := os.WriteFile(p, in, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plan, err := PlanLinked(f, in, len(sf), func(uint64) ([][]byte, error) { return [][]byte{sf}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Write(null); err != nil {
		t.Errorf("Write to %s (empty, cannot be truncated): %v", os.DevNull, err)
	}
	// An output with more bytes than the patched file: emptied first.
	w, err := os.Create(filepath.Join(dir, "w"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(bytes.Repeat([]byte{0xee}, 2*len(in))); err != nil {
		t.Fatal(err)
	}
	if err := plan.Write(w); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(w.Name())
	if patched, _, _ := patchBytes(t, in, sf); !bytes.Equal(written, patched) {
		t.Errorf("Write over a longer file: %d bytes, differs from PatchLinked's %d", len(written), len(patched))
	}
}

// TestWriteChunksSize checks the output's size after writeChunks: cut to
// the end when longer, made up with zeros when shorter, and not set when
// it is the end already (XFS writes a file out at every size change; on
// /dev/null, which refuses a size, the call would fail).
func TestWriteChunksSize(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		before []byte
		plan   linkedPlan
		want   []byte
	}{
		{"extended", nil, linkedPlan{end: 8, chunks: []chunk{{0, []byte("ab")}, {3, []byte("c")}}}, []byte("ab\x00c\x00\x00\x00\x00")},
		{"cut", []byte("0123456789"), linkedPlan{end: 4, chunks: []chunk{{1, []byte("xy")}}}, []byte("0xy3")},
		{"already its size", []byte("0123"), linkedPlan{end: 4, chunks: []chunk{{3, []byte("z")}}}, []byte("012z")},
		{"ends with a chunk", []byte("01"), linkedPlan{end: 5, chunks: []chunk{{2, []byte("abc")}}}, []byte("01abc")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, tc.before, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := tc.plan.writeChunks(f); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if err := (&linkedPlan{}).writeChunks(null); err != nil {
		t.Errorf("writeChunks to %s, of its size already: %v", os.DevNull, err)
	}
}
