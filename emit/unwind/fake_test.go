package unwind

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// fakeMem is an address space of a few regions.
type fakeMem struct {
	order   binary.ByteOrder
	regions map[uint64][]byte // by start address
}

func newMem(abi emit.ABI) *fakeMem {
	return &fakeMem{order: abi.ByteOrder(), regions: map[uint64][]byte{}}
}

// ReadAt reads from the region holding all of p, or fails.
func (m *fakeMem) ReadAt(p []byte, off int64) (int, error) {
	a := uint64(off)
	for start, b := range m.regions {
		if a >= start && a+uint64(len(p)) <= start+uint64(len(b)) {
			return copy(p, b[a-start:]), nil
		}
	}
	return 0, errors.New("unmapped")
}

// region maps size zero bytes at start.
func (m *fakeMem) region(start, size uint64) { m.regions[start] = make([]byte, size) }

// put writes the 8-byte word v at addr (in a region).
func (m *fakeMem) put(addr, v uint64) {
	for start, b := range m.regions {
		if addr >= start && addr+8 <= start+uint64(len(b)) {
			m.order.PutUint64(b[addr-start:], v)
			return
		}
	}
	panic("put outside the regions")
}

// putBytes writes b at addr (in a region).
func (m *fakeMem) putBytes(addr uint64, p []byte) {
	for start, b := range m.regions {
		if addr >= start && addr+uint64(len(p)) <= start+uint64(len(b)) {
			copy(b[addr-start:], p)
			return
		}
	}
	panic("putBytes outside the regions")
}

// fn is one function of a synthetic section.
type fn struct {
	start, size uint64
	info, info2 uint8
	rep         uint8
	fres        []emit.FRE
}

// sframeAddr is where the synthetic sections are "loaded".
const sframeAddr = 0x800

// reader builds a section of fns for abi and a Reader of it.
func reader(t *testing.T, abi emit.ABI, fns ...fn) *emit.Reader {
	t.Helper()
	sec := &emit.Section{Header: emit.Header{Version: emit.Version3, Flags: emit.FlagFDEFuncStartPCRel, ABI: abi}}
	if abi == emit.ABIAMD64LittleEndian {
		sec.Header.CFAFixedRAOffset = -8
	}
	for i, f := range fns {
		info := f.info
		if info&0xf == 0 {
			info |= uint8(emit.FRETypeFor(uint32(f.size)))
		}
		if err := sec.AppendFDE(emit.FDE{Size: uint32(f.size), Info: info, Info2: f.info2, RepSize: f.rep, FREs: f.fres}); err != nil {
			t.Fatal(err)
		}
		sec.SetFuncStart(i, f.start, sframeAddr)
	}
	data, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	r, err := emit.NewReader(data, sframeAddr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fre builds a default FDE's FRE of 1-byte (or, when needed, 4-byte) words.
func fre(start uint32, baseSP bool, words ...int32) emit.FRE {
	size := emit.DataWord1B
	for _, w := range words {
		if w < -128 || w > 127 {
			size = emit.DataWord4B
		}
	}
	return emit.FRE{StartAddr: start, Info: emit.FREInfo(baseSP, len(words), size, false), Words: words}
}

// mangled sets an FRE's mangled-RA bit.
func mangled(e emit.FRE) emit.FRE {
	e.Info |= 1 << 7
	return e
}

// outermost is an FRE without data words.
func outermost(start uint32) emit.FRE {
	return emit.FRE{StartAddr: start, Info: emit.FREInfo(true, 0, emit.DataWord1B, false)}
}

// s390xCFA is the stored form of an s390x CFA offset.
func s390xCFA(off int64) int32 { return int32(emit.S390XCFAOffsetEncode(off)) }
