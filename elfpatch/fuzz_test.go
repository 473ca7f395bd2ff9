package elfpatch

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/elfcheck"
)

func addObjectSeeds(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/gas/*/*.o")
	for _, p := range paths {
		// Small inputs only: the mutator stalls on big ones.
		if b, err := os.ReadFile(p); err == nil && len(b) <= 4096 {
			f.Add(b)
		}
	}
}

// FuzzPatchLinked: no panic on any input; a successful patch satisfies the
// loader invariants, keeps every input section (elfcheck.CheckPreserved), patches
// again identically (and with another section as the input alone would
// be, when taken for an earlier output), and is what PatchLinkedCopyParts writes over a copy made
// while it encodes.
func FuzzPatchLinked(f *testing.F) {
	f.Add(synthExec(binary.LittleEndian))
	f.Add(synthExec(binary.BigEndian))
	addObjectSeeds(f)
	sf := bytes.Repeat([]byte{0x5a}, 120)
	f.Fuzz(func(t *testing.T, in []byte) {
		if pf, err := parse(bytes.NewReader(in), int64(len(in))); err == nil {
			for _, p := range pf.progs {
				if p.Type == ptLoad && p.Align > 1<<16 {
					return // valid, but makes big sparse outputs: slow
				}
			}
		}
		out, _, err := patchBytes(t, in, sf)
		if err != nil {
			return
		}
		if _, err := elf.NewFile(bytes.NewReader(in)); err != nil {
			return // debug/elf cannot check what it cannot read
		}
		if err := checkInvariants(out, len(sf)); err != nil {
			t.Fatalf("patched output: %v", err)
		}
		if err := elfcheck.CheckPreserved(in, out); err != nil {
			t.Fatalf("patched output does not keep the input: %v", err)
		}
		overCopy, err := patchOverCopy(t, in, sf)
		if err != nil || !bytes.Equal(overCopy, out) {
			t.Fatalf("PatchLinkedCopyParts (error %v) differs from PatchLinked", err)
		}
		if planned, err := plannedFromMemory(t, in, sf); err != nil || !bytes.Equal(planned, out) {
			t.Fatalf("PlanLinked given the bytes, then Write (error %v), differs from PatchLinked", err)
		}
		again, lay, err := patchBytes(t, out, sf)
		if err != nil {
			t.Fatalf("second patch: %v", err)
		}
		if !(lay.InPlace || lay.Replaced) || !bytes.Equal(again, out) {
			t.Fatalf("second patch not identical: %+v", lay)
		}
		// Patched again with a section of another size: what the input
		// patched with it alone gives (or, for an input not taken for an
		// earlier one's output, at least a valid file keeping the input).
		for _, other := range [][]byte{bytes.Repeat([]byte{0x6b}, 24), bytes.Repeat([]byte{0x6b}, 5000)} {
			alone, _, err := patchBytes(t, in, other)
			if err != nil {
				continue
			}
			after, lay, err := patchBytes(t, out, other)
			if err != nil {
				t.Fatalf("patching the output again with %d bytes: %v", len(other), err)
			}
			if lay.Replaced && !bytes.Equal(after, alone) {
				t.Fatalf("output patched again with %d bytes differs from the input patched with them: %+v", len(other), lay)
			}
			if err := checkInvariants(after, len(other)); err != nil {
				t.Fatalf("output patched again with %d bytes: %v", len(other), err)
			}
		}
	})
}

// plannedFromMemory patches in with PlanLinked given its bytes (patched in
// memory unless the file written from them has holes), then Write.
func plannedFromMemory(t *testing.T, in, sf []byte) ([]byte, error) {
	return patchFiles(t, in, func(fi, fo *os.File) error {
		p, err := PlanLinked(fi, in, len(sf), func(uint64) ([][]byte, error) { return [][]byte{sf}, nil })
		if err != nil {
			return err
		}
		return p.Write(fo)
	})
}

// FuzzPatchObject: no panic on any input; a successful patch has the new
// .sframe readable by debug/elf, keeps every input section, symbol and
// relocation (elfcheck.CheckPreserved), and patches into itself (a second run
// writes nothing).
func FuzzPatchObject(f *testing.F) {
	addObjectSeeds(f)
	sf := bytes.Repeat([]byte{0x5a}, 44)
	relocs := []Reloc{{Offset: 28, Type: 1, Section: 1, Addend: 4}}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := PatchObject(bytes.NewReader(in), int64(len(in)), &out, sf, relocs); err != nil {
			if out.Len() != 0 {
				t.Fatalf("output written on error")
			}
			return
		}
		if _, err := elf.NewFile(bytes.NewReader(in)); err != nil {
			return
		}
		ef, err := elf.NewFile(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("output unreadable: %v", err)
		}
		s := ef.Section(".sframe")
		if s == nil {
			t.Fatalf("no .sframe in output")
		}
		if b, err := s.Data(); err != nil || !bytes.Equal(b, sf) {
			t.Fatalf(".sframe contents wrong: %v", err)
		}
		if err := elfcheck.CheckPreserved(in, out.Bytes()); err != nil {
			t.Fatalf("patched output does not keep the input: %v", err)
		}
		again, err := PatchObjectBytes(out.Bytes(), sf, relocs)
		if err != nil || !bytes.Equal(again, out.Bytes()) {
			t.Fatalf("second patch (error %v) differs from the first", err)
		}
	})
}
