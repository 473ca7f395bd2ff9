// A Go program for the integration fixture: its only call-frame
// information is .debug_frame, which -ldflags=-s (or strip) removes.
package main

import (
	"fmt"
	"runtime"
)

//go:noinline
func depth(n int) int {
	if n == 0 {
		pc := make([]uintptr, 64)
		return runtime.Callers(0, pc)
	}
	return depth(n-1) + 0
}

func main() { fmt.Println("frames:", depth(8)) }
