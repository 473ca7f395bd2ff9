// Command alternate times whole commands in turn, N rounds of each, and
// prints per command the minimum, median, mean, 90th percentile and
// maximum wall time and the median CPU time (user+system of the process,
// from its rusage): a comparison of commands run in the same minutes, for
// a machine whose speed moves from one minute to the next
// (docs/performance.md).
//
//	go run ./testdata/alternate N 'PRE::CMD ARGS...' 'CMD ARGS...' ...
//
// A command may start with PRE:: , a command run untimed before each run
// (to remove an output and sync, say). Arguments are split at spaces; no
// shell is involved. A command's standard output and error go to
// /dev/null (os/exec's default), as `CMD >/dev/null 2>&1` would send them,
// without a shell's start in the time.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: alternate N 'PRE::CMD ARGS...' ...")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "alternate: bad count %q\n", os.Args[1])
		os.Exit(2)
	}
	cmds := os.Args[2:]
	wall := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	for range n {
		for k, c := range cmds {
			if pre, rest, ok := strings.Cut(c, "::"); ok {
				if err := run(strings.Fields(pre)); err != nil {
					fmt.Fprintf(os.Stderr, "alternate: %s: %v\n", pre, err)
					os.Exit(1)
				}
				c = rest
			}
			args := strings.Fields(c)
			cmd := exec.Command(args[0], args[1:]...)
			t := time.Now()
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "alternate: %s: %v\n", c, err)
				os.Exit(1)
			}
			wall[k] = append(wall[k], float64(time.Since(t).Microseconds())/1000)
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu[k] = append(cpu[k], float64(ru.Utime.Nano()+ru.Stime.Nano())/1e6)
		}
	}
	for k, c := range cmds {
		w := wall[k]
		slices.Sort(w)
		slices.Sort(cpu[k])
		mean := 0.0
		for _, v := range w {
			mean += v
		}
		mean /= float64(n)
		fmt.Printf("%-60s wall min %6.1f med %6.1f mean %6.1f p90 %6.1f max %6.1f  cpu med %6.1f ms\n",
			c, w[0], w[n/2], mean, w[n*9/10], w[n-1], cpu[k][n/2])
	}
}

// run runs a command untimed.
func run(args []string) error {
	if len(args) == 0 {
		return nil
	}
	return exec.Command(args[0], args[1:]...).Run()
}
