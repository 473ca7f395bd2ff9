package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/emit/stats"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// sframeSection returns the .sframe bytes of the ELF file at path.
func sframeSection(t *testing.T, path string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".sframe")
	if s == nil {
		t.Fatalf("%s: no .sframe", path)
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shareInputs returns the little-endian linked files of testdata/link
// and the system's C and C++ libraries, the files --share-fres is checked
// on.
func shareInputs(t *testing.T) []string {
	t.Helper()
	files, _ := linkedInputs(t)
	var out []string
	for _, p := range files {
		if !strings.Contains(p, "s390x") && !strings.Contains(p, "aarch64_be") {
			out = append(out, p)
		}
	}
	return append(out, sysfiles.CompilerLib(t, "gcc", "libc.so.6"), sysfiles.CompilerLib(t, "gcc", "libstdc++.so.6"))
}

// TestShareFREsConsumers generates each little-endian linked file of
// testdata/link and the system's libc and libstdc++ with --share-fres
// and checks the result with the real readers: GNU libsframe
// (sframe-lookup: sframe_decode, sframe_decoder_get_fre and
// sframe_find_fre at every FRE of every function) reads exactly what it
// reads in the section generated without the flag, and what emit.Decode
// reads; GNU objdump --sframe dumps the patched file as `sframe-gen dump`
// does, and as it dumps the file generated without the flag; `sframe-gen
// verify` (the CFI at every address, the Linux kernel's rules) finds no
// problem; the section is smaller, by the blocks it shares.
func TestShareFREsConsumers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs libsframe and objdump at every FRE of the system's libc and libstdc++ (make test-long)")
	}
	prog := libsframeLookup(t)
	dir := t.TempDir()
	saved := 0
	for i, p := range shareInputs(t) {
		arch := "x86_64"
		if strings.Contains(p, "aarch64") {
			arch = "aarch64"
		}
		objdump := sysfiles.GNURef.Tool(t, arch, "objdump")
		plain := filepath.Join(dir, fmt.Sprintf("%d.plain", i))
		shared := filepath.Join(dir, fmt.Sprintf("%d.shared", i))
		for _, args := range [][]string{{"--no-share-fres", "-o", plain, p}, {"-o", shared, p}} {
			if _, stderr, code := runCLI(args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
		}
		pb, sb := sframeSection(t, plain), sframeSection(t, shared)
		s, err := emit.Decode(sb)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(sb) > len(pb) || len(sb) < len(pb) && !s.Shares() {
			t.Errorf("%s: %d bytes shared, %d not (Shares %v)", p, len(sb), len(pb), s.Shares())
		}
		saved += len(pb) - len(sb)

		got := runLookup(t, prog, sb)
		if want := lookupText(s); got != want {
			t.Errorf("%s: libsframe (got) reads the shared section otherwise than emit.Decode (want):\n%s", p, firstDiff(want, got))
		}
		if want := runLookup(t, prog, pb); sansFREType(got) != sansFREType(want) {
			t.Errorf("%s: libsframe reads the shared section (got) otherwise than the unshared one (want), but for the FRE types:\n%s", p, firstDiff(want, got))
		}

		ours, stderr, code := runCLI("dump", shared)
		if code != 0 {
			t.Fatalf("dump %s: %s", shared, stderr)
		}
		gnu := objdumpSFrame(t, objdump, shared)
		if gnu != ours {
			t.Errorf("%s: objdump --sframe (got) and sframe-gen dump (want) differ:\n%s", p, firstDiff(ours, gnu))
		}
		if want := objdumpSFrame(t, objdump, plain); gnu != want {
			t.Errorf("%s: objdump --sframe of the shared section (got) and of the unshared one (want) differ:\n%s", p, firstDiff(want, gnu))
		}
		if out, stderr, code := runCLI("verify", shared); code != 0 {
			t.Errorf("verify %s (from %s): exit %d\n%s%s", shared, p, code, out, stderr)
		}
	}
	if saved == 0 {
		t.Error("no file had FRE data to share")
	}
}

// funcInfoRE matches the FRE type (the info byte's low digit) of
// sframe-lookup's and lookupText's function lines.
var funcInfoRE = regexp.MustCompile(`(?m)^(func .* info 0x.).`)

// sansFREType is the text of sframe-lookup with the functions' FRE types
// left out: the default narrows them (lower.Options.NarrowFREs), where
// --no-share-fres writes GNU's.
func sansFREType(text string) string { return funcInfoRE.ReplaceAllString(text, "${1}x") }

// sameButFREType says how the sections a and b differ, if they do, in
// anything but the functions' FRE types: their headers, functions and
// FREs.
func sameButFREType(a, b []byte) error {
	sa, err := emit.Decode(a)
	if err != nil {
		return err
	}
	sb, err := emit.Decode(b)
	if err != nil {
		return err
	}
	fa, errA := sa.Functions()
	fb, errB := sb.Functions()
	if errA != nil || errB != nil {
		return fmt.Errorf("%v, %v", errA, errB)
	}
	if sa.Header.Flags != sb.Header.Flags || sa.Header.ABI != sb.Header.ABI || len(fa) != len(fb) {
		return fmt.Errorf("headers or FDE counts differ (%d, %d FDEs)", len(fa), len(fb))
	}
	for i := range fa {
		x, y := fa[i], fb[i]
		if x.StartOffset != y.StartOffset || x.Size != y.Size || x.Info&^0xf != y.Info&^0xf || x.Info2 != y.Info2 ||
			x.RepSize != y.RepSize || fmt.Sprint(x.FREs) != fmt.Sprint(y.FREs) {
			return fmt.Errorf("FDE %d differs: %+v, %+v", i, x, y)
		}
	}
	return nil
}

// objdumpSFrame returns objdump --sframe's text for file, from the line
// "Contents of the SFrame section" on (what `sframe-gen dump` prints).
func objdumpSFrame(t *testing.T, objdump, file string) string {
	t.Helper()
	out, err := exec.Command(objdump, "--sframe", file).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump --sframe %s: %v\n%s", file, err, out)
	}
	s := string(out)
	k := strings.Index(s, "Contents of the SFrame section")
	if k < 0 {
		t.Fatalf("objdump --sframe %s: no SFrame section dumped:\n%s", file, s)
	}
	return s[k:]
}

// TestShareFREsLinkObjects generates compiled objects of x86-64 and
// AArch64 with and without --share-fres, and with the default (unshared
// for objects), and links each into an executable
// (undefined symbols ignored) with the GNU
// reference ld, which reads every input .sframe with libsframe and merges
// it: the linked sections must hold the same functions and FREs (ld keeps
// the default's narrower FRE types, so no more bytes), and objdump must
// dump the shared objects as `sframe-gen dump` does.
func TestShareFREsLinkObjects(t *testing.T) {
	dir := t.TempDir()
	n := 0
	for _, arch := range []string{"x86_64", "aarch64"} {
		ld := sysfiles.GNURef.Tool(t, arch, "ld")
		objdump := sysfiles.GNURef.Tool(t, arch, "objdump")
		objcopy := sysfiles.GNURef.Tool(t, arch, "objcopy")
		objs, _ := filepath.Glob(filepath.Join(testdataDir(), "cc", arch, "*", "*.o"))
		for _, o := range objs {
			if strings.HasSuffix(o, ".gs.o") || bigEndian(t, o) {
				continue
			}
			var linked [2][]byte
			for k, share := range []bool{false, true} {
				obj := filepath.Join(dir, fmt.Sprintf("%d-%d.o", n, k))
				args := []string{"-o", obj, o}
				if share {
					args = append([]string{"--share-fres"}, args...)
				} else {
					args = append([]string{"--no-share-fres"}, args...)
				}
				if _, stderr, code := runCLI(args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, stderr)
				}
				if share {
					ours, stderr, code := runCLI("dump", obj)
					if code != 0 {
						t.Fatalf("dump %s: %s", obj, stderr)
					}
					if gnu := objdumpSFrame(t, objdump, obj); gnu != ours {
						t.Errorf("%s: objdump --sframe (got) and sframe-gen dump (want) differ:\n%s", o, firstDiff(ours, gnu))
					}
					if out, stderr, code := runCLI("verify", obj); code != 0 {
						t.Errorf("verify %s (from %s): exit %d\n%s%s", obj, o, code, out, stderr)
					}
				}
				so := filepath.Join(dir, fmt.Sprintf("%d-%d.exe", n, k))
				if out, err := exec.Command(ld, "-e", "0", "--unresolved-symbols=ignore-all", "-o", so, obj).CombinedOutput(); err != nil {
					t.Fatalf("%s: ld: %v\n%s", obj, err, out)
				}
				linked[k] = sframeSection(t, so)
			}
			if err := sameButFREType(linked[0], linked[1]); err != nil || len(linked[1]) > len(linked[0]) {
				t.Errorf("%s: ld links the shared object's .sframe into other functions (%d bytes, unshared %d): %v", o, len(linked[1]), len(linked[0]), err)
			}
			// The default writes an object as GNU does (one block per
			// function): ld lays its output out for the size of the input
			// blocks and writes them unshared, so an object with shared
			// blocks links into a file whose sections after .sframe are
			// overwritten (a corrupt symbol table). The default's link
			// must read back whole.
			def := filepath.Join(dir, fmt.Sprintf("%d-default.o", n))
			if _, stderr, code := runCLI("-o", def, o); code != 0 {
				t.Fatalf("-o %s %s: exit %d: %s", def, o, code, stderr)
			}
			if a, b := readFile(t, def), readFile(t, filepath.Join(dir, fmt.Sprintf("%d-0.o", n))); !bytes.Equal(a, b) {
				t.Errorf("%s: the default's object differs from --no-share-fres's", o)
			}
			exe := filepath.Join(dir, fmt.Sprintf("%d-default.exe", n))
			if out, err := exec.Command(ld, "-e", "0", "--unresolved-symbols=ignore-all", "-o", exe, def).CombinedOutput(); err != nil {
				t.Fatalf("%s: ld: %v\n%s", def, err, out)
			}
			if out, err := exec.Command(objcopy, exe, exe+".copy").CombinedOutput(); err != nil {
				t.Errorf("%s: the default's object links into a file objcopy cannot read: %v\n%s", o, err, out)
			}
			n++
		}
	}
	if n < 8 {
		t.Errorf("only %d objects linked", n)
	}
}

// TestShareFREsBigEndian checks that --share-fres refuses a big-endian
// file (GNU libsframe on a little-endian host cannot read its shared
// blocks) and that verify reports a big-endian section that shares
// blocks all the same.
func TestShareFREsBigEndian(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(testdataDir(), "link", "s390x", "*.gs.so"))
	if len(files) == 0 {
		t.Fatal("no s390x linked golden")
	}
	in := files[0]
	out := filepath.Join(dir, "out")
	_, stderr, code := runCLI("--share-fres", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, "--share-fres: the file is big-endian") {
		t.Errorf("--share-fres on %s: exit %d, %q", in, code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("--share-fres on %s wrote %s", in, out)
	}
	// By default a big-endian file is written without sharing, without
	// an error, and -v says why.
	_, stderr, code = runCLI("-v", "-o", out, in)
	if code != 0 || !strings.Contains(stderr, "one block of FREs per function: big-endian file") {
		t.Errorf("default on %s: exit %d, %q", in, code, stderr)
	}
	if st := statsOf(t, out); st.SharedFDEs != 0 {
		t.Errorf("default on %s: %d FDEs share", in, st.SharedFDEs)
	}
	// GNU ld's section of the file, its blocks shared, written back over
	// it (zero padding after it).
	f, err := elf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".sframe")
	b, err := sec.Data()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := emit.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.ShareFREs()
	if err != nil || n == 0 {
		t.Fatalf("ShareFREs: %d shared, %v", n, err)
	}
	sb, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	copy(data[sec.Offset:sec.Offset+sec.Size], make([]byte, sec.Size))
	copy(data[sec.Offset:], sb)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := runCLI("verify", out)
	if code != 1 || !strings.Contains(stdout, "big-endian section whose functions share FRE data") {
		t.Errorf("verify of a shared s390x section: exit %d\n%s", code, stdout)
	}
}

// bigEndian reports whether the ELF file at path is big-endian.
func bigEndian(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.ByteOrder == binary.BigEndian
}

// TestShareFREsStats checks what stats reports of sharing: on a file
// generated without --share-fres, the FDEs that repeat an earlier one's
// FRE data and what sharing them saves (the size --share-fres writes),
// none shared; on the same file generated with it, all of them shared
// and the section of the size announced.
func TestShareFREsStats(t *testing.T) {
	dir := t.TempDir()
	checked := 0
	for i, p := range shareInputs(t) {
		plain := filepath.Join(dir, fmt.Sprintf("%d.plain", i))
		shared := filepath.Join(dir, fmt.Sprintf("%d.shared", i))
		for _, args := range [][]string{{"--no-share-fres", "-o", plain, p}, {"-o", shared, p}} {
			if _, stderr, code := runCLI(args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
		}
		var st [2]stats.Stats
		for k, f := range []string{plain, shared} {
			out, stderr, code := runCLI("stats", "--json", f)
			if code != 0 {
				t.Fatalf("stats %s: %s", f, stderr)
			}
			if err := json.Unmarshal([]byte(out), &st[k]); err != nil {
				t.Fatal(err)
			}
		}
		a, b := st[0], st[1]
		// The plain file is GNU's form; the shared one narrows the FRE
		// types too: what it saves over the plain one is the narrowing
		// and the blocks the plain one repeats (in their narrowed form).
		if a.SharedFDEs != 0 || a.SectionBytes != a.UnsharedBytes || a.Breakdown.SharingSaved != 0 || a.Breakdown.NarrowingSaved != 0 {
			t.Errorf("%s without --share-fres: %+v", p, a)
		}
		if b.SharedFDEs != a.RepeatedFDEs || b.RepeatedFDEs != a.RepeatedFDEs || b.SectionBytes != a.SharedBytes ||
			b.UnsharedBytes != a.UnsharedBytes || b.SharedBytes != a.SharedBytes || b.Breakdown.SharingSaved != a.RepeatedBytes ||
			b.Breakdown.SharingSaved+b.Breakdown.NarrowingSaved != a.UnsharedBytes-b.SectionBytes {
			t.Errorf("%s with --share-fres: %+v; without: %+v", p, b, a)
		}
		if a.RepeatedFDEs > 0 {
			checked++
		}
	}
	if checked < 3 {
		t.Errorf("only %d files with FRE data to share", checked)
	}
}

// TestShareFREsV2 generates version 2 sections (both layouts) with and
// without --share-fres and has the GNU tools that read each layout dump
// them (binutils 2.44 for the 2.44 layout, the reference for 2.45): the
// dumps of the shared and unshared files are the same and come without a
// warning, verify finds no problem, and the shared section is smaller.
func TestShareFREsV2(t *testing.T) {
	dir := t.TempDir()
	inputs := []struct{ arch, file string }{
		{"x86_64", "link/x86_64/leveldb.exe"},
		{"x86_64", "link/x86_64/lazy.so"},
		{"aarch64", "link/aarch64/tree-sitter.exe"},
		{"x86_64", "cc/x86_64/O2/tree-sitter.o"},
	}
	for k, in := range inputs {
		for _, layout := range []string{"2.44", "2.45"} {
			objdump := sysfiles.GNURef.Tool(t, in.arch, "objdump")
			if layout == "2.44" {
				objdump = sysfiles.GNUOld.Tool(t, in.arch, "objdump")
			}
			var dumps [2]string
			var sizes [2]int
			for j, share := range []bool{false, true} {
				out := filepath.Join(dir, fmt.Sprintf("%d-%s-%d", k, layout, j))
				args := []string{"--sframe-version", "2", "--v2-layout", layout, "-o", out, filepath.Join(testdataDir(), in.file)}
				if share {
					args = append([]string{"--share-fres"}, args...)
				} else {
					args = append([]string{"--no-share-fres"}, args...)
				}
				if _, stderr, code := runCLI(args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, stderr)
				}
				var o, e bytes.Buffer
				cmd := exec.Command(objdump, "--sframe", out)
				cmd.Stdout, cmd.Stderr = &o, &e
				if err := cmd.Run(); err != nil || e.Len() > 0 {
					t.Fatalf("%s --sframe %s: %v: %s", objdump, out, err, e.String())
				}
				dumps[j], sizes[j] = o.String()[strings.Index(o.String(), "Contents of the SFrame"):], len(sframeSection(t, out))
				if share {
					if stdout, _, code := runCLI("verify", out); code != 0 {
						t.Errorf("verify %s: exit %d\n%s", out, code, stdout)
					}
				}
			}
			if dumps[0] != dumps[1] {
				t.Errorf("%s (%s): objdump dumps the shared section (got) otherwise than the unshared one (want):\n%s", in.file, layout, firstDiff(dumps[0], dumps[1]))
			}
			if sizes[1] >= sizes[0] {
				t.Errorf("%s (%s): shared section of %d bytes, unshared %d", in.file, layout, sizes[1], sizes[0])
			}
		}
	}
}

// TestSharedDefaultRewritesOnce: a linked file patched with one block per
// function (the default before sharing was) is not up to date for the
// default: the next run rewrites it once, with shared blocks, and the run
// after it writes nothing. (An object's default is one block per
// function.)
func TestSharedDefaultRewritesOnce(t *testing.T) {
	dir := t.TempDir()
	for _, from := range []string{"link/x86_64/leveldb.exe", "link/aarch64/tree-sitter.exe"} {
		p := filepath.Join(dir, filepath.Base(from))
		copyFile(t, filepath.Join(testdataDir(), from), p)
		if _, stderr, code := runCLI("--no-share-fres", p); code != 0 {
			t.Fatalf("%s: %s", from, stderr)
		}
		unshared := readFile(t, p)
		rep := filepath.Join(dir, "report")
		for run, want := range []string{"patched", "up-to-date"} {
			if _, stderr, code := runCLI("-q", "--report", rep, p); code != 0 {
				t.Fatalf("%s run %d: %s", from, run, stderr)
			}
			if got := readReport(t, rep)[0].Status; got != want {
				t.Errorf("%s run %d: %s, want %s", from, run, got, want)
			}
		}
		if bytes.Equal(readFile(t, p), unshared) {
			t.Errorf("%s: not rewritten with shared blocks", from)
		}
		if st := statsOf(t, p); st.SharedFDEs == 0 {
			t.Errorf("%s: no FDE shares after the default run", from)
		}
	}
}
