//go:build !linux || !amd64

package main

import (
	"errors"

	sframegen "github.com/sframe-gen/sframe-gen"
)

// stackOfPID is only implemented for x86-64 Linux hosts.
func stackOfPID(pid int, sysroot string, meter *sframegen.Meter) (*stackResult, error) {
	return nil, errors.New("stack --pid: only implemented on x86-64 Linux")
}
