package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// openStream opens where --report's lines or --raw's section go
// (replace.OpenStream), its errors said as messages say them.
func openStream(c *cli, path string, perm os.FileMode) (*replace.Stream, error) {
	s, err := replace.OpenStream(path, perm, c.stdout, c.stderr)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path != path {
		return nil, fmt.Errorf("cannot write in %s: %w", displayName(pe.Path), pe.Err)
	}
	if err != nil {
		return nil, replace.UnwrapPath(err)
	}
	return s, nil
}
