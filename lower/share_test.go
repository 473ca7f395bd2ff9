package lower

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestShareFREsOption lowers every file under testdata, libc and
// libstdc++ with Options.ShareFREs by LowerFile and LowerScan, packed or
// not, serially and on 3 workers, and checks that every way gives the
// same bytes, starts and relocations, that the section decodes to the
// functions and FREs of the one lowered without sharing (the PLT FDEs of
// linked files included), that each repeated block is kept once, and
// that Result.Shared counts the functions pointing at an earlier copy.
func TestShareFREsOption(t *testing.T) {
	libc, libstdcxx := hostLibs(t)
	files := append(testdataELFs(t), libc, libstdcxx)
	sharedFiles := 0
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
			t.Fatalf("%s: %v", name, err)
		}
		want, err := emit.Decode(plainEnc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ref []byte
		var refRes *Result
		for _, scan := range []bool{false, true} {
			{
				for _, workers := range []int{1, 3} {
					opt := Options{Workers: workers, ShareFREs: true}
					what := fmt.Sprintf("%s (scan %v, %d workers)", name, scan, workers)
					res := lowerPlaced(t, what, f, frames, tg, opt, scan)
					enc, err := res.Section.Encode()
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if ref == nil {
						ref, refRes = enc, res
						got, err := emit.Decode(enc)
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						checkShared(t, what, enc, plainEnc, got, want, res.Shared)
						if res.Shared > 0 {
							sharedFiles++
						}
						if !slices.Equal(res.Relocs, plain.Relocs) || !slices.Equal(res.Starts, plain.Starts) {
							t.Errorf("%s: relocations or starts differ from the unshared section's", what)
						}
						continue
					}
					if !bytes.Equal(enc, ref) || !slices.Equal(res.Starts, refRes.Starts) || !slices.Equal(res.Relocs, refRes.Relocs) || res.Shared != refRes.Shared {
						t.Errorf("%s: differs from LowerFile's serial result", what)
					}
				}
			}
		}
		f.Close()
	}
	if sharedFiles < 10 {
		t.Errorf("only %d files had FRE data to share", sharedFiles)
	}
}

// checkShared checks a shared section (enc, decoded: got) against the
// unshared one (plainEnc, decoded: want).
func checkShared(t *testing.T, what string, enc, plainEnc []byte, got, want *emit.Section, shared int) {
	t.Helper()
	gf, errG := got.Functions()
	wf, errW := want.Functions()
	if errG != nil || errW != nil {
		t.Fatalf("%s: %v, unshared: %v", what, errG, errW)
	}
	if len(gf) != len(wf) {
		t.Fatalf("%s: %d FDEs, %d unshared", what, len(gf), len(wf))
	}
	bo := got.Header.ABI.ByteOrder()
	freStart := func(b []byte) int { return emit.HeaderSize + int(bo.Uint32(b[24:])) }
	// The unshared section's blocks: each from its offset to the next.
	offs := make([]int, 0, len(wf)+1)
	for i := range wf {
		offs = append(offs, int(wf[i].FREOffset))
	}
	offs = append(offs, int(bo.Uint32(plainEnc[16:])))
	slices.Sort(offs)
	block := func(i int) []byte {
		off := int(wf[i].FREOffset)
		k, _ := slices.BinarySearch(offs, off+1)
		return plainEnc[freStart(plainEnc)+off : freStart(plainEnc)+offs[k]]
	}
	first := map[string]uint32{}
	repeated, saved := 0, 0
	for i := range wf {
		g, w := gf[i], wf[i]
		g.FREOffset, w.FREOffset = 0, 0
		if g.StartOffset != w.StartOffset || g.Size != w.Size || g.Info != w.Info || g.Info2 != w.Info2 || g.RepSize != w.RepSize ||
			fmt.Sprint(g.FREs) != fmt.Sprint(w.FREs) {
			t.Fatalf("%s: FDE %d differs from the unshared section's", what, i)
		}
		b := block(i)
		if off, ok := first[string(b)]; ok {
			repeated++
			saved += len(b)
			if gf[i].FREOffset != off {
				t.Errorf("%s: FDE %d repeats the block at %#x but points at %#x", what, i, off, gf[i].FREOffset)
			}
			continue
		}
		first[string(b)] = gf[i].FREOffset
		if !bytes.Equal(enc[freStart(enc)+int(gf[i].FREOffset):][:len(b)], b) {
			t.Errorf("%s: FDE %d points at other bytes", what, i)
		}
	}
	if repeated != shared || len(enc)-len(got.Trailer) != len(plainEnc)-len(want.Trailer)-saved || bo.Uint32(enc[12:]) != bo.Uint32(plainEnc[12:]) {
		t.Errorf("%s: %d FDEs repeat a block (%d bytes), Shared %d; %d bytes, %d unshared; %d FREs counted, %d unshared",
			what, repeated, saved, shared, len(enc), len(plainEnc), bo.Uint32(enc[12:]), bo.Uint32(plainEnc[12:]))
	}
}
