package emit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// randomSection makes a section objdump can dump: any version 2 or 3
// layout, flags, fixed offsets, FDE and FRE types, data-word counts and
// sizes, with the constraints libsframe asserts on (FRE start within the
// function, flex FREs with 0 or at least 2 words).
func randomSection(r *rand.Rand, abi ABI) *Section {
	s, fdes := randomDraft(r, abi)
	return buildDraft(s, fdes)
}

// buildDraft returns the section of draft's header and trailer with the
// functions fdes (NewSection), panicking on an error: a test's own data.
func buildDraft(draft *Section, fdes []FDE) *Section {
	s, err := NewSection(draft.Header, fdes)
	if err != nil {
		panic(err)
	}
	s.Trailer = draft.Trailer
	return s
}

// randomDraft is randomSection before it is built: its header and
// trailer in a section without functions, and its functions.
func randomDraft(r *rand.Rand, abi ABI) (*Section, []FDE) {
	s := &Section{Header: Header{Version: Version3, ABI: abi}}
	var fdes []FDE
	h := &s.Header
	if r.IntN(4) == 0 {
		h.Version = Version2
	}
	h.Flags = Flags(r.IntN(8))
	if h.Version == Version3 {
		h.Flags &^= FlagFramePointer
	}
	if r.IntN(3) == 0 {
		h.CFAFixedFPOffset = int8(r.IntN(256))
	}
	if r.IntN(2) == 0 {
		h.CFAFixedRAOffset = int8(r.IntN(256))
	}
	nfde := r.IntN(5)
	for i := 0; i < nfde; i++ {
		ft := FREType(r.IntN(3))
		f := FDE{
			StartOffset: int64(int32(r.Uint32())),
			Info:        FuncInfo(PCType(r.IntN(2)), ft, r.IntN(2) == 0, r.IntN(3) == 0) | uint8(r.IntN(2))<<6,
			RepSize:     uint8(r.IntN(256)),
			FREOffset:   uint32(r.IntN(4)),
		}
		if h.Version == Version3 && r.IntN(2) == 0 {
			f.Info2 = uint8(FDEFlex)
		}
		f.Size = uint32(r.Int64N(int64(ft.Limit())))
		nfre := r.IntN(5)
		start := uint32(0)
		for j := 0; j < nfre && start <= f.Size; j++ {
			size := DataWordSize(r.IntN(3))
			count := r.IntN(MaxDataWords + 1)
			if f.Type() == FDEFlex && count == 1 {
				count = 2
			}
			e := FRE{StartAddr: start, Info: FREInfo(r.IntN(2) == 0, count, size, r.IntN(3) == 0)}
			for k := 0; k < count; k++ {
				var w int32
				switch r.IntN(4) {
				case 0:
					w = 0
				case 1:
					w = int32(FlexControlWord(uint32(r.IntN(40)), r.IntN(2) == 0, r.IntN(2) == 0))
				default:
					w = int32(r.Uint32())
				}
				e.Words = append(e.Words, SignExtend(uint32(w), size))
			}
			f.FREs = append(f.FREs, e)
			start += uint32(r.IntN(20))
		}
		fdes = append(fdes, f)
	}
	if r.IntN(4) == 0 {
		s.Trailer = make([]byte, r.IntN(8))
	}
	if abi.ByteOrder() == binary.LittleEndian && r.IntN(8) == 0 {
		// libsframe refuses an auxiliary header only when it must swap
		// the section's byte order.
		s.Header.AuxHeader = make([]byte, 1+r.IntN(12))
	}
	return s, fdes
}

var fileHeader = regexp.MustCompile(`\n([^\n]*):     file format [^\n]*\n\n`)

// TestDumpMatchesObjdump compares Dump with objdump --sframe on random
// sections of every ABI and both versions, placed in a relocatable object
// (no relocations: the stored start offsets are dumped as they are).
func TestDumpMatchesObjdump(t *testing.T) {
	arches := []struct {
		arch string
		abis []ABI
	}{
		{"x86_64", []ABI{ABIAMD64LittleEndian}},
		{"aarch64", []ABI{ABIAArch64LittleEndian, ABIAArch64BigEndian}},
		{"s390x", []ABI{ABIS390XBigEndian}},
	}
	n := 60
	if testing.Short() {
		n = 20
	}
	for _, a := range arches {
		t.Run(a.arch, func(t *testing.T) {
			as := sysfiles.GNURef.Tool(t, a.arch, "as")
			objcopy := sysfiles.GNURef.Tool(t, a.arch, "objcopy")
			objdump := sysfiles.GNURef.Tool(t, a.arch, "objdump")
			dir := t.TempDir()
			carrier := filepath.Join(dir, "carrier.o")
			run(t, exec.Command(as, "-o", carrier, "/dev/null"))
			r := rand.New(rand.NewPCG(uint64(len(a.arch)), 7))
			var objs []string
			secs := map[string]*Section{}
			// add puts sec in an object of its own; the dump is compared
			// with what Decode reads back, as objdump reads the bytes.
			add := func(sec *Section) {
				b, err := sec.Encode()
				if err != nil {
					t.Fatalf("Encode: %v", err)
				}
				i := len(objs)
				bin := filepath.Join(dir, fmt.Sprintf("s%d.bin", i))
				obj := fmt.Sprintf("s%d.o", i)
				if err := os.WriteFile(bin, b, 0o644); err != nil {
					t.Fatal(err)
				}
				run(t, exec.Command(objcopy, "--add-section", ".sframe="+bin, carrier, filepath.Join(dir, obj)))
				if secs[obj], err = Decode(b); err != nil {
					t.Fatalf("Decode(Encode): %v", err)
				}
				objs = append(objs, obj)
			}
			for i := 0; i < n; i++ {
				draft, fdes := randomDraft(r, a.abis[i%len(a.abis)])
				share := draft.Header.ABI.ByteOrder() == binary.LittleEndian && i%2 == 1
				if share {
					repeatFDEs(r, fdes)
				}
				s := buildDraft(draft, fdes)
				if share {
					// Shared FRE data (ShareFREs), which libsframe
					// reads in the host's byte order only.
					if _, err := s.ShareFREs(); err != nil {
						t.Fatalf("ShareFREs: %v", err)
					}
				}
				add(s)
			}
			// Golden sections converted to version 2 (those without flex
			// FDEs): the v2 encoder and the v2 dump on real data.
			nv2 := 0
			for _, g := range goldenFiles(t) {
				_, rel, _, ok := sframeOf(t, g.elf)
				if !ok || len(rel) > maxFuzzSeed || nv2 >= n/4 {
					continue
				}
				sec, err := Decode(rel)
				if err != nil || !slices.Contains(a.abis, sec.Header.ABI) || setVersion2(sec) != nil {
					continue
				}
				add(sec)
				nv2++
			}
			compareObjdump(t, dir, objdump, objs, secs)
		})
	}
}

// TestDumpMatchesObjdumpOnMutants mutates a few bytes of small golden
// sections; every mutant Decode accepts must be accepted by objdump too and
// dump the same. (Decode may refuse more than libsframe: only what it
// accepts is compared.)
func TestDumpMatchesObjdumpOnMutants(t *testing.T) {
	toolArch := map[ABI]string{
		ABIAMD64LittleEndian: "x86_64", ABIAArch64LittleEndian: "aarch64",
		ABIAArch64BigEndian: "aarch64", ABIS390XBigEndian: "s390x",
	}
	seeds := map[string][][]byte{}
	for _, g := range goldenFiles(t) {
		_, rel, _, ok := sframeOf(t, g.elf)
		if !ok || len(rel) > 2000 {
			continue
		}
		if sec, err := Decode(rel); err == nil {
			a := toolArch[sec.Header.ABI]
			seeds[a] = append(seeds[a], rel)
		}
	}
	want := 80
	if testing.Short() {
		want = 20
	}
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			if len(seeds[arch]) == 0 {
				t.Fatalf("no golden section for %s", arch)
			}
			as := sysfiles.GNURef.Tool(t, arch, "as")
			objcopy := sysfiles.GNURef.Tool(t, arch, "objcopy")
			objdump := sysfiles.GNURef.Tool(t, arch, "objdump")
			dir := t.TempDir()
			carrier := filepath.Join(dir, "carrier.o")
			run(t, exec.Command(as, "-o", carrier, "/dev/null"))
			r := rand.New(rand.NewPCG(5, uint64(len(arch))))
			var objs []string
			secs := map[string]*Section{}
			for try := 0; try < 50*want && len(objs) < want; try++ {
				b := bytes.Clone(seeds[arch][r.IntN(len(seeds[arch]))])
				for k := r.IntN(3); k >= 0; k-- {
					b[r.IntN(len(b))] = byte(r.Uint32())
				}
				sec, err := Decode(b)
				if err != nil {
					continue
				}
				obj := fmt.Sprintf("m%d.o", len(objs))
				bin := filepath.Join(dir, obj+".bin")
				if err := os.WriteFile(bin, b, 0o644); err != nil {
					t.Fatal(err)
				}
				run(t, exec.Command(objcopy, "--add-section", ".sframe="+bin, carrier, filepath.Join(dir, obj)))
				secs[obj] = sec
				objs = append(objs, obj)
			}
			compareObjdump(t, dir, objdump, objs, secs)
		})
	}
}

// compareObjdump runs objdump --sframe on objs (in dir) and compares each
// file's text with Dump of its section.
func compareObjdump(t *testing.T, dir, objdump string, objs []string, secs map[string]*Section) {
	t.Helper()
	cmd := exec.Command(objdump, append([]string{"--sframe"}, objs...)...)
	cmd.Dir = dir
	out := run(t, cmd)
	locs := fileHeader.FindAllSubmatchIndex(out, -1)
	if len(locs) != len(objs) {
		t.Fatalf("objdump printed %d files, want %d", len(locs), len(objs))
	}
	for i, loc := range locs {
		name := string(out[loc[2]:loc[3]])
		end := len(out)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		want := out[loc[1]:end]
		var got bytes.Buffer
		if err := Dump(&got, secs[name], 0, ".sframe"); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			b, _ := secs[name].Encode()
			t.Errorf("%s (section %x):\n%s", name, b, firstDiff(got.String(), string(want)))
		}
	}
}

func run(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
	}
	return out
}
