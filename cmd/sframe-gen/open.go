package main

import (
	"errors"
	"os"
)

// unwrapPath drops the path of an *fs.PathError: messages name the file
// already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
