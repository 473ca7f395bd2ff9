//go:build !linux || !amd64

package target

import "errors"

// Attach is only implemented for x86-64 Linux hosts.
func Attach(pid int, opts Options) (*Process, error) {
	return nil, errors.New("stack --pid: only implemented on x86-64 Linux")
}
