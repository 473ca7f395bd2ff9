package sframegen

import (
	"bytes"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestReflinkSharesUnchanged writes a linked file with its section on a
// file system that shares blocks between files (XFS with reflink, made
// on a loop device): the bytes the patch leaves as they are must share
// the input's blocks (the copy is copy_file_range's, which the kernel
// makes a reflink there), not be copied; and the new bytes must be left
// for the kernel to write back, not written out by a change of size. It
// needs root, mkfs.xfs (xfsprogs) and a loop device: without them it
// skips, or fails under CI=true.
func TestReflinkSharesUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: makes and mounts a file system (runs in make test-long)")
	}
	mkfs, err := exec.LookPath("mkfs.xfs")
	if err != nil { // a PATH without sbin
		for _, p := range []string{"/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"} {
			if _, serr := os.Stat(p); serr == nil {
				mkfs, err = p, nil
				break
			}
		}
	}
	if err != nil {
		sysfiles.NeedInput(t, "mkfs.xfs not available: %s", sysfiles.InstallHint("mkfs.xfs"))
	}
	sysfiles.NeedRoot(t, "mounts a loop device")
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "xfs.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 320<<20); err != nil { // XFS's least size is 300 MB
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-m", "reflink=1", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.xfs: %v\n%s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		sysfiles.NeedInput(t, "mount -o loop: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	})

	src, err := os.ReadFile(filepath.Join("testdata", "link", "x86_64", "tree-sitter.exe"))
	if err != nil {
		t.Fatal(err)
	}
	if len(src) <= wholeReadBytes {
		t.Fatalf("the input has %d bytes: a file of at most %d is written from memory, not copied", len(src), wholeReadBytes)
	}
	inPath, outPath := filepath.Join(mnt, "in.exe"), filepath.Join(mnt, "out.exe")
	if err := os.WriteFile(inPath, src, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(Options{}, Resources{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := replace.NamedPlace(inPath)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Dir.Close()
	out, err := replace.NamedPlace(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Dir.Close()
	if o, err := g.Process(Job{In: in, Out: out}); err != nil || o.Status != Patched {
		t.Fatalf("Process: %v, %v", o.Status, err)
	}
	// The new bytes are left for the kernel to write back, as cp leaves
	// its copy: the output's size is set only where it changes (XFS
	// writes a file out and waits for it at every size change, to the
	// same size too).
	pending := false
	for _, e := range fileExtentsFlags(t, outPath, 0) {
		if e.logical+e.length > uint64(len(src)) && e.flags&(fiemapExtentDelalloc|fiemapExtentUnwritten) != 0 {
			pending = true
		}
	}
	if !pending {
		t.Errorf("the output's new bytes were written to the disk before Process returned (extents: %+v)", fileExtentsFlags(t, outPath, 0))
	}
	syscall.Sync() // extents on the disk, for FIEMAP

	inExt, outExt := fileExtents(t, inPath), fileExtents(t, outPath)
	shared := uint64(0)
	for _, o := range outExt {
		if o.flags&fiemapExtentShared == 0 {
			continue
		}
		for _, i := range inExt {
			lo, hi := max(o.physical, i.physical), min(o.physical+o.length, i.physical+i.length)
			if lo < hi {
				shared += hi - lo
			}
		}
	}
	// What the patch writes: the headers' blocks, a block it changes,
	// the section after the end; the rest is shared.
	if want := uint64(len(src)) * 3 / 4; shared < want {
		t.Errorf("the output shares %d bytes of the input's blocks, want at least %d of %d (extents: in %+v, out %+v)", shared, want, len(src), inExt, outExt)
	}
	got, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(inPath); !bytes.Equal(now, src) {
		t.Error("the input changed")
	}
	if len(got) <= len(src) {
		t.Errorf("the output has %d bytes, the input %d: no section added", len(got), len(src))
	}
}

// extent is one extent of FIEMAP: where a piece of a file is on the
// device.
type extent struct {
	logical, physical, length uint64
	flags                     uint32
}

const (
	fsIOCFiemap           = 0xc020660b // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync        = 1
	fiemapExtentShared    = 0x2000
	fiemapExtentDelalloc  = 0x4
	fiemapExtentUnwritten = 0x800
	fiemapExtentLast      = 1
	fiemapHeaderSize      = 32
	fiemapExtentSize      = 56
	fiemapExtentsAtOnce   = 64
)

// fileExtents returns the extents of the file at path (FS_IOC_FIEMAP),
// its data written first.
func fileExtents(t *testing.T, path string) []extent {
	t.Helper()
	return fileExtentsFlags(t, path, fiemapFlagSync)
}

// fileExtentsFlags is fileExtents with FIEMAP's flags: without
// fiemapFlagSync, data not written yet shows as such.
func fileExtentsFlags(t *testing.T, path string, flags uint64) []extent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exts []extent
	for start := uint64(0); ; {
		buf := make([]uint64, (fiemapHeaderSize+fiemapExtentsAtOnce*fiemapExtentSize)/8)
		buf[0], buf[1] = start, ^uint64(0)-start // fm_start, fm_length
		buf[2] = flags                           // fm_flags (fm_mapped_extents 0)
		buf[3] = fiemapExtentsAtOnce             // fm_extent_count
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIOCFiemap, uintptr(unsafe.Pointer(&buf[0]))); errno != 0 {
			t.Fatalf("FIEMAP %s: %v", path, errno)
		}
		n := int(uint32(buf[2] >> 32)) // fm_mapped_extents
		if n == 0 {
			return exts
		}
		for k := range n {
			e := buf[(fiemapHeaderSize+k*fiemapExtentSize)/8:]
			x := extent{logical: e[0], physical: e[1], length: e[2], flags: uint32(e[5])}
			exts = append(exts, x)
			start = x.logical + x.length
			if x.flags&fiemapExtentLast != 0 {
				return exts
			}
		}
	}
}
