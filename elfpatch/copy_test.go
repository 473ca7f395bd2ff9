package elfpatch

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPatchLinkedCopy checks that PatchLinkedCopy, given an output that
// already holds a copy of the input, and PlanLinked given the input's
// bytes (patched in memory) write the same bytes as PatchLinked,
// for sections that fit in place, in a gap, or need a new PT_LOAD (the
// section header table then moves and the copy is cut).
func TestPatchLinkedCopy(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", "*.so"))
	exes, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "*", "*.exe"))
	files = append(files, exes...)
	if len(files) < 4 {
		t.Fatalf("found %d linked files under testdata/link", len(files))
	}
	dir := t.TempDir()
	fromMemory := 0
	for _, name := range files {
		for _, size := range []int{8, 200, 5000, 300000} {
			in, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			encode := func(addr uint64) ([]byte, error) {
				b := make([]byte, size)
				for i := range b {
					b[i] = byte(addr>>3) + byte(i)
				}
				return b, nil
			}
			want, wantErr := patchTo(t, filepath.Join(dir, "plain"), func(out *os.File) (Layout, error) {
				return PatchLinked(in, out, size, encode)
			})
			got, gotErr := patchTo(t, filepath.Join(dir, "copied"), func(out *os.File) (Layout, error) {
				if _, err := io.Copy(out, io.NewSectionReader(in, 0, 1<<40)); err != nil {
					t.Fatal(err)
				}
				return patchLinkedCopy(in, out, size, encode)
			})
			// The copy is made by the wait (after the encoding): anything
			// written to out before it would be overwritten or cut.
			waits := 0
			parts, partsErr := patchTo(t, filepath.Join(dir, "parts"), func(out *os.File) (Layout, error) {
				encoded := false
				return PatchLinkedCopyParts(in, out, size, func(addr uint64) ([][]byte, error) {
					encoded = true
					b, err := encode(addr)
					// Three pieces, one of them empty.
					return [][]byte{b[:size/3], b[size/3 : size/3], b[size/3:]}, err
				}, func() error {
					waits++
					if !encoded {
						t.Errorf("%s: wait called before the section was encoded", name)
					}
					_, err := io.Copy(out, io.NewSectionReader(in, 0, 1<<40))
					return err
				})
			})
			// Planned with the input's bytes given: patched in memory
			// and written at once (LinkedPatch.Write's writeFrom).
			inMemory, memErr := patchTo(t, filepath.Join(dir, "memory"), func(out *os.File) (Layout, error) {
				data, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				p, err := PlanLinked(in, data, size, func(addr uint64) ([][]byte, error) {
					b, err := encode(addr)
					return [][]byte{b}, err
				})
				if err != nil {
					return Layout{}, err
				}
				// A sparse input is copied, its holes kept.
				st, err := os.Stat(name)
				if err != nil {
					t.Fatal(err)
				}
				sparse := st.Sys().(*syscall.Stat_t).Blocks*512 < st.Size()
				if (p.bytes == nil) != sparse {
					t.Errorf("%s (sparse: %v): written from the bytes given: %v", name, sparse, p.bytes != nil)
				}
				if p.bytes != nil {
					fromMemory++
				}
				return p.Layout(), p.Write(out)
			})
			if (wantErr == nil) != (memErr == nil) {
				t.Fatalf("%s, %d bytes: PatchLinked error %v, PlanLinked with the bytes error %v", name, size, wantErr, memErr)
			}
			if !bytes.Equal(inMemory, want) {
				t.Errorf("%s, %d bytes: written from memory (%d bytes), differs from PatchLinked's (%d bytes)", name, size, len(inMemory), len(want))
			}
			if partsErr == nil && waits != 1 {
				t.Errorf("%s, %d bytes: PatchLinkedCopyParts waited %d times", name, size, waits)
			}
			in.Close()
			if (wantErr == nil) != (gotErr == nil) || (wantErr == nil) != (partsErr == nil) {
				t.Fatalf("%s, %d bytes: PatchLinked error %v, PatchLinkedCopy error %v, PatchLinkedCopyParts error %v", name, size, wantErr, gotErr, partsErr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %d bytes: PatchLinkedCopy output (%d bytes) differs from PatchLinked's (%d bytes)", name, size, len(got), len(want))
			}
			if !bytes.Equal(parts, want) {
				t.Errorf("%s, %d bytes: PatchLinkedCopyParts output (%d bytes) differs from PatchLinked's (%d bytes)", name, size, len(parts), len(want))
			}
		}
	}
	if fromMemory == 0 {
		t.Errorf("no file was written from memory: every file under testdata/link is sparse here")
	}
}

// openLinkedX86 opens a linked x86_64 file of testdata/link, closed when
// the test ends.
func openLinkedX86(t *testing.T) *os.File {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "link", "x86_64", "*.so"))
	if len(files) == 0 {
		t.Fatal("no linked x86_64 file under testdata/link")
	}
	in, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

// TestPatchLinkedCopyWaitError checks that an error of the copy ends
// PatchLinkedCopyParts before it writes anything.
func TestPatchLinkedCopyWaitError(t *testing.T) {
	in := openLinkedX86(t)
	copyErr := errors.New("copy failed")
	got, err := patchTo(t, filepath.Join(t.TempDir(), "out"), func(out *os.File) (Layout, error) {
		return PatchLinkedCopyParts(in, out, 64, func(uint64) ([][]byte, error) { return [][]byte{make([]byte, 64)}, nil },
			func() error { return copyErr })
	})
	if !errors.Is(err, copyErr) || len(got) != 0 {
		t.Fatalf("PatchLinkedCopyParts with a failed copy: error %v, %d bytes written", err, len(got))
	}
}

// TestPatchLinkedCopyShort refuses an output shorter than the copy needs.
func TestPatchLinkedCopyShort(t *testing.T) {
	in := openLinkedX86(t)
	_, err := patchTo(t, filepath.Join(t.TempDir(), "out"), func(out *os.File) (Layout, error) {
		return patchLinkedCopy(in, out, 64, func(uint64) ([]byte, error) { return make([]byte, 64), nil })
	})
	if err == nil {
		t.Fatal("PatchLinkedCopy on an empty output: no error")
	}
}

func patchTo(t *testing.T, path string, patch func(*os.File) (Layout, error)) ([]byte, error) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, perr := patch(out)
	out.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, perr
}
