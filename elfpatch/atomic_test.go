package elfpatch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	err := ReplaceFile(link, 0o644, func(tmp *os.File) error {
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
	err = ReplaceFile(dst, 0o644, func(tmp *os.File) error {
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
	if err := ReplaceFile(nf, 0o640, func(tmp *os.File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(nf); st.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v", st.Mode())
	}
	if err := ReplaceFile(dir, 0o640, func(tmp *os.File) error { return nil }); err == nil {
		t.Errorf("no error replacing a directory")
	}
}
