package main

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"
)

// TestCompressedBomb gives every command an object whose SHF_COMPRESSED
// .debug_frame inflates from 64 KiB to 64 MiB of zeros (a true ch_size, not
// a forged one: a decompression bomb). The run must stay within the damage
// test's memory bound, 64 times the input plus 64 MiB.
//
// Known to fail: cfi inflates the whole section whatever the ratio
// (docs/robustness.md); run with SFRAME_KNOWN_BUGS=1.
func TestCompressedBomb(t *testing.T) {
	if os.Getenv("SFRAME_KNOWN_BUGS") == "" {
		t.Skip("known bug (cfi inflates compressed sections without a bound); SFRAME_KNOWN_BUGS=1 runs it")
	}
	data := compressedBomb(t, filepath.Join(testdataDir(), "gas/x86_64/debugframe.o"), ".debug_frame", 64<<20)
	var st damageStats
	problems, hung, err := checkDamaged(cliRunner, t.TempDir(), data, &st)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if hung {
		t.Fatal("hang")
	}
	t.Logf("%d-byte input, largest allocation %d MiB", len(data), st.maxAlloc>>20)
}

// compressedBomb returns the ELF64 file at path with section name replaced
// by a zlib-compressed section (appended at the end of the file) that
// inflates to size zero bytes.
func compressedBomb(t *testing.T, path, name string, size int) []byte {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := layoutOf(orig)
	if err != nil {
		t.Fatal(err)
	}
	i := l.index(name)
	if i < 0 {
		t.Fatalf("%s: no %s", path, name)
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(make([]byte, size))
	zw.Close()
	chdr := make([]byte, 24)
	l.bo.PutUint32(chdr[0:], uint32(elf.COMPRESS_ZLIB))
	l.bo.PutUint64(chdr[8:], uint64(size))
	l.bo.PutUint64(chdr[16:], 1)
	off := uint64(len(orig))
	d := append(append(append([]byte(nil), orig...), chdr...), z.Bytes()...)
	flags := l.bo.Uint64(d[l.secs[i].hdr+shFlags:])
	l.putShdr(d, i, shFlags, flags|uint64(elf.SHF_COMPRESSED))
	l.putShdr(d, i, shOffset, off)
	l.putShdr(d, i, shSize, uint64(len(chdr)+z.Len()))
	return d
}
