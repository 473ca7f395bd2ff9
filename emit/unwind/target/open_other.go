//go:build !unix

package target

import (
	"fmt"
	"io/fs"
	"os"
)

// openRegular opens the regular file at path for reading, refusing
// anything else.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
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
		return nil, nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	return f, st, nil
}
