package cfi

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestReadDamagedSection: a CFI section running past the end of the file
// is reported as such (not as a bare "unexpected EOF"), a compressed one
// claiming over MaxSectionBytes is refused before it is inflated, and
// SectionBytes gives what a bomb would take in memory, before it is
// inflated (cmd/sframe-gen's damage and bomb tests found these).
func TestReadDamagedSection(t *testing.T) {
	orig, err := os.ReadFile("../testdata/gas/x86_64/debugframe.o")
	if err != nil {
		t.Fatal(err)
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
	f, err = elf.NewFile(bytes.NewReader(bomb))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := SectionBytes(f, DebugFrame); err != nil || n != 64<<20 {
		t.Errorf("SectionBytes(bomb) = %d, %v; want %d", n, err, 64<<20)
	}
	f, err = elf.NewFile(bytes.NewReader(past))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SectionBytes(f, DebugFrame); err == nil || !strings.Contains(err.Error(), "runs past the end of the file") {
		t.Errorf("SectionBytes(past EOF): %v", err)
	}
}

// TestReadHighlyCompressed: real CFI can compress far more than 64 to 1.
// gcc -gz on an object of 3,000 small functions compresses its
// .debug_frame 197 to 1 (20,000: 338 to 1; every FDE is the same bytes, the addresses being
// relocations); Read must read it, and SectionBytes give its size.
func TestReadHighlyCompressed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles 3,000 functions with -g (runs in make test-long)")
	}
	sysfiles.NeedProgram(t, "gcc")
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("int g(int);\n")
	for i := range 3000 {
		fmt.Fprintf(&src, "int f%d(int x) { return x * %d + g(x); }\n", i, i)
	}
	c := filepath.Join(dir, "many.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "many.o")
	cmd := exec.Command("gcc", "-O2", "-g", "-gz", "-fno-asynchronous-unwind-tables", "-c", c, "-o", obj)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".debug_frame")
	if sec == nil || sec.Flags&elf.SHF_COMPRESSED == 0 {
		t.Fatal("gcc -gz left .debug_frame uncompressed")
	}
	n, err := SectionBytes(f, DebugFrame)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf(".debug_frame: %d bytes from %d (%.0f to 1)", n, sec.FileSize, float64(n)/float64(sec.FileSize))
	fr, err := Read(f, DebugFrame)
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.FDEs) != 3000 || len(fr.Errors) != 0 || n/sec.FileSize < 64 {
		t.Errorf("%d FDEs, %d errors, ratio %d; want 3000, 0, over 64 (the old limit)", len(fr.FDEs), len(fr.Errors), n/sec.FileSize)
	}
}
