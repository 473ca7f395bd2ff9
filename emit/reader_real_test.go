package emit_test

import (
	"slices"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestReaderAgainstDecode compares emit.Reader's answers (Find, Lookup,
// Covering), at every boundary of every function and FRE of real
// sections, with those of the plain decoded section: the function by a
// binary search over the functions' starts, the last FRE starting at or
// before the PC's offset (modulo the repeat size for PCMASK), what
// Header.Frame says of it. The sections are sframe-gen's of the system's
// libc and libstdc++, and of its biggest libLLVM where there is one
// (-short: libc only).
func TestReaderAgainstDecode(t *testing.T) {
	paths := []string{sysfiles.CompilerLib(t, "gcc", "libc.so.6")}
	if !testing.Short() {
		paths = append(paths, sysfiles.CompilerLib(t, "g++", "libstdc++.so.6"))
		if big := sysfiles.BigLib(t); big != "" {
			paths = append(paths, big)
		} else {
			t.Log("no libLLVM on this system (ldconfig -p): compared on libc and libstdc++ only")
		}
	}
	for _, p := range paths {
		sec, err := sframegen.GenerateFile(p, sframegen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := emit.NewReader(sec.Bytes(), sec.Addr)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		n := compareWithDecode(t, p, r, sec.Addr)
		t.Logf("%s: %d functions, %d PCs compared", p, r.NumFuncs(), n)
	}
}

// plainFunc is a function of the decoded section.
type plainFunc struct {
	start uint64
	index int
	fde   *emit.FDE
}

// compareWithDecode checks r's answers against the plain decoding of its
// section at every function's and FRE's boundaries, and returns the
// number of PCs compared.
func compareWithDecode(t *testing.T, name string, r *emit.Reader, addr uint64) int {
	t.Helper()
	s := r.Section()
	fdes, err := s.Functions()
	if err != nil {
		t.Fatal(err)
	}
	funcs := make([]plainFunc, len(fdes))
	for i := range fdes {
		funcs[i] = plainFunc{s.FuncStart(i, addr), i, &fdes[i]}
	}
	slices.SortStableFunc(funcs, func(a, b plainFunc) int {
		if a.start != b.start {
			if a.start < b.start {
				return -1
			}
			return 1
		}
		return 0
	})
	// want is the plain answer at pc: the function covering it (the last
	// one starting at or before it), the FRE and its frame.
	want := func(pc uint64) (fn *plainFunc, fre int, fr emit.Frame, frOK bool) {
		k, _ := slices.BinarySearchFunc(funcs, pc+1, func(f plainFunc, v uint64) int {
			if f.start < v {
				return -1
			}
			return 1
		})
		if k == 0 || pc+1 == 0 || pc-funcs[k-1].start >= uint64(funcs[k-1].fde.Size) {
			return nil, -1, emit.Frame{}, false
		}
		fn = &funcs[k-1]
		off := pc - fn.start
		if fn.fde.PCType() == emit.PCMask {
			if fn.fde.RepSize == 0 {
				return fn, -1, emit.Frame{}, false
			}
			off %= uint64(fn.fde.RepSize)
		}
		fre = -1
		for j, e := range fn.fde.FREs {
			if uint64(e.StartAddr) <= off {
				fre = j
			}
		}
		if fre < 0 {
			return fn, -1, emit.Frame{}, false
		}
		fr, err := s.Header.Frame(fn.fde, &fn.fde.FREs[fre])
		return fn, fre, fr, err == nil
	}
	compared, bad := 0, 0
	check := func(pc uint64) {
		compared++
		fn, fre, fr, frOK := want(pc)
		i, j, ok := r.Find(pc)
		l, lok := r.Lookup(pc)
		c, cok := r.Covering(pc)
		switch {
		case fn == nil && (ok || lok || cok),
			fn != nil && (!cok || c.Index != fn.index || c.Start != fn.start),
			fn != nil && fre < 0 && (ok || lok),
			fre >= 0 && (!ok || i != fn.index || j != fre),
			fre >= 0 && lok != frOK,
			lok && (l.Func != fn.index || l.FRE != fre || l.Start != fn.start || l.Frame != fr):
			bad++
			if bad <= 10 {
				t.Errorf("%s: at %#x: Find %d/%d %v, Lookup %+v %v, Covering %d %v; decoded: function %v FRE %d frame %+v %v",
					name, pc, i, j, ok, l, lok, c.Index, cok, fn, fre, fr, frOK)
			}
		}
	}
	for _, fn := range funcs {
		end := fn.start + uint64(fn.fde.Size)
		for _, pc := range []uint64{fn.start - 1, fn.start, end - 1, end} {
			check(pc)
		}
		for _, e := range fn.fde.FREs {
			pc := fn.start + uint64(e.StartAddr)
			check(pc - 1)
			check(pc)
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d PCs answered otherwise than the decoded section", name, bad, compared)
	}
	return compared
}
