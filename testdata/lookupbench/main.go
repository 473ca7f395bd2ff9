// Command lookupbench makes the PCs testdata/bench-lookup.sh looks up, and
// times emit.Reader.Lookup on them, as testdata/libsframe/sframe-bench.c
// times GNU libsframe on the same section and PCs.
//
//	lookupbench pcs SECTION-FILE PCS-FILE N     write N PCs (and every FRE start)
//	lookupbench time SECTION-FILE PCS-FILE PASSES
//
// The section is read as loaded at address 0, so its PCs are offsets from
// its start, what libsframe's sframe_find_fre takes. The PCs are every
// FRE's first address plus N pseudo-random addresses inside random
// functions (a fixed seed), shuffled: the order a sampling profiler's
// PCs come in. PLT stubs and flex FDEs are left out (skipped). "time" prints the same line as sframe-bench:
//
//	ns_per_lookup N found F checksum C
//
// where N is the best pass's CPU time per Lookup (the process's, as
// sframe-bench measures it: a loaded machine's other work is not counted;
// the median over four copies of the loop, timeLookups), F the PCs found in a pass
// and C the sum of their CFA offsets.
package main

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sframe-gen/sframe-gen/emit"
)

func main() {
	if len(os.Args) != 5 || (os.Args[1] != "pcs" && os.Args[1] != "time") {
		fmt.Fprintln(os.Stderr, "usage: lookupbench pcs|time SECTION-FILE PCS-FILE N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[4])
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "lookupbench: bad count %q\n", os.Args[4])
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[2])
	if err != nil {
		fail(err)
	}
	r, err := emit.NewReader(data, 0)
	if err != nil {
		fail(fmt.Errorf("%s: %w", os.Args[2], err))
	}
	if os.Args[1] == "pcs" {
		err = writePCs(r, os.Args[3], n)
	} else {
		err = timeLookups(r, os.Args[3], n)
	}
	fail(err)
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "lookupbench:", err)
		os.Exit(1)
	}
}

// writePCs writes every FRE's start and n random PCs inside functions,
// shuffled, as little-endian int64s.
func writePCs(r *emit.Reader, path string, n int) error {
	rng := rand.New(rand.NewSource(1))
	var pcs []uint64
	for i := 0; i < r.NumFuncs(); i++ {
		f := r.Func(i)
		if skipped(f.FDE) {
			continue
		}
		for _, e := range f.FDE.FREs {
			pcs = append(pcs, f.Start+uint64(e.StartAddr))
		}
	}
	for n > 0 {
		f := r.Func(rng.Intn(r.NumFuncs()))
		if skipped(f.FDE) || f.FDE.Size == 0 {
			continue
		}
		pcs = append(pcs, f.Start+uint64(rng.Intn(int(f.FDE.Size))))
		n--
	}
	rng.Shuffle(len(pcs), func(i, j int) { pcs[i], pcs[j] = pcs[j], pcs[i] })
	out := make([]byte, 8*len(pcs))
	for i, pc := range pcs {
		binary.LittleEndian.PutUint64(out[8*i:], pc)
	}
	return os.WriteFile(path, out, 0o644)
}

// skipped says whether f's PCs are left out: PLT stubs, where libsframe
// and the specification differ, and flex FDEs, whose FREs libsframe reads
// with the FDE type its caller must find first (sframe-bench reads every
// FRE as a default FDE's).
func skipped(f *emit.FDE) bool {
	return f.PCType() == emit.PCMask || f.Type() != emit.FDEDefault
}

// timeLookups looks every PC up, passes times with each of the loops
// below, and prints the median over the loops of each one's best pass.
// The loops are the same code at four addresses: where the linker puts
// the loop that calls Lookup moves its time (on F, the same reader timed
// 71 ns a lookup in one build of this command and 91 in another, whose
// main differed), and a median over several places measures the reader
// rather than one place.
func timeLookups(r *emit.Reader, path string, passes int) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	pcs := make([]uint64, len(raw)/8)
	for i := range pcs {
		pcs[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	loops := []func(*emit.Reader, []uint64) (found, checksum int64){
		lookupLoop[[1]byte], lookupLoop[[2]byte], lookupLoop[[3]byte], lookupLoop[[4]byte],
	}
	bests := make([]time.Duration, len(loops))
	var found, checksum int64
	for p := 0; p < passes; p++ {
		for i, loop := range loops {
			t0 := cpuTime()
			f, sum := loop(r, pcs)
			d := cpuTime() - t0
			if p == 0 || d < bests[i] {
				bests[i] = d
			}
			if (p > 0 || i > 0) && (f != found || sum != checksum) {
				return fmt.Errorf("two passes disagree: found %d, checksum %d against %d, %d", f, sum, found, checksum)
			}
			found, checksum = f, sum
		}
	}
	slices.Sort(bests)
	median := (bests[(len(bests)-1)/2] + bests[len(bests)/2]) / 2
	fmt.Printf("ns_per_lookup %.1f found %d checksum %d\n", float64(median.Nanoseconds())/float64(len(pcs)), found, checksum)
	return nil
}

// lookupLoop looks every PC up as an unwinder does and returns how many
// were found and the sum of their CFA offsets. Each instance (its type
// parameter unused) is a copy of the loop at an address of its own.
//
//go:noinline
func lookupLoop[_ any](r *emit.Reader, pcs []uint64) (found, checksum int64) {
	for _, pc := range pcs {
		if l, ok := r.Lookup(pc); ok {
			found++
			checksum += l.CFA.Offset
		}
	}
	return found, checksum
}

// cpuTime returns the CPU time the process has used (CLOCK_PROCESS_CPUTIME_ID).
func cpuTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		fail(fmt.Errorf("clock_gettime: %w", err))
	}
	return time.Duration(ts.Nano())
}
