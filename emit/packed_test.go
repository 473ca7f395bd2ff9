package emit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPacked packs every section ld made under testdata/link (and the
// spec's example) function by function and checks that Encode and Size
// give the bytes of the unpacked section.
func TestPacked(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", "*.sframe"))
	if len(files) < 3 {
		t.Fatalf("found %d .sframe files under testdata/link", len(files))
	}
	raws := [][]byte{example61(t)}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	for n, raw := range raws {
		sec, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		// Append in FRE data order, then put the index back in order.
		byData := make([]int, len(sec.FDEs))
		for i := range byData {
			byData[i] = i
		}
		slices.SortStableFunc(byData, func(a, b int) int { return cmpU32(sec.FDEs[a].FREOffset, sec.FDEs[b].FREOffset) })
		p := &Section{Header: sec.Header, Trailer: sec.Trailer}
		for _, i := range byData {
			if err := p.AppendPacked(sec.FDEs[i]); err != nil {
				t.Fatal(err)
			}
		}
		fdes := make([]FDE, len(p.FDEs))
		for k, i := range byData {
			fdes[i] = p.FDEs[k]
		}
		p.FDEs = fdes
		got, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("section %d: packed encoding differs from the unpacked one", n)
		}
		if size, err := p.Size(); err != nil || size != len(want) {
			t.Errorf("section %d: packed Size() = %d, %v; want %d", n, size, err, len(want))
		}
	}
}

func TestPackedErrors(t *testing.T) {
	sec, err := Decode(example61(t))
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
	check("unpacked FDEs", sec.AppendPacked(sec.FDEs[0]), "unpacked FDEs")

	p := &Section{Header: sec.Header}
	bad := sec.FDEs[1]
	bad.FREs = slices.Clone(bad.FREs)
	bad.FREs[0].Info = 0x65
	check("bad FRE", p.AppendPacked(bad), "FDE 0: FRE 0: invalid data-word size code 3")

	p = &Section{Header: sec.Header}
	if err := p.AppendPacked(sec.FDEs[0]); err != nil {
		t.Fatal(err)
	}
	p.FDEs[0].FREOffset = 1000
	_, err = p.Encode()
	check("offset", err, "FRE offset 0x3e8 past the packed FRE data")
	p.FDEs[0].FREOffset = 0
	p.FDEs[0].FREs = sec.FDEs[0].FREs
	_, err = p.Encode()
	check("FREs", err, "FDE 0 of a packed section has FREs")

	v2 := &Section{Header: sec.Header}
	v2.Header.Version = Version2
	check("version 2", v2.AppendPacked(sec.FDEs[0]), "version 2 (only 3)")
}
