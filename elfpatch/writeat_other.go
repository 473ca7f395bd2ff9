//go:build !linux

package elfpatch

import "os"

// writeAllAt writes pieces one after the other into f from offset off,
// one WriteAt each (pwritev is used on Linux).
func writeAllAt(f *os.File, pieces [][]byte, off int64) error {
	for _, b := range pieces {
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}
