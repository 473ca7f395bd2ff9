package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// objectPairs returns every object assembled or compiled without
// --gsframe that has the objdump --sframe text of its --gsframe twin.
func objectPairs(t *testing.T) [][2]string {
	var pairs [][2]string
	for _, pat := range []string{"gas/*/*.o", "cc/*/*/*.o", "link/*/*.o"} {
		m, _ := filepath.Glob(filepath.Join(testdataDir(), pat))
		for _, o := range m {
			if strings.HasSuffix(o, ".gs.o") {
				continue
			}
			golden := strings.TrimSuffix(o, ".o") + ".gs.objdump"
			if _, err := os.Stat(golden); err == nil {
				pairs = append(pairs, [2]string{o, golden})
			}
		}
	}
	if len(pairs) < 20 {
		t.Fatalf("found %d object/golden pairs under %s; expected the committed golden files", len(pairs), testdataDir())
	}
	return pairs
}

// TestGenerateObjects runs the CLI with --gas-compat on every object
// assembled or compiled without --gsframe and checks that the dump of the
// patched object equals objdump --sframe of its twin made with --gsframe.
func TestGenerateObjects(t *testing.T) {
	dir := t.TempDir()
	for i, p := range objectPairs(t) {
		in, golden := p[0], p[1]
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if labelDropped(t, in) {
			continue
		}
		out := filepath.Join(dir, fmt.Sprintf("%d.o", i))
		_, stderr, code := runCLI("--gas-compat", "-o", out, in)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", in, code, stderr)
			continue
		}
		got, stderr, code := runCLI("dump", out)
		if len(want) == 0 {
			// gas made no .sframe: the file has no function at all.
			if code == 0 {
				t.Errorf("%s: gas made no .sframe, we did:\n%s", in, got)
			}
			continue
		}
		if code != 0 {
			t.Errorf("%s: dump: exit %d: %s", in, code, stderr)
			continue
		}
		if got != string(want) {
			t.Errorf("%s: dump differs from %s\n%s", in, golden, firstDiff(string(want), got))
		}
	}
}

// TestGenerateObjectsDefault runs the CLI in the default (correct) mode on
// the same objects: the output verifies with no problem, and where GNU's
// twin verifies too, the dump equals objdump --sframe of the twin (we only
// deviate from gas where gas's SFrame does not mean the CFI; lower's
// TestCorrectGolden checks that function by function).
func TestGenerateObjectsDefault(t *testing.T) {
	dir := t.TempDir()
	same, differ, wholeSame := 0, 0, 0
	for i, p := range objectPairs(t) {
		in, golden := p[0], p[1]
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || labelDropped(t, in) {
			continue // no CFI: nothing generated (TestGenerateObjects)
		}
		out := filepath.Join(dir, fmt.Sprintf("%d.o", i))
		if _, stderr, code := runCLI("-o", out, in); code != 0 {
			t.Errorf("%s: exit %d: %s", in, code, stderr)
			continue
		}
		if msg, _, code := runCLI("verify", out); code != exitOK {
			t.Errorf("%s: default-mode output does not verify (exit %d):\n%s", in, code, msg)
		}
		got, stderr, code := runCLI("dump", out)
		if code != 0 {
			t.Errorf("%s: dump: exit %d: %s", in, code, stderr)
			continue
		}
		if got == string(want) {
			same++
			// One layout rule in both modes: where the section's
			// bytes are gas's, the whole object is (ld -r's aside).
			twin := strings.TrimSuffix(in, ".o") + ".gs.o"
			if !ldRelocatable(in) && bytes.Equal(sectionBytes(t, out, ".sframe"), sectionBytes(t, twin, ".sframe")) {
				wholeSame++
				a, _ := os.ReadFile(out)
				b, _ := os.ReadFile(twin)
				if !bytes.Equal(a, b) {
					t.Errorf("%s: .sframe equal to gas's, but the object is not %s", in, twin)
				}
			}
			continue
		}
		differ++
		twin := strings.TrimSuffix(in, ".o") + ".gs.o"
		if _, _, code := runCLI("verify", twin); code == exitOK {
			t.Errorf("%s: differs from gas, whose output verifies\n%s", in, firstDiff(string(want), got))
		}
	}
	t.Logf("%d objects identical to gas's, %d differ (gas's does not verify); %d with gas's bytes, the whole object gas's", same, differ, wholeSame)
}

// labelDropped reports an object in which gas dropped a function for a
// .cfi_label, which leaves no trace in .eh_frame: we keep the function
// (docs/lower.md, "Where .eh_frame cannot tell what gas saw").
func labelDropped(t *testing.T, obj string) bool {
	w, _ := os.ReadFile(strings.TrimSuffix(obj, ".o") + ".gs.warnings")
	if bytes.Contains(w, []byte("CFI insn CFI_label (0x106)")) {
		t.Logf("%s: known divergence: gas dropped a function for .cfi_label", obj)
		return true
	}
	return false
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return "(equal)"
}

// linkedPair is a linked file built without SFrame and its GNU ld twin.
type linkedPair struct {
	arch       string
	plain, gnu string
}

func linkedPairs(t *testing.T) []linkedPair {
	var out []linkedPair
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		for _, pat := range []string{"*.so", "*.exe"} {
			m, _ := filepath.Glob(filepath.Join(testdataDir(), "link", arch, pat))
			for _, f := range m {
				if strings.Contains(filepath.Base(f), ".gs.") {
					continue
				}
				ext := filepath.Ext(f)
				gnu := strings.TrimSuffix(f, ext) + ".gs" + ext
				if _, err := os.Stat(gnu); err == nil {
					out = append(out, linkedPair{arch, f, gnu})
				}
			}
		}
	}
	if len(out) < 9 {
		t.Fatalf("found %d linked golden pairs; expected the committed files", len(out))
	}
	return out
}

// fdeKey names a function by where it is: its section and the offset in it.
// The twins' code is identical, but sections may sit at other addresses.
type fdeKey struct {
	section string
	offset  uint64
}

// sframeFDEs decodes a linked file's .sframe and keys its FDEs. For GNU
// ld's output (gnu), FDEs of size 0 are left out: ld keeps an empty
// function's FDE at the next function's start (the kernel refuses such a
// section; verify reports it), and its .eh_frame, which we read, has none.
func sframeFDEs(t *testing.T, path string, gnu bool) (map[fdeKey]emit.FDE, *elf.File) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s := f.Section(".sframe")
	if s == nil {
		t.Fatalf("%s: no .sframe", path)
	}
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	sec, err := emit.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if sec.Header.Flags != emit.FlagFDESorted|emit.FlagFDEFuncStartPCRel {
		t.Errorf("%s: flags %v, want SORTED|PCREL", path, sec.Header.Flags)
	}
	out := map[fdeKey]emit.FDE{}
	var prev uint64
	fdes, err := sec.Functions()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for i, fde := range fdes {
		start := sec.FuncStart(i, s.Addr)
		if gnu && fde.Size == 0 {
			continue
		}
		if i > 0 && start <= prev {
			t.Errorf("%s: FDE %d start %#x not above the previous %#x", path, i, start, prev)
		}
		prev = start
		key := fdeKey{offset: start}
		for _, ts := range f.Sections {
			if ts.Flags&elf.SHF_EXECINSTR != 0 && start >= ts.Addr && start < ts.Addr+ts.Size {
				key = fdeKey{ts.Name, start - ts.Addr}
			}
		}
		fde.StartOffset, fde.FREOffset = 0, 0
		out[key] = fde
	}
	return out, f
}

// TestGenerateLinked patches (--gas-compat) every linked golden file built
// without SFrame and checks: every function GNU ld describes in the twin has an identical
// FDE and FREs in ours (PLT included), the result passes readelf without
// warnings, a second run changes nothing, and the program still runs.
func TestGenerateLinked(t *testing.T) {
	dir := t.TempDir()
	for _, p := range linkedPairs(t) {
		t.Run(p.arch+"/"+filepath.Base(p.plain), func(t *testing.T) {
			out := filepath.Join(dir, p.arch+"-"+filepath.Base(p.plain))
			if _, stderr, code := runCLI("--gas-compat", "-o", out, p.plain); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			ours, _ := sframeFDEs(t, out, false)
			gnu, _ := sframeFDEs(t, p.gnu, true)
			for key, want := range gnu {
				got, ok := ours[key]
				if !ok {
					t.Errorf("GNU ld has an FDE for %s+%#x, we do not", key.section, key.offset)
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("FDE for %s+%#x differs:\n  GNU  %+v\n  ours %+v", key.section, key.offset, want, got)
				}
			}

			readelf := sysfiles.GNURef.Tool(t, p.arch, "readelf")
			for _, opt := range []string{"-lW", "-SW"} {
				msg, err := exec.Command(readelf, opt, out).CombinedOutput()
				if err != nil || bytes.Contains(bytes.ToLower(msg), []byte("warning")) {
					t.Errorf("readelf %s: %v\n%s", opt, err, msg)
				}
			}

			again := out + ".again"
			if _, stderr, code := runCLI("--gas-compat", "-o", again, out); code != 0 {
				t.Fatalf("second run: exit %d: %s", code, stderr)
			}
			a, _ := os.ReadFile(out)
			b, _ := os.ReadFile(again)
			if !bytes.Equal(a, b) {
				t.Errorf("a second run on our output changed it")
			}
		})
	}
}

// TestGeneratedProgramsRun runs the patched executables against the patched
// library (natively or under qemu-user) and compares their output with the
// unpatched build's.
func TestGeneratedProgramsRun(t *testing.T) {
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			var runner []string
			switch {
			case arch == "x86_64" && runtime.GOARCH == "amd64":
			default:
				runner = []string{sysfiles.NeedProgram(t, "qemu-"+arch), "-L", qemuPrefix(t, arch)}
			}
			src := filepath.Join(testdataDir(), "link", arch)
			run := func(libdir, exe string) string {
				args := append(append([]string{}, runner...), exe, "3")
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libdir)
				if len(runner) > 0 {
					cmd.Args = append([]string{args[0], "-E", "LD_LIBRARY_PATH=" + libdir}, args[1:]...)
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("%s: %v\n%s", exe, err, out)
				}
				return string(out)
			}
			plainLib, patchedLib := t.TempDir(), t.TempDir()
			copyFile(t, filepath.Join(src, "lazy.so"), filepath.Join(plainLib, "libdemo.so"))
			if _, stderr, code := runCLI("-o", filepath.Join(patchedLib, "libdemo.so"), filepath.Join(src, "lazy.so")); code != 0 {
				t.Fatalf("lazy.so: exit %d: %s", code, stderr)
			}
			for _, exe := range []string{"pie.exe", "nopie.exe"} {
				patched := filepath.Join(patchedLib, exe)
				if _, stderr, code := runCLI("-o", patched, filepath.Join(src, exe)); code != 0 {
					t.Fatalf("%s: exit %d: %s", exe, code, stderr)
				}
				want := run(plainLib, filepath.Join(src, exe))
				got := run(patchedLib, patched)
				if want == "" || got != want {
					t.Errorf("%s: patched output %q, unpatched %q", exe, got, want)
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
