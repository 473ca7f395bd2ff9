package main

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMistypedCommand: a first operand that names no file and looks like
// a subcommand is a usage error suggesting the command, and the files
// named after it are left untouched; "help" prints the usage.
func TestMistypedCommand(t *testing.T) {
	dir := t.TempDir()
	obj := filepath.Join(dir, "basic.o")
	copyFile(t, filepath.Join(testdataDir(), "gas", "x86_64", "basic.o"), obj)
	old := time.Unix(1_000_000_000, 0)
	if err := os.Chtimes(obj, old, old); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"verfy", obj}, `sframe-gen: unknown command "verfy", and no such file; did you mean "verify"? (sframe-gen verify [flags] FILE)`},
		{[]string{"dupm", obj}, `did you mean "dump"?`},
		{[]string{"stat", obj}, `did you mean "stats"?`},
		{[]string{"rwos", obj}, `did you mean "rows"?`},
		{[]string{"Verify", obj}, `did you mean "verify"?`},
		{[]string{"hlep", obj}, `did you mean "help"?`},
		{[]string{"veri", obj}, `did you mean "verify"?`},
		{[]string{"-v", "verify", obj}, `"verify" is a command: it goes before the flags (sframe-gen verify [flags] FILE)`},
		{[]string{"-q", "help"}, `"help" is a command`},
		{[]string{"help", "verfy"}, `help: unknown command "verfy"; did you mean "verify"?`},
		{[]string{"help", "dump", "rows"}, "help: expected at most one COMMAND"},
	} {
		stdout, stderr, code := runCLI(tc.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.stderr) || !strings.Contains(stderr, "Try 'sframe-gen --help'") {
			t.Errorf("sframe-gen %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.stderr)
		}
		after, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(obj)
		if err != nil {
			t.Fatal(err)
		}
		if string(after) != string(before) || !st.ModTime().Equal(old) {
			t.Fatalf("sframe-gen %s touched %s", strings.Join(tc.args, " "), obj)
		}
	}

	// A word far from every command, or with a "." or "/", is a path as
	// before.
	for _, missing := range []string{"nonsense", "rows.o", "./dump", "verify/"} {
		if _, stderr, code := runCLI("-o", filepath.Join(dir, "out.o"), missing); code != exitFailure || !strings.Contains(stderr, missing+": no such file") {
			t.Errorf("the missing file %s: exit %d, %q", missing, code, stderr)
		}
	}

	usage, _, code := runCLI("--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, usage},
		{[]string{"help", "help"}, usage},
		{[]string{"help", "verify"}, "Usage: sframe-gen verify"},
		{[]string{"help", "rows"}, "Usage: sframe-gen rows"},
	} {
		stdout, stderr, code := runCLI(tc.args...)
		if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, tc.want) {
			t.Errorf("sframe-gen %s: exit %d, stderr %q, stdout %q; want the usage", strings.Join(tc.args, " "), code, stderr, stdout)
		}
	}
}

// TestFlagsThatSayNothing: --arch given empty and --gas-compat with
// --share-fres are usage errors, with the file left untouched.
func TestFlagsThatSayNothing(t *testing.T) {
	dir := t.TempDir()
	obj := filepath.Join(dir, "basic.o")
	copyFile(t, filepath.Join(testdataDir(), "gas", "x86_64", "basic.o"), obj)
	before, _ := os.ReadFile(obj)
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--arch=", obj}, "sframe-gen: --arch: empty; name the architecture FILE must be for (x86_64, aarch64, aarch64_be or s390x)\n"},
		{[]string{"--arch", "", obj}, "sframe-gen: --arch: empty;"},
		{[]string{"--arch=", obj, obj}, "sframe-gen: --arch: empty;"},
		{[]string{"--arch=", dir}, "sframe-gen: --arch: empty;"},
		{[]string{"--gas-compat", "--share-fres", obj}, "sframe-gen: --gas-compat and --share-fres exclude each other: GNU as and ld never share FRE data\n"},
		{[]string{"--share-fres", "--gas-compat", "-o", filepath.Join(dir, "out.o"), obj}, "sframe-gen: --gas-compat and --share-fres exclude each other"},
		{[]string{"--gas-compat", "--share-fres", "--raw", obj}, "sframe-gen: --gas-compat and --share-fres exclude each other"},
		{[]string{"--gas-compat", "--share-fres", dir}, "sframe-gen: --gas-compat and --share-fres exclude each other"},
	} {
		stdout, stderr, code := runCLI(tc.args...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, tc.stderr) {
			t.Errorf("sframe-gen %q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.stderr)
		}
	}
	if after, _ := os.ReadFile(obj); string(after) != string(before) {
		t.Error("the file was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "out.o")); err == nil {
		t.Error("-o wrote its output")
	}
}

// elf32Object returns the smallest 32-bit ELF relocatable object for
// EM_386: a header, no sections.
func elf32Object() []byte {
	h := make([]byte, 52)
	copy(h, "\x7fELF\x01\x01\x01")
	le := binary.LittleEndian
	le.PutUint16(h[16:], 1)  // ET_REL
	le.PutUint16(h[18:], 3)  // EM_386
	le.PutUint32(h[20:], 1)  // EV_CURRENT
	le.PutUint16(h[40:], 52) // e_ehsize
	le.PutUint16(h[46:], 40) // e_shentsize
	return h
}

// TestErrorsNameNoPackage: the user sees "sframe-gen: FILE: problem",
// never the name of a package of the program.
func TestErrorsNameNoPackage(t *testing.T) {
	dir := t.TempDir()
	i386 := filepath.Join(dir, "i386.o")
	if err := os.WriteFile(i386, elf32Object(), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "basic.o")
	copyFile(t, filepath.Join(testdataDir(), "gas", "x86_64", "basic.o"), obj)
	// An object whose .sframe has a damaged magic number.
	damaged := filepath.Join(dir, "damaged.o")
	if _, stderr, code := runCLI("-o", damaged, obj); code != exitOK {
		t.Fatalf("generate: %s", stderr)
	}
	ef, err := elf.Open(damaged)
	if err != nil {
		t.Fatal(err)
	}
	off := ef.Section(".sframe").Offset
	ef.Close()
	data, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	data[off] = 0
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"dump", damaged}, 1, "sframe-gen: " + damaged + ": section .sframe: offset 0x0: bad magic 0x00de\n"},
		{[]string{"stats", damaged}, 1, "sframe-gen: " + damaged + ": section .sframe: offset 0x0: bad magic 0x00de\n"},
		{[]string{i386}, 1, "sframe-gen: " + i386 + ": ELFCLASS32 EM_386: SFrame is only defined for 64-bit ABIs\n"},
		{[]string{"--raw", i386}, 1, "sframe-gen: " + i386 + ": ELFCLASS32 EM_386: SFrame is only defined for 64-bit ABIs\n"},
		{[]string{"stats", i386}, 1, "sframe-gen: " + i386 + ": ELFCLASS32 EM_386: SFrame is only defined for 64-bit ABIs\n"},
		{[]string{"--arch=x86_64", "-q", i386, obj}, 1, "sframe-gen: " + i386 + ": file is for ELFCLASS32 EM_386, not x86_64 (--arch)\n"},
		{[]string{"--arch=sparc", obj}, 2, "sframe-gen: --arch: unknown architecture \"sparc\" (want x86_64, aarch64, aarch64_be or s390x)\nTry 'sframe-gen --help' for more information.\n"},
		{[]string{"--arch=sparc", i386, obj}, 2, "sframe-gen: --arch: unknown architecture \"sparc\" (want x86_64, aarch64, aarch64_be or s390x)\n"},
	} {
		_, stderr, code := runCLI(tc.args...)
		if code != tc.code || !strings.HasPrefix(stderr, tc.stderr) {
			t.Errorf("sframe-gen %q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.stderr)
		}
		for _, pkg := range []string{"lower", "cfi", "elfpatch", "emit", "sframe", "verify", "sframegen"} {
			if strings.Contains(stderr, ": "+pkg+": ") || strings.HasPrefix(stderr, pkg+": ") {
				t.Errorf("sframe-gen %q names the package %s: %q", tc.args, pkg, stderr)
			}
		}
	}
}

// TestUsagePointsAtHelp checks that a command-line mistake points at the
// help that explains it: a command's own (sframe-gen help COMMAND) for a
// mistake in a command's arguments, sframe-gen --help otherwise; and that
// the command it names prints that help.
func TestUsagePointsAtHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		help string
	}{
		{[]string{"rows"}, "help rows"},
		{[]string{"dump", "--nope", "a", "b"}, "help dump"},
		{[]string{"verify", "--bogus", "x"}, "help verify"},
		{[]string{"stats"}, "help stats"},
		{[]string{"stack", "--pid", "1", "core"}, "help stack"},
		{[]string{"stack", "--pid", "x"}, "help stack"},
		{[]string{}, "--help"},
		{[]string{"--jobs", "0", "x"}, "--help"},
		{[]string{"help", "dump", "rows"}, "--help"},
	} {
		stdout, stderr, code := runCLI(tc.args...)
		want := "\nTry 'sframe-gen " + tc.help + "' for more information.\n"
		if code != exitUsage || stdout != "" || !strings.HasSuffix(stderr, want) || strings.Count(stderr, "\n") != 2 {
			t.Errorf("sframe-gen %s: exit %d, stdout %q, stderr %q; want exit 2 and one line then %q", strings.Join(tc.args, " "), code, stdout, stderr, want)
			continue
		}
		out, _, code := runCLI(strings.Fields(tc.help)...)
		if code != exitOK || !strings.HasPrefix(out, "Usage: sframe-gen") {
			t.Errorf("sframe-gen %s: exit %d, stdout %q; want its usage", tc.help, code, out)
		}
	}
}
