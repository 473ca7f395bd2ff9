//go:build linux

package replace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replaceFile is TempFiles.ReplaceFile without tracking.
func replaceFile(dst string, perm os.FileMode, write func(tmp *os.File) error) error {
	return (*TempFiles)(nil).ReplaceFile(dst, perm, write)
}

func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "prog")
	if err := os.WriteFile(dst, []byte("old"), 0o751); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("prog", link); err != nil {
		t.Fatal(err)
	}
	var tmpName string
	err := replaceFile(link, 0o644, func(tmp *os.File) error {
		tmpName = tmp.Name()
		if !strings.HasPrefix(filepath.Base(tmpName), ".prog.sframe-gen-") || filepath.Dir(tmpName) != dir {
			t.Errorf("temporary file %s", tmpName)
		}
		_, err := tmp.WriteString("new")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(dst); st.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751", st.Mode())
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symbolic link replaced by a file")
	}
	if _, err := os.Stat(tmpName); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}

	// A failing write leaves dst untouched and no temporary file.
	boom := errors.New("boom")
	err = replaceFile(dst, 0o644, func(tmp *os.File) error {
		tmpName = tmp.Name()
		tmp.WriteString("partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content after failure %q", b)
	}
	if _, err := os.Stat(tmpName); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left after failure: %v", err)
	}

	// A new file gets perm.
	nf := filepath.Join(dir, "new")
	if err := replaceFile(nf, 0o640, func(tmp *os.File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(nf); st.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v", st.Mode())
	}
	if err := replaceFile(dir, 0o640, func(tmp *os.File) error { return nil }); err == nil {
		t.Errorf("no error replacing a directory")
	}
}

func TestReplaceFilePanic(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "prog")
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("panic not passed on")
			}
		}()
		replaceFile(dst, 0o644, func(tmp *os.File) error {
			tmp.WriteString("partial")
			panic("boom")
		})
	}()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after a panic in write, want 1 (temporary file left?)", len(ents))
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("content %q", b)
	}
}

func TestTempFilesRemoveAll(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "prog")
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var temps TempFiles
	var tmpName string
	// RemoveAll while write runs (as a signal handler would): the temporary
	// file goes at once, the rename does not happen.
	err := temps.ReplaceFile(dst, 0o644, func(tmp *os.File) error {
		tmpName = tmp.Name()
		tmp.WriteString("new")
		temps.RemoveAll()
		if _, err := os.Stat(tmpName); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temporary file still there after RemoveAll: %v", err)
		}
		return nil
	})
	if err == nil {
		t.Errorf("ReplaceFile succeeded after RemoveAll")
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("content %q, want old", b)
	}
	// No new temporary file after RemoveAll.
	called := false
	err = temps.ReplaceFile(dst, 0o644, func(tmp *os.File) error { called = true; return nil })
	if err == nil || called {
		t.Errorf("ReplaceFile after RemoveAll: err %v, write called %v", err, called)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want 1", len(ents))
	}
	// A nil *TempFiles tracks nothing and works.
	var none *TempFiles
	none.RemoveAll()
	if err := none.ReplaceFile(dst, 0o644, func(tmp *os.File) error { _, err := tmp.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
}
