package main

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestCompressedBomb gives every command an object whose SHF_COMPRESSED
// .debug_frame inflates from a little zlib data to many megabytes (a true
// ch_size, not a forged one): a 1000:1 bomb (64 KiB of zlib for 64 MiB of
// zeros) and a 28:1 section (4 MiB) must be read within the damage test's
// memory bound, 64 times the input plus 64 MiB plus the size the section
// claims (inflated into one buffer, charged to the memory budget first:
// TestMemoryBudget). (Before cfi inflated into one buffer, the bomb cost
// 272 MiB for a 66 KB file.)
func TestCompressedBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: inflates decompression bombs in every command (runs in make test-long)")
	}
	for _, tc := range []struct {
		name   string
		size   int
		stride int // one random byte every stride bytes, the rest zero; 0: all zero
	}{
		{"1000 to 1", 64 << 20, 0},
		{"28 to 1", 4 << 20, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := compressedBomb(t, filepath.Join(testdataDir(), "gas/x86_64/debugframe.o"), ".debug_frame", tc.size, tc.stride)
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
		})
	}
}

// compressedBomb returns the ELF64 file at path with section name replaced
// by a zlib-compressed section (appended at the end of the file) that
// inflates to size bytes: zeros, with a random byte every stride bytes when
// stride > 0.
func compressedBomb(t *testing.T, path, name string, size, stride int) []byte {
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
	plain := make([]byte, size)
	if stride > 0 {
		r := rand.New(rand.NewSource(1))
		for i := 0; i < size; i += stride {
			plain[i] = byte(r.Intn(256))
		}
	}
	zw.Write(plain)
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
