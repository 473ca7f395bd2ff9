package lower

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestWorkers checks that lowering in parallel chunks gives the result of
// the serial path (encoded bytes, relocations, skipped functions and their
// order), packed or not, in both modes, for every linked file and object
// under testdata and, when present, a big system library.
func TestWorkers(t *testing.T) {
	files := testdataELFs(t)
	libc, _ := hostLibs(t)
	big := []string{libc}
	if llvm := sysfiles.BigLib(t); llvm != "" && !testing.Short() {
		big = append(big, llvm)
	}
	n := 0
	for _, name := range append(files, big...) {
		workers := []int{2, 3, 7}
		if len(big) > 1 && name == big[1] {
			workers = []int{2} // big: as the CLI lowers it
		}
		f, tg, frames, ok := openLowerable(name)
		if !ok {
			continue // a system file may be missing
		}
		lowerEncode := func(opt Options) (*Result, []byte) {
			res, _, err := LowerFile(f, frames, tg, opt)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, opt, err)
			}
			if !tg.Relocatable {
				res.Place(0x10000)
			}
			b, err := res.Section.Encode()
			if err != nil {
				t.Fatalf("%s %+v: %v", name, opt, err)
			}
			return res, b
		}
		for _, gas := range []bool{false, true} {
			{
				opt := Options{GasCompat: gas}
				want, wantBytes := lowerEncode(opt)
				for _, w := range workers {
					opt.Workers = w
					got, gotBytes := lowerEncode(opt)
					switch {
					case !bytes.Equal(gotBytes, wantBytes):
						t.Errorf("%s %+v: section differs from the serial one", name, opt)
					case !reflect.DeepEqual(got.Relocs, want.Relocs):
						t.Errorf("%s %+v: relocations differ from the serial ones", name, opt)
					case !reflect.DeepEqual(got.Skipped, want.Skipped):
						t.Errorf("%s %+v: skipped functions differ from the serial ones", name, opt)
					case !reflect.DeepEqual(got.Starts, want.Starts) || !reflect.DeepEqual(got.Sources, want.Sources):
						t.Errorf("%s %+v: starts or sources differ from the serial ones", name, opt)
					}
				}
			}
		}
		f.Close()
		n++
	}
	if n < 20 {
		t.Fatalf("only %d files could be lowered", n)
	}
}

// TestLowerParallelJoin checks lowerParallel's join on parts made up to
// test it: parts that finish in any order, that outgrow the FRE data
// buffer their estimate gave them (or the pool handed on), on 2 and 3
// workers. The joined lists must be those of the parts one after the
// other; a part that fails makes it report false.
func TestLowerParallelJoin(t *testing.T) {
	tg := Target{Arch: AMD64}
	const nparts = 9
	// Part k has k%4+1 functions of k%3*7+1 FREs with 4-byte words, and
	// an estimate of k%2*40 bytes: too small for most.
	appendFunc := func(sec *emit.Section, k, i int) error {
		var w emit.MinWriter
		if err := w.Begin(sec, &emit.FDE{Size: 0x100, Info: emit.FuncInfo(emit.PCInc, emit.FREAddr2, false, false)}); err != nil {
			return err
		}
		for j := range k%3*7 + 1 {
			w.Add(uint32(j), true, false, 2, int32(1<<20+k), int32(-1<<20*(i+1)), 0)
		}
		return w.End()
	}
	want := newResult(tg, Options{}, 100, 0, true)
	for k := range nparts {
		for i := range k%4 + 1 {
			if err := appendFunc(want.Section, k, i); err != nil {
				t.Fatal(err)
			}
			want.Starts = append(want.Starts, uint64(0x1000*k+i))
		}
	}
	for round := range 40 {
		for _, workers := range []int{2, 3} {
			failing := -1
			if round%10 == 9 {
				failing = round % nparts
			}
			res := newResult(tg, Options{}, 100, 160, true) // the sum of the estimates
			parts := make([]part, nparts)
			for k := range parts {
				parts[k] = part{fdes: k%4 + 1, packed: k % 2 * 40, run: func(p *Result) error {
					time.Sleep(time.Duration((k*7+round)%5) * 100 * time.Microsecond)
					if k == failing {
						return errors.New("failed")
					}
					for i := range k%4 + 1 {
						if err := appendFunc(p.Section, k, i); err != nil {
							return err
						}
						p.Starts = append(p.Starts, uint64(0x1000*k+i))
					}
					return nil
				}}
			}
			ok := lowerParallel(res, tg, parts, workers, nil)
			switch {
			case failing >= 0:
				if ok {
					t.Errorf("round %d, %d workers: part %d failed, lowerParallel reports true", round, workers, failing)
				}
			case !ok:
				t.Errorf("round %d, %d workers: lowerParallel failed", round, workers)
			case !bytes.Equal(res.Section.FREData, want.Section.FREData):
				t.Errorf("round %d, %d workers: the joined FRE data differs", round, workers)
			case !reflect.DeepEqual(res.Section.Index, want.Section.Index) || !reflect.DeepEqual(res.Starts, want.Starts):
				t.Errorf("round %d, %d workers: the joined FDEs or starts differ", round, workers)
			}
		}
	}
}

// TestAppendInPlace checks that appendInPlace gives append's list when
// src lies where dst ends, elsewhere in dst's array, in another array,
// or is empty, and when dst is full. (Whether it copied a list onto
// itself does not show in the result: the memmove samples of a --raw
// run do, docs/performance.md.)
func TestAppendInPlace(t *testing.T) {
	for _, c := range []struct {
		name  string
		lists func(arr []int) (dst, src []int)
		want  []int
	}{
		{"where dst ends", func(arr []int) ([]int, []int) { return arr[:3], arr[3:6] }, []int{1, 2, 3, 4, 5, 6}},
		{"past a gap", func(arr []int) ([]int, []int) { return arr[:2], arr[4:6] }, []int{1, 2, 5, 6}},
		{"another array", func(arr []int) ([]int, []int) { return arr[:2:2], []int{9, 10} }, []int{1, 2, 9, 10}},
		{"empty src", func(arr []int) ([]int, []int) { return arr[:2], arr[2:2] }, []int{1, 2}},
		{"full dst", func(arr []int) ([]int, []int) { return arr, []int{9, 10} }, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	} {
		dst, src := c.lists([]int{1, 2, 3, 4, 5, 6, 7, 8})
		got := appendInPlace(dst, src)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPartWeights checks the parts partWeights cuts sections of a few
// sizes into: rounds of shorter parts for a small one, parts of about
// partBytes for a big one.
func TestPartWeights(t *testing.T) {
	for _, tc := range []struct {
		workers, size int
		want          []int
	}{
		{1, 0, []int{4, 3, 2, 1}},
		{2, 100 << 10, []int{4, 4, 3, 3, 2, 2, 1, 1}},
		{2, 8 * partBytes, []int{4, 4, 3, 3, 2, 2, 1, 1}},
		{2, 8*partBytes + 1, []int{1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{3, 20 * partBytes, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{3, 12 * partBytes, []int{4, 4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1}},
	} {
		if got := partWeights(tc.workers, tc.size); !slices.Equal(got, tc.want) {
			t.Errorf("partWeights(%d, %d) = %v, want %v", tc.workers, tc.size, got, tc.want)
		}
	}
}

// TestFREPool checks that the pool hands back the buffers given to it,
// emptied, to a part they have room for, and makes a new one otherwise.
func TestFREPool(t *testing.T) {
	var fp frePool
	a := fp.take(100)
	if len(a) != 0 || cap(a) < 100 {
		t.Fatalf("take(100): len %d, cap %d", len(a), cap(a))
	}
	a = append(a, 1, 2, 3)
	fp.give(a)
	fp.give(nil) // no buffer: not kept
	if b := fp.take(cap(a) + 1); cap(b) <= cap(a) {
		t.Errorf("take(%d) returned a buffer of %d bytes", cap(a)+1, cap(b))
	}
	b := fp.take(50)
	if len(b) != 0 || cap(b) != cap(a) || &b[:1][0] != &a[0] {
		t.Errorf("take(50) did not return the buffer given back, emptied (len %d, cap %d)", len(b), cap(b))
	}
	if c := fp.take(50); cap(c) > 0 && &c[:1][0] == &a[0] {
		t.Error("the buffer given back once was taken twice")
	}
}
