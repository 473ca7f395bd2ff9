package lower

import (
	"bytes"
	"reflect"
	"testing"
)

// TestWorkers checks that lowering in parallel chunks gives the result of
// the serial path (encoded bytes, relocations, skipped functions and their
// order), packed or not, in both modes, for every linked file and object
// under testdata and, when present, a big system library.
func TestWorkers(t *testing.T) {
	files := testdataELFs(t)
	big := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1"}
	if testing.Short() {
		big = big[:1]
	}
	n := 0
	for _, name := range append(files, big...) {
		workers := []int{2, 3, 7}
		packs := []bool{false, true}
		if len(big) > 1 && name == big[1] {
			workers, packs = []int{2}, []bool{true} // big: as the CLI lowers it
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
			for _, pack := range packs {
				opt := Options{GasCompat: gas, Pack: pack}
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
