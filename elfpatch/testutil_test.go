package elfpatch

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// run runs a command and returns its stdout; stderr is returned separately.
func run(t *testing.T, name string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// sframeText returns `objdump --sframe` output from the "Contents of" line on.
func sframeText(t *testing.T, objdump, path string) string {
	t.Helper()
	out, errs := run(t, objdump, "--sframe", path)
	if errs != "" {
		t.Errorf("objdump --sframe %s: stderr %q", path, errs)
	}
	i := strings.Index(out, "Contents of the SFrame section .sframe:")
	if i < 0 {
		t.Fatalf("objdump --sframe %s: no SFrame section in\n%s", path, out)
	}
	return out[i:]
}

// hasSection reports whether the ELF file path has a section called name.
func hasSection(t *testing.T, path, name string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Section(name) != nil
}

// objectSFrame reads the .sframe bytes and .rela.sframe relocations of a
// gas --gsframe object, as PatchObject inputs.
func objectSFrame(t *testing.T, path string) ([]byte, []Reloc) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sf := f.Section(".sframe")
	if sf == nil {
		t.Fatalf("%s: no .sframe", path)
	}
	data, err := sf.Data()
	if err != nil {
		t.Fatal(err)
	}
	rs := f.Section(".rela.sframe")
	if rs == nil {
		return data, nil
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	rb, err := rs.Data()
	if err != nil {
		t.Fatal(err)
	}
	var relocs []Reloc
	for off := 0; off+24 <= len(rb); off += 24 {
		info := f.ByteOrder.Uint64(rb[off+8:])
		sym := syms[info>>32-1] // Symbols() omits index 0
		if elf.ST_TYPE(sym.Info) != elf.STT_SECTION {
			t.Fatalf("%s: .rela.sframe entry %d names non-section symbol %q", path, off/24, sym.Name)
		}
		relocs = append(relocs, Reloc{
			Offset:  f.ByteOrder.Uint64(rb[off:]),
			Type:    uint32(info),
			Section: uint32(sym.Section),
			Addend:  int64(f.ByteOrder.Uint64(rb[off+16:])),
		})
	}
	return data, relocs
}

// runCmd runs a command and returns its combined output.
func runCmd(name string, args ...string) ([]byte, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s: %v\n%s", name, err, out)
	}
	return out, nil
}

// The tests find the system's files by asking the tools that use them,
// not at fixed paths: $PATH holds the programs, a cross compiler says
// where its C library lies (qemu-user's -L is the directory above), the
// dynamic linker's cache lists the big libraries (ldconfig -p)
// (testdata/sysfiles). A file that cannot be found skips the test, saying
// why, except under CI=true (.ci/run installs everything), where it fails.

// qemuPrefix returns the directory qemu-user's -L takes for the programs
// cross compiler cc builds: the one whose lib/ holds the C library cc
// links (/usr/aarch64-linux-gnu on Debian), or skips t (fails it under
// CI=true).
func qemuPrefix(t *testing.T, cc string) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(sysfiles.CompilerLib(t, cc, "libc.so.6")))
}
