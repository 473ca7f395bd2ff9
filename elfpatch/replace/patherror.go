package replace

import (
	"errors"
	"io/fs"
)

// UnwrapPath returns the error inside err's *fs.PathError, or err when it
// has none: for messages that name the file already.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
