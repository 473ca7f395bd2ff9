package lower

import (
	"fmt"
	"os"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestNarrowFREsOption lowers every file under testdata, libc and
// libstdc++ with Options.NarrowFREs (with and without sharing) by
// LowerFile and LowerScan, serially and on 3 workers, and checks against
// the section lowered without it: the same functions, starts, sizes and
// FREs; each function lowered from CFI in the narrowest FRE type its
// FREs allow, the PLT FDEs in ld's; the unshared section smaller by
// exactly the start-address bytes that saves (but for s390x objects'
// padding); and every way the same
// bytes.
func TestNarrowFREsOption(t *testing.T) {
	libc, libstdcxx := hostLibs(t)
	files := append(testdataELFs(t), libc, libstdcxx)
	narrowed := 0
	for _, name := range files {
		f, tg, frames, ok := openLowerable(name)
		if !ok {
			if _, err := os.Stat(name); err != nil {
				t.Errorf("%v", err)
			}
			continue
		}
		plain := lowerPlaced(t, name, f, frames, tg, Options{}, false)
		plainEnc, err := plain.Section.Encode()
		if err != nil {
			t.Fatal(err)
		}
		want, err := emit.Decode(plainEnc)
		if err != nil {
			t.Fatal(err)
		}
		wf, err := want.Functions()
		if err != nil {
			t.Fatal(err)
		}
		refs := map[bool][]byte{}
		for _, share := range []bool{false, true} {
			for _, scan := range []bool{false, true} {
				for _, workers := range []int{1, 3} {
					opt := Options{Workers: workers, ShareFREs: share, NarrowFREs: true}
					what := fmt.Sprintf("%s (share %v, scan %v, %d workers)", name, share, scan, workers)
					res := lowerPlaced(t, what, f, frames, tg, opt, scan)
					enc, err := res.Section.Encode()
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if ref, ok := refs[share]; ok {
						if string(enc) != string(ref) {
							t.Errorf("%s: differs from LowerFile's serial result", what)
						}
						continue
					}
					refs[share] = enc
					got, err := emit.Decode(enc)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					gf, err := got.Functions()
					if err != nil || len(gf) != len(wf) {
						t.Fatalf("%s: %d FDEs (%v), %d without NarrowFREs", what, len(gf), err, len(wf))
					}
					saved := 0
					for i := range wf {
						g, w := gf[i], wf[i]
						wantType := w.FREType()
						if i < len(plain.Sources) && plain.Sources[i] != nil {
							last := uint32(0)
							if len(w.FREs) > 0 {
								last = w.FREs[len(w.FREs)-1].StartAddr
							}
							wantType = emit.NarrowestFREType(last)
						}
						if g.StartOffset != w.StartOffset || g.Size != w.Size || g.Info2 != w.Info2 || g.RepSize != w.RepSize ||
							g.Info&^0xf != w.Info&^0xf || g.FREType() != wantType || fmt.Sprint(g.FREs) != fmt.Sprint(w.FREs) {
							t.Fatalf("%s: FDE %d: %+v, without NarrowFREs %+v (FRE type %v wanted)", what, i, g, w, wantType)
						}
						saved += len(w.FREs) * (w.FREType().AddrSize() - wantType.AddrSize())
					}
					if !share && len(enc)-len(got.Trailer) != len(plainEnc)-len(want.Trailer)-saved { // (s390x objects are padded to 8)
						t.Errorf("%s: %d bytes, %d without NarrowFREs, %d saved by the FRE types", what, len(enc), len(plainEnc), saved)
					}
					if saved > 0 {
						narrowed++
					}
				}
			}
		}
		f.Close()
	}
	if narrowed < 4 {
		t.Errorf("only %d sections had FRE types to narrow", narrowed)
	}
}
