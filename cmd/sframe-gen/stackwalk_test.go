package main

import (
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
)

// The stack tests read walks in the form stack --json prints
// (target.Report) under the names they had in this package.
type (
	stackResult = target.Report
	threadStack = target.ThreadReport
)

// stackOfCore walks the threads of the core file at path, what it reads
// charged to meter (nil: no limit).
func stackOfCore(path, sysroot string, meter *elfread.Meter) (*target.Report, error) {
	return stackOf(0, path, sysroot, meter)
}

// stackOfPID walks the threads of the running process pid, each stopped
// meanwhile.
func stackOfPID(pid int, sysroot string, meter *elfread.Meter) (*target.Report, error) {
	return stackOf(pid, "", sysroot, meter)
}
