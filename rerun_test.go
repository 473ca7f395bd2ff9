package sframegen

import (
	"bytes"
	"fmt"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// rerunOptions are the option sets TestRerunAsFromOriginal runs after one
// another.
var rerunOptions = []struct {
	name string
	opt  Options
}{
	{"default", Options{}},
	{"no-share-fres", Options{Share: ShareNever}},
	{"gas-compat", Options{GasCompat: true}},
	{"v2", Options{Version: 2}},
	{"v2-2.44", Options{Version: 2, V2Layout: V2Binutils244}},
}

// TestRerunAsFromOriginal: a linked file patched with one option set and
// then with another is byte for byte the file patched with the second
// alone, so that it keeps the size one run gives, for every ordered pair
// of option sets (the same twice included) on x86-64, AArch64 and s390x
// files: the committed linked files (executables and shared libraries,
// whose sections need a new PT_LOAD or fit in the space after one), and
// the machine's libz and the cross compilers' libatomic and libgcc_s.
func TestRerunAsFromOriginal(t *testing.T) {
	var files []string
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		for _, name := range []string{"pie.exe", "nopie.exe", "gc.exe", "lazy.so", "tree-sitter.exe"} {
			files = append(files, filepath.Join("testdata", "link", arch, name))
		}
	}
	for _, name := range []string{"libz.so.1"} {
		libs := sysfiles.LdconfigLibs(name)
		if len(libs) == 0 {
			sysfiles.NeedInput(t, "no %s in ldconfig -p (apt-get install zlib1g)", name)
		}
		files = append(files, libs[0])
	}
	for _, cc := range []string{"aarch64-linux-gnu-gcc", "s390x-linux-gnu-gcc"} {
		for _, name := range []string{"libatomic.so.1", "libgcc_s.so.1"} {
			files = append(files, sysfiles.CompilerLib(t, cc, name))
		}
	}
	for _, path := range files {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			one := make([][]byte, len(rerunOptions)) // nil: that set refuses the file
			for i, o := range rerunOptions {
				out, err := patchBytes(t, dir, orig, o.opt)
				if err != nil {
					t.Logf("%s: %v", o.name, err)
					continue
				}
				one[i] = out
			}
			for a, oa := range rerunOptions {
				if one[a] == nil {
					continue
				}
				for b, ob := range rerunOptions {
					if one[b] == nil {
						continue
					}
					got, err := patchBytes(t, dir, one[a], ob.opt)
					if err != nil {
						t.Errorf("%s then %s: %v", oa.name, ob.name, err)
						continue
					}
					if !bytes.Equal(got, one[b]) {
						t.Errorf("%s then %s: %d bytes, not the %d bytes of %s alone (%s)", oa.name, ob.name, len(got), len(one[b]), ob.name, firstDiff(got, one[b]))
					}
				}
			}
		})
	}
}

// patchBytes writes data to a file in dir, patches it in place with opt
// and returns the result.
func patchBytes(t *testing.T, dir string, data []byte, opt Options) ([]byte, error) {
	t.Helper()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(opt, Resources{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := replace.NamedPlace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Dir.Close()
	out, err := g.Process(Job{In: in})
	if err != nil {
		return nil, err
	}
	if out.Status != Patched && out.Status != UpToDate {
		return nil, fmt.Errorf("status %v", out.Status)
	}
	return os.ReadFile(path)
}

// firstDiff says where a and b first differ.
func firstDiff(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("first difference at offset %#x", i)
		}
	}
	return fmt.Sprintf("one is a prefix of the other, up to %#x", min(len(a), len(b)))
}
