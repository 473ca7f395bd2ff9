package cfi

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestCompiledFrames compiles testdata/prog.c (and exc.cc) with the native
// and cross compilers and compares our rows with readelf's tables.
func TestCompiledFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles programs (runs in make test-long)")
	}
	sysfiles.GNURef.Tool(t, "x86_64", "readelf")
	type build struct {
		name, cc string
		args     []string
		src      Source
	}
	linkX86 := []string{"-B", sysfiles.GNURef.GCC(t, "x86_64")}
	linkA64 := []string{"-B", sysfiles.GNURef.GCC(t, "aarch64")}
	linkS390 := []string{"-B", sysfiles.GNURef.GCC(t, "s390x")}
	noEH := []string{"-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"}
	builds := []build{
		{"x86_64-O0.o", "gcc", []string{"-O0", "-c"}, Auto},
		{"x86_64-O2.o", "gcc", []string{"-O2", "-c"}, Auto},
		{"x86_64-Os.o", "gcc", []string{"-Os", "-c"}, Auto},
		{"x86_64-O2-fs.o", "gcc", []string{"-O2", "-c", "-ffunction-sections"}, Auto},
		{"x86_64-O2-debug.o", "gcc", append([]string{"-O2", "-c"}, noEH...), DebugFrame},
		{"x86_64-O2.exe", "gcc", append([]string{"-O2"}, linkX86...), Auto},
		{"x86_64-O0.exe", "gcc", append([]string{"-O0"}, linkX86...), Auto},
		{"x86_64-O2-debug.exe", "gcc", append(append([]string{"-O2"}, noEH...), linkX86...), DebugFrame},
		{"x86_64-exc.o", "g++", []string{"-O2", "-c"}, Auto},
		{"x86_64-exc.exe", "g++", append([]string{"-O2"}, linkX86...), Auto},
		{"aarch64-O2.o", "aarch64-linux-gnu-gcc", []string{"-O2", "-c"}, Auto},
		{"aarch64-O0.o", "aarch64-linux-gnu-gcc", []string{"-O0", "-c"}, Auto},
		{"aarch64-pac-b.o", "aarch64-linux-gnu-gcc", []string{"-O2", "-c", "-mbranch-protection=pac-ret+b-key"}, Auto},
		{"aarch64-pac-b.exe", "aarch64-linux-gnu-gcc", append([]string{"-O2", "-mbranch-protection=pac-ret+b-key"}, linkA64...), Auto},
		{"aarch64-O2-debug.o", "aarch64-linux-gnu-gcc", append([]string{"-O2", "-c"}, noEH...), DebugFrame},
		{"s390x-O2.o", "s390x-linux-gnu-gcc", []string{"-O2", "-c"}, Auto},
		{"s390x-Os.o", "s390x-linux-gnu-gcc", []string{"-Os", "-c"}, Auto},
		{"s390x-O2.exe", "s390x-linux-gnu-gcc", append([]string{"-O2"}, linkS390...), Auto},
		{"s390x-O2-debug.o", "s390x-linux-gnu-gcc", append([]string{"-O2", "-c"}, noEH...), DebugFrame},
	}
	dir := t.TempDir()
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			sysfiles.NeedProgram(t, b.cc)
			src := "testdata/prog.c"
			if b.cc == "g++" {
				src = "testdata/exc.cc"
			}
			out := filepath.Join(dir, b.name)
			args := append(append([]string{}, b.args...), "-o", out, src)
			if msg, err := exec.Command(b.cc, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", b.cc, strings.Join(args, " "), err, msg)
			}
			n := checkFileAgainst(t, out, "", b.src)
			if n == 0 {
				t.Errorf("no rows compared")
			}
			t.Logf("%d rows", n)
			if strings.Contains(b.name, "pac-b") {
				checkPAC(t, out)
			}
		})
	}
}

// checkPAC checks that pac-ret+b-key code has 'B' CIEs and rows with the
// return address signed (readelf's table does not show that state).
func checkPAC(t *testing.T, path string) {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := Read(f, EHFrame)
	if err != nil {
		t.Fatal(err)
	}
	bkey, mangled, unmangledAtEnd := 0, 0, 0
	for _, fde := range fr.FDEs {
		if fde.CIE.BKey {
			bkey++
		}
		var last *Row
		it := fr.Rows(fde)
		for r, err := it.Next(); err == nil; r, err = it.Next() {
			if r.RAMangled {
				mangled++
			}
			last = r
		}
		if last != nil && !last.RAMangled {
			unmangledAtEnd++
		}
	}
	if bkey == 0 || mangled == 0 || unmangledAtEnd == 0 {
		t.Errorf("B-key FDEs %d, rows with a signed RA %d, FDEs ending unsigned %d", bkey, mangled, unmangledAtEnd)
	}
}

// TestSystemFrames compares the .eh_frame of installed binaries: ls and
// the libstdc++ gcc links (sysfiles_test.go finds them).
func TestSystemFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads large files (runs in make test-long)")
	}
	sysfiles.GNURef.Tool(t, "x86_64", "readelf")
	for _, p := range []string{sysfiles.PathProgram(t, "ls"), sysfiles.CompilerLib(t, "gcc", "libstdc++.so.6")} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			n := checkFileAgainst(t, p, "", EHFrame)
			if n == 0 {
				t.Errorf("no rows compared")
			}
			t.Logf("%d rows", n)
		})
	}
}

// TestGoBinary builds a Go program (whose .debug_frame the linker
// compresses) and compares its rows with readelf's.
func TestGoBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a Go program (runs in make test-long)")
	}
	sysfiles.GNURef.Tool(t, "x86_64", "readelf")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	prog := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, goarch := range []string{"amd64", "arm64"} {
		t.Run(goarch, func(t *testing.T) {
			out := filepath.Join(dir, "hello-"+goarch)
			cmd := exec.Command(gobin, "build", "-o", out, ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, msg)
			}
			n := checkFileAgainst(t, out, "", DebugFrame)
			if n == 0 {
				t.Errorf("no rows compared")
			}
			t.Logf("%d rows", n)
		})
	}
}

// TestCompressedDebugFrame compresses a .debug_frame with objcopy (the
// old .zdebug_frame form, SHF_COMPRESSED zlib and zstd) and compares the
// rows with readelf's.
func TestCompressedDebugFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles programs (runs in make test-long)")
	}
	sysfiles.GNURef.Tool(t, "x86_64", "readelf")
	objcopy := sysfiles.NeedProgram(t, "objcopy")
	sysfiles.NeedProgram(t, "gcc")
	dir := t.TempDir()
	exe := filepath.Join(dir, "dbg.exe")
	args := []string{"-O2", "-g", "-fno-asynchronous-unwind-tables", "-B", sysfiles.GNURef.GCC(t, "x86_64"), "-o", exe, "testdata/prog.c"}
	if msg, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	for _, mode := range []string{"zlib-gnu", "zlib", "zstd"} {
		t.Run(mode, func(t *testing.T) {
			out := filepath.Join(dir, "dbg-"+mode)
			if msg, err := exec.Command(objcopy, "--compress-debug-sections="+mode, exe, out).CombinedOutput(); err != nil {
				sysfiles.NeedInput(t, "objcopy --compress-debug-sections=%s: %v: %s: %s", mode, err, bytes.TrimSpace(msg), sysfiles.InstallHint("objcopy"))
			}
			f, err := elf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			compressed := f.Section(".zdebug_frame") != nil
			if s := f.Section(".debug_frame"); s != nil && s.Flags&elf.SHF_COMPRESSED != 0 {
				compressed = true
			}
			f.Close()
			if !compressed {
				t.Fatalf("objcopy left .debug_frame uncompressed")
			}
			if n := checkFileAgainst(t, out, "", DebugFrame); n == 0 {
				t.Errorf("no rows compared")
			}
			checkForgedSize(t, out)
		})
	}
}

// checkForgedSize makes the compressed section claim 64 GB and expects
// Read to refuse it rather than try.
func checkForgedSize(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Section(".zdebug_frame"); s != nil {
		binary.BigEndian.PutUint64(data[s.Offset+4:], 1<<36)
	} else {
		s := f.Section(".debug_frame")
		f.ByteOrder.PutUint64(data[s.Offset+8:], 1<<36) // Elf64_Chdr.ch_size
	}
	f, err = elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(f, DebugFrame); err == nil || !strings.Contains(err.Error(), "compressed section claims 68719476736 bytes") {
		t.Errorf("forged size: %v", err)
	}
}

// TestCCObjects compares the compiled C/C++ objects of testdata/cc (real
// projects: leveldb, tree-sitter; several arches and options) with
// readelf run now, when no golden .frames file is beside them.
func TestCCObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs readelf on many files (runs in make test-long)")
	}
	files, _ := filepath.Glob("../testdata/cc/*/*/*.o")
	n := 0
	for _, path := range files {
		base := strings.TrimSuffix(path, ".o")
		if strings.HasSuffix(base, ".gs") {
			continue
		}
		if _, err := os.Stat(base + ".frames"); err == nil {
			continue // TestGoldenFrames covers it
		}
		sysfiles.GNURef.Tool(t, "x86_64", "readelf")
		t.Run(strings.TrimPrefix(base, "../testdata/cc/"), func(t *testing.T) {
			n += checkFileAgainst(t, path, "", Auto)
		})
	}
	t.Logf("%d files, %d rows", len(files), n)
}

// TestI386Object assembles a 32-bit object: 4-byte addresses and REL
// relocations (R_386_PC32, addend in place).
func TestI386Object(t *testing.T) {
	as := sysfiles.GNURef.Tool(t, "x86_64", "as")
	sysfiles.GNURef.Tool(t, "x86_64", "readelf")
	dir := t.TempDir()
	src := filepath.Join(dir, "t32.s")
	asm := `	.text
f:
	.cfi_startproc
	pushl %ebp
	.cfi_def_cfa_offset 8
	.cfi_offset 5, -8
	movl %esp, %ebp
	.cfi_def_cfa_register 5
	.cfi_remember_state
	popl %ebp
	.cfi_def_cfa 4, 4
	ret
	.cfi_restore_state
	nop
	.cfi_endproc
	.section .text.g,"ax",@progbits
g:
	.cfi_startproc
	subl $12, %esp
	.cfi_adjust_cfa_offset 12
	addl $12, %esp
	.cfi_adjust_cfa_offset -12
	ret
	.cfi_endproc
`
	if err := os.WriteFile(src, []byte(asm), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "t32.o")
	if msg, err := exec.Command(as, "--32", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("as --32: %v\n%s", err, msg)
	}
	if n := checkFileAgainst(t, obj, "", EHFrame); n < 6 {
		t.Errorf("%d rows compared", n)
	}
}
