// Command lowertree makes the SFrame section of every regular file under
// DIR as the batch form makes it (sframegen.Generator.Generate: the CFI
// read, lowered, placed and encoded) on one CPU, and writes nothing: the
// CPU time the sections alone take, whatever writes them.
// testdata/bench-tree.sh prints it beside cp -a's wall time: on JOBS
// CPUs, --output-dir cannot take less than cp -a's CPU and this one's
// shared between them (docs/performance.md, "A tree").
//
//	lowertree [-n RUNS] DIR
//
// It prints the median of RUNS passes (default 3): the CPU seconds (user
// and system), the files with a section and the bytes of the sections.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	sframegen "github.com/sframe-gen/sframe-gen"
	"golang.org/x/sys/unix"
)

func main() {
	runs := flag.Int("n", 3, "passes over the tree (the median is printed)")
	flag.Parse()
	if flag.NArg() != 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: lowertree [-n RUNS] DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *runs); err != nil {
		fmt.Fprintln(os.Stderr, "lowertree:", err)
		os.Exit(1)
	}
}

func run(dir string, runs int) error {
	// One CPU: a big file's CFI is then lowered on one goroutine, as
	// when the batch's workers have a file each.
	runtime.GOMAXPROCS(1)
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	g, err := sframegen.NewGenerator(sframegen.Options{}, sframegen.Resources{})
	if err != nil {
		return err
	}
	var cpus []time.Duration
	made, bytes := 0, 0
	for range runs {
		made, bytes = 0, 0
		start := cpuTime()
		for _, path := range files {
			n, err := generate(g, path)
			if err == nil {
				made++
				bytes += n
			}
		}
		cpus = append(cpus, cpuTime()-start)
	}
	slices.Sort(cpus)
	fmt.Printf("%.3f s CPU: %d of %d files with a section, %d bytes of sections\n",
		cpus[len(cpus)/2].Seconds(), made, len(files), bytes)
	return nil
}

// generate makes the section of the file at path and returns its size.
func generate(g *sframegen.Generator, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	sec, err := g.Generate(f, st.Size())
	if err != nil {
		return 0, err
	}
	return sec.Size(), nil
}

// cpuTime is the CPU time (user and system) the process has taken.
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
