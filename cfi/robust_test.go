package cfi

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// TestReadDamagedSection: a CFI section running past the end of the file
// is reported as such (not as a bare "unexpected EOF"), and a compressed
// one claiming far more than maxRatio times its size is refused before it
// is inflated (cmd/sframe-gen's damage and bomb tests found both).
func TestReadDamagedSection(t *testing.T) {
	orig, err := os.ReadFile("../testdata/gas/x86_64/debugframe.o")
	if err != nil {
		t.Skip(err)
	}
	f, err := elf.NewFile(bytes.NewReader(orig))
	if err != nil {
		t.Fatal(err)
	}
	idx := -1
	for i, s := range f.Sections {
		if s.Name == ".debug_frame" {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatal("no .debug_frame")
	}
	le := binary.LittleEndian
	shdr := le.Uint64(orig[0x28:]) + uint64(idx)*64

	past := append([]byte(nil), orig...)
	le.PutUint64(past[shdr+0x20:], uint64(len(orig))) // sh_size

	// 64 KiB of zlib inflating to 64 MiB of zeros, appended.
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(make([]byte, 64<<20))
	zw.Close()
	chdr := make([]byte, 24)
	le.PutUint32(chdr, uint32(elf.COMPRESS_ZLIB))
	le.PutUint64(chdr[8:], 64<<20)
	le.PutUint64(chdr[16:], 1)
	bomb := append(append(append([]byte(nil), orig...), chdr...), z.Bytes()...)
	le.PutUint64(bomb[shdr+0x08:], le.Uint64(bomb[shdr+0x08:])|uint64(elf.SHF_COMPRESSED))
	le.PutUint64(bomb[shdr+0x18:], uint64(len(orig)))
	le.PutUint64(bomb[shdr+0x20:], uint64(len(chdr)+z.Len()))

	// The section's own data compressed, the stream cut in half.
	plain, _ := f.Sections[idx].Data()
	var zc bytes.Buffer
	zw, _ = zlib.NewWriterLevel(&zc, zlib.NoCompression)
	zw.Write(plain)
	zw.Close()
	le.PutUint64(chdr[8:], uint64(len(plain)))
	cut := append(append(append([]byte(nil), orig...), chdr...), zc.Bytes()[:zc.Len()/2]...)
	le.PutUint64(cut[shdr+0x08:], le.Uint64(cut[shdr+0x08:])|uint64(elf.SHF_COMPRESSED))
	le.PutUint64(cut[shdr+0x18:], uint64(len(orig)))
	le.PutUint64(cut[shdr+0x20:], uint64(len(chdr)+zc.Len()/2))

	// The bomb again, its sh_size forged past the end of the file so that
	// the ratio check passes (the stream itself is complete in the file).
	forged := append([]byte(nil), bomb...)
	le.PutUint64(forged[shdr+0x20:], 2<<20)
	// A compressed size within 4 GiB but sh_size and ch_size huge: make
	// panicked on the claimed size (FuzzReadELF, ace7d925c2d44211).
	huge := append([]byte(nil), bomb...)
	le.PutUint64(huge[shdr+0x20:], 1<<62)
	le.PutUint64(huge[len(orig)+8:], 1<<61) // ch_size

	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"past EOF", past, ".debug_frame (file offset 0x"},
		{"bomb, sh_size forged", forged, "runs past the end of the file"},
		{"ch_size and sh_size huge", huge, "compressed section claims 2305843009213693952 bytes"},
		{"bomb", bomb, ".debug_frame: compressed section claims 67108864 bytes from "},
		{"cut stream", cut, ".debug_frame: compressed data ends before the "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := elf.NewFile(bytes.NewReader(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read(f, DebugFrame)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if err != nil && strings.HasSuffix(err.Error(), ": unexpected EOF") {
				t.Errorf("error %q ends in a bare EOF", err)
			}
		})
	}
}
