package cfi

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds adds the CFI sections of a few real inputs to the corpus (the
// committed seeds under testdata/fuzz are small real sections too); fewer
// than 8 fail the target.
func fuzzSeeds(f *testing.F) {
	added := 0
	defer func() {
		if added < 8 {
			f.Fatalf("%d CFI sections under ../testdata to seed the corpus with", added)
		}
	}()
	paths, _ := filepath.Glob("../testdata/gas/*/*.o")
	more, _ := filepath.Glob("../testdata/link/*/*.so")
	paths = append(paths, more...)
	for i, p := range paths {
		if i >= 12 {
			break
		}
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, name := range []string{".eh_frame", ".debug_frame"} {
			if s := ef.Section(name); s != nil {
				if d, err := s.Data(); err == nil {
					f.Add(d, name == ".eh_frame", ef.ByteOrder == binary.BigEndian)
					added++
				}
			}
		}
		ef.Close()
	}
}

// walk reads every row of every FDE; it must not panic, loop or allocate
// beyond the input's size.
func walkAll(fr *Frames) int {
	n := 0
	var it RowIterator
	for _, fde := range fr.FDEs {
		it.Reset(fr, fde)
		for {
			r, err := it.Next()
			if err != nil {
				if err != io.EOF && fr.Errors == nil {
					_ = err.Error()
				}
				break
			}
			if r.End < r.PC {
				panic("row ends before it starts")
			}
			n++
		}
		r := fr.FDEInstructions(fde)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
	return n
}

// FuzzRead reads arbitrary section bytes as .eh_frame or .debug_frame:
// no panic, offsets in range, the fast and slow evaluators agree, scanning
// the section in parts gives what Read gives (with 8- and 4-byte
// addresses).
func FuzzRead(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, eh, big bool) {
		var order binary.ByteOrder = binary.LittleEndian
		if big {
			order = binary.BigEndian
		}
		src := DebugFrame
		if eh {
			src = EHFrame
		}
		fr, err := ReadSection(data, src, PointerContext{Order: order, AddrSize: 8, SectionAddr: 0x1000})
		if err != nil {
			t.Fatal(err)
		}
		// With 4-byte addresses, parts only (the rest is the same code).
		fr32, err := ReadSection(data, src, PointerContext{Order: order, AddrSize: 4, SectionAddr: 0x1000})
		if err != nil {
			t.Fatal(err)
		}
		if msg := compareScan(fr32, 2); msg != "" {
			t.Fatal("4-byte addresses: " + msg)
		}
		for _, e := range fr.Errors {
			if e.Offset > uint64(len(data)) {
				t.Fatalf("error offset %#x past the section (%d bytes)", e.Offset, len(data))
			}
		}
		for _, fde := range fr.FDEs {
			if fde.Offset >= uint64(len(data)) || fde.CIE == nil {
				t.Fatalf("bad FDE %+v", fde)
			}
		}
		walkAll(fr)
		if msg := compareFastSlow(fr); msg != "" {
			t.Fatal(msg)
		}
		for _, n := range []int{2, 5} {
			if msg := compareScan(fr, n); msg != "" {
				t.Fatal(msg)
			}
		}
		// Parts of decreasing sizes, as LowerScan cuts them.
		weights := []int{4, 4, 3, 3, 2, 2, 1, 1}
		cuts, fdes := fr.CutWeighted(weights)
		if msg := compareParts(fr, len(weights), cuts, fdes); msg != "" {
			t.Fatal("weighted: " + msg)
		}
	})
}

// FuzzRows runs arbitrary instruction bytes after a fixed CIE, in both
// byte orders, with 4- and 8-byte addresses.
func FuzzRows(f *testing.F) {
	f.Add([]byte{0x41, 0x0e, 16, 0x86, 2, 0x0a, 0x41, 0x0b}, []byte{0x0c, 7, 8, 0x90, 1}, false)
	f.Add([]byte{0x2d, 0x44, 0x0e, 0x20, 0x9d, 0x04, 0x9e, 0x03, 0x2d}, []byte{0x0c, 31, 0}, true)
	f.Add([]byte{0x0f, 2, 0x77, 8, 0x10, 6, 2, 0x76, 0, 0x16, 3, 1, 0x9c, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{}, false)
	f.Fuzz(func(t *testing.T, instrs, initial []byte, big bool) {
		var order binary.ByteOrder = binary.LittleEndian
		if big {
			order = binary.BigEndian
		}
		s := &secBuilder{order: order, eh: true}
		c := s.simpleCIE(1, -8, 16, PEUData8, initial)
		s.simpleFDE(c, 0x1000, 0x100, instrs)
		fr, err := ReadSection(s.b, EHFrame, PointerContext{Order: order, AddrSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		if len(fr.FDEs) != 1 {
			t.Fatalf("FDE not read: %v", fr.Errors)
		}
		walkAll(fr)
		if msg := compareFastSlow(fr); msg != "" {
			t.Fatal(msg)
		}
		// The same program through the instruction reader must end.
		r := NewInstructionReader(instrs, fr.CIEs[0], order, nil)
		for i := 0; ; i++ {
			if i > len(instrs) {
				t.Fatal("more instructions than bytes")
			}
			in, err := r.Next()
			if err != nil {
				break
			}
			if len(in.Raw) == 0 {
				t.Fatal("empty instruction")
			}
		}
	})
}

// TestFuzzSeedsExist keeps the committed corpus honest.
func TestFuzzSeedsExist(t *testing.T) {
	for _, name := range []string{"FuzzRead", "FuzzRows", "FuzzReadELF"} {
		m, _ := filepath.Glob(filepath.Join("testdata", "fuzz", name, "*"))
		if len(m) == 0 {
			t.Errorf("no committed seeds for %s", name)
		}
	}
}

// compareFastSlow checks that the rows of the fast path equal the rows of
// the general decoder for every FDE, and that both fail alike.
func compareFastSlow(fr *Frames) string {
	var fast, slow RowIterator
	slow.slow = true
	for _, fde := range fr.FDEs {
		fast.Reset(fr, fde)
		slow.Reset(fr, fde)
		for {
			a, errA := fast.Next()
			b, errB := slow.Next()
			if (errA == nil) != (errB == nil) || (errA == io.EOF) != (errB == io.EOF) {
				return fmt.Sprintf("FDE %#x: fast path error %v, general %v", fde.Offset, errA, errB)
			}
			if errA != nil {
				break
			}
			if sa, sb := rowString(a), rowString(b); sa != sb {
				return fmt.Sprintf("FDE %#x: fast path row %s, general %s", fde.Offset, sa, sb)
			}
		}
	}
	return ""
}

// FuzzReadELF reads the CFI of arbitrary ELF files (section choice,
// compressed sections, the relocations of relocatable objects) and checks
// what Read promises: every entry, error and instruction slice lies in
// the section read, in section order; rows start at their FDE's start and
// follow each other without gap, none empty but that of an FDE covering
// nothing; a row error names its FDE; the fast path
// gives the general interpreter's rows; Auto reads what the source it
// chose reads; reading again, reading through OpenMapped and scanning in
// parts give the same.
func FuzzReadELF(f *testing.F) {
	for _, p := range []string{"../testdata/gas/x86_64/basic.o", "../testdata/gas/s390x/basic.o", "../testdata/gas/aarch64/basic.o",
		"../testdata/gas/s390x/debugframe.o", "../testdata/link/x86_64/pie.exe"} {
		d, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := openELF(data)
		if err != nil {
			return
		}
		for _, src := range []Source{Auto, EHFrame, DebugFrame} {
			fr, err := Read(ef, src)
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("%v: empty error", src)
				}
				continue
			}
			if msg := checkReadELF(ef, data, src, fr); msg != "" {
				t.Fatalf("%v: %s", src, msg)
			}
		}
	})
}

// checkReadELF checks fr, Read(ef, src)'s result, as FuzzReadELF says.
func checkReadELF(ef *elf.File, file []byte, src Source, fr *Frames) string {
	if msg := checkEntries(ef, fr); msg != "" {
		return msg
	}
	dump, msg := dumpFrames(fr)
	if msg != "" {
		return msg
	}
	if src == Auto {
		if fr.Source != EHFrame && fr.Source != DebugFrame {
			return fmt.Sprintf("Auto read source %v", fr.Source)
		}
		if msg := sameRead(ef, fr.Source, dump, "Read of the source Auto chose"); msg != "" {
			return msg
		}
	} else if fr.Source != src {
		return fmt.Sprintf("Read(%v) read %v", src, fr.Source)
	}
	if msg := sameRead(ef, src, dump, "second Read"); msg != "" {
		return msg
	}
	mapped, err := OpenMapped(ef, src, file)
	if err != nil && len(fr.Data) == 0 {
		// OpenMapped checks an empty section's file offset, Read does
		// not need to.
		return compareFastSlow(fr)
	}
	if err != nil {
		return fmt.Sprintf("OpenMapped: %v, Read succeeded", err)
	}
	mapped.readAll()
	if got, _ := dumpFrames(mapped); got != dump {
		return fmt.Sprintf("OpenMapped then read:\n%s\nRead:\n%s", got, dump)
	}
	if msg := compareFastSlow(fr); msg != "" {
		return msg
	}
	return compareScan(fr, 3)
}

// sameRead reads ef's src again and compares it with dump.
func sameRead(ef *elf.File, src Source, dump, what string) string {
	again, err := Read(ef, src)
	if err != nil {
		return fmt.Sprintf("%s: %v", what, err)
	}
	if got, _ := dumpFrames(again); got != dump {
		return fmt.Sprintf("%s:\n%s\nfirst:\n%s", what, got, dump)
	}
	return ""
}

// checkEntries checks that fr's entries, errors and instruction slices lie
// in its section, in section order, and that only a relocatable object's
// FDEs name a code section.
func checkEntries(ef *elf.File, fr *Frames) string {
	size := uint64(len(fr.Data))
	inData := func(what string, off uint64, b []byte) string {
		if off > size || uint64(len(b)) > size-off || !bytes.Equal(fr.Data[off:off+uint64(len(b))], b) {
			return fmt.Sprintf("%s at %#x (%d bytes) is not the section's bytes there (%d bytes)", what, off, len(b), size)
		}
		return ""
	}
	for _, c := range fr.CIEs {
		if msg := inData(fmt.Sprintf("CIE %#x: initial instructions", c.Offset), c.InitialOffset, c.Initial); msg != "" {
			return msg
		}
	}
	var last uint64
	for i, fde := range fr.FDEs {
		if fde.CIE == nil || fde.Offset >= size || i > 0 && fde.Offset <= last {
			return fmt.Sprintf("FDE %d at %#x after %#x (section %d bytes), CIE %v", i, fde.Offset, last, size, fde.CIE)
		}
		last = fde.Offset
		if msg := inData(fmt.Sprintf("FDE %#x: instructions", fde.Offset), fde.InstructionsOffset, fde.Instructions); msg != "" {
			return msg
		}
		// (A relocatable object's relocation may name any section index:
		// users check it, as lower's PLT reading does.)
		if !fr.Relocatable && fde.Section != 0 {
			return fmt.Sprintf("FDE %#x: code section %d in a linked file", fde.Offset, fde.Section)
		}
	}
	if fr.Relocatable != (ef.Type == elf.ET_REL) {
		return fmt.Sprintf("Relocatable %v for a file of type %v", fr.Relocatable, ef.Type)
	}
	for i, e := range fr.Errors {
		if e.Offset >= size || e.Section != fr.Name || e.Err == nil || i > 0 && e.Offset <= fr.Errors[i-1].Offset {
			return fmt.Sprintf("error %d (%v) at %#x in %q: not a place in %s (%d bytes) after the previous error", i, e.Err, e.Offset, e.Section, fr.Name, size)
		}
	}
	return ""
}

// dumpFrames formats everything Read found in fr, every row of every FDE
// included, checking each FDE's rows as it goes: the first starts at the
// FDE's start, each starts where the one before ended, none ends before
// it starts, only the row of an FDE covering nothing is empty, and an
// error is an *EntryError naming the FDE.
func dumpFrames(fr *Frames) (string, string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s %#x rel %v, %d bytes\n", fr.Source, fr.Name, fr.Address, fr.Relocatable, len(fr.Data))
	for _, c := range fr.CIEs {
		fmt.Fprintf(&b, "CIE %+v\n", *c)
	}
	for _, e := range fr.Errors {
		fmt.Fprintf(&b, "error %v\n", e)
	}
	var it RowIterator
	for _, fde := range fr.FDEs {
		fmt.Fprintf(&b, "FDE %#x CIE %#x [%#x+%#x) section %d LSDA %#x %x\n", fde.Offset, fde.CIE.Offset, fde.Start, fde.Size, fde.Section, fde.LSDA, fde.Instructions)
		it.Reset(fr, fde)
		pc := fde.Start
		for {
			r, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var ee *EntryError
				if !errors.As(err, &ee) || ee.Offset != fde.Offset || ee.Section != fr.Name {
					return "", fmt.Sprintf("FDE %#x: row error %v does not name the FDE", fde.Offset, err)
				}
				fmt.Fprintf(&b, "  error %v\n", err)
				break
			}
			if r.PC != pc || r.End < r.PC {
				return "", fmt.Sprintf("FDE %#x: row %#x-%#x after one ending at %#x", fde.Offset, r.PC, r.End, pc)
			}
			// An empty row is the only row of an FDE covering nothing.
			if r.End == r.PC && (r.PC != fde.Start || fde.End() > fde.Start) {
				return "", fmt.Sprintf("FDE %#x [%#x+%#x): empty row at %#x", fde.Offset, fde.Start, fde.Size, r.PC)
			}
			pc = r.End
			fmt.Fprintf(&b, "  %s\n", rowString(r))
		}
	}
	return b.String(), ""
}

// openELF parses data with debug/elf, treating its panics as errors: they
// are debug/elf's, not ours.
func openELF(data []byte) (f *elf.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("debug/elf: %v", r)
		}
	}()
	return elf.NewFile(bytes.NewReader(data))
}
