//go:build !unix

package elfread

import (
	"fmt"
	"io/fs"
	"os"
)

// OpenRegular opens the regular file at path for reading, refusing
// anything else.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("not a regular file (%s)", FileKind(st.Mode()))
	}
	return f, st, nil
}
