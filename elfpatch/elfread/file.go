package elfread

import (
	"debug/elf"
	"fmt"

	"github.com/sframe-gen/sframe-gen/cfi"
)

// ObjectsAt is [Meter.Objects] of the file at path, opened with
// OpenRegular (a FIFO is not waited for, anything but a regular file is
// refused) and closed when it returns. The error of opening it leaves out
// the path.
func (m *Meter) ObjectsAt(path string, fn func(Object) bool) (found bool, err error) {
	file, st, err := OpenRegular(path)
	if err != nil {
		return false, err
	}
	defer file.Close()
	return m.Objects(file, st.Size(), fn)
}

// Name names o, an object of the file path: path itself, or
// "ARCHIVE(MEMBER)" for a member of the archive path.
func (o *Object) Name(path string) string {
	if o.Member == "" {
		return path
	}
	return fmt.Sprintf("%s(%s)", path, o.Member)
}

// ChargeNotes charges reading a core's notes of size bytes: the bytes
// and what is read from them (package target's Meter).
func (m *Meter) ChargeNotes(size int64) error {
	return m.Charge(Cost{Bytes: 2 * size, What: fmt.Sprintf("notes of %s", FormatSize(size))})
}

// ChargeVerify charges what checking the .sframe section of f (a file of
// size bytes) against its CFI read from src takes, as package verify's
// File checks it: the section read and decoded (ChargeSFrame), the CFI
// read and evaluated (ChargeCFI), the symbol table that names the
// report's functions (ChargeNames).
func (m *Meter) ChargeVerify(f *elf.File, size int64, src cfi.Source) error {
	if err := m.ChargeSFrame(f, size); err != nil {
		return err
	}
	if err := m.ChargeCFI(f, src); err != nil {
		return err
	}
	return m.ChargeNames(f, size)
}
