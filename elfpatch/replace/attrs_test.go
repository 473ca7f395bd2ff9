//go:build linux

package replace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestReplaceNamedPrivileged: where the new file must have a name while it
// is written (no O_TMPFILE), it is mode 0600 without the set-user-ID bit
// or file capabilities until it has replaced the old file; then it has
// them all, and no temporary file is left. With O_TMPFILE the same.
func TestReplaceNamedPrivileged(t *testing.T) {
	sysfiles.NeedRoot(t, "security.* and trusted.* attributes")
	setcap := sysfiles.NeedProgram(t, "setcap")
	for _, named := range []bool{true, false} {
		dir := t.TempDir()
		dst := filepath.Join(dir, "prog")
		if err := os.WriteFile(dst, []byte("old"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dst, 0o755|os.ModeSetuid)
		if out, err := exec.Command(setcap, "cap_net_raw+ep", dst).CombinedOutput(); err != nil {
			t.Fatalf("setcap: %v\n%s", err, out)
		}
		capsBefore, _ := exec.Command("getcap", dst).Output()
		pl, err := NamedPlace(dst)
		if err != nil {
			t.Fatal(err)
		}
		src, err := OpenSource(pl)
		if err != nil {
			t.Fatal(err)
		}
		temps := &TempFiles{named: named}
		sawTemp := false
		err = temps.Replace(pl, src, 0o644, ReplaceOptions{}, func(tmp *os.File) error {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.Contains(e.Name(), ".sframe-gen-") {
					sawTemp = true
					st, _ := os.Stat(filepath.Join(dir, e.Name()))
					if st.Mode() != 0o600 {
						t.Errorf("named temporary file mode %v, want 0600", st.Mode())
					}
				}
			}
			_, err := tmp.WriteString("new")
			return err
		})
		src.Close()
		pl.Dir.Close()
		if err != nil {
			t.Fatal(err)
		}
		if sawTemp != named {
			t.Errorf("named %v: a named temporary file seen: %v", named, sawTemp)
		}
		st, _ := os.Stat(dst)
		if b, _ := os.ReadFile(dst); string(b) != "new" || st.Mode() != 0o755|os.ModeSetuid {
			t.Errorf("named %v: %q mode %v", named, b, st.Mode())
		}
		if caps, _ := exec.Command("getcap", dst).Output(); !bytes.Equal(caps, capsBefore) || len(caps) == 0 {
			t.Errorf("named %v: capabilities %q, want %q", named, caps, capsBefore)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("named %v: %d entries left", named, len(ents))
		}
	}
}
