package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/elfpatch"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestSparseInput: a 16 KB executable padded with a hole, to 1 GiB (a
// hostile input costing nothing on disk) or to 120 KiB (small enough to be
// read whole and patched in memory), must not make generate write the
// hole: the output keeps it, with -o and in place.
func TestSparseInput(t *testing.T) {
	for _, size := range []int64{1 << 30, 120 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { testSparseInput(t, size) })
	}
}

func testSparseInput(t *testing.T, size int64) {
	dir := t.TempDir()
	in := filepath.Join(dir, "big.exe")
	data, err := os.ReadFile(filepath.Join(testdataDir(), "link/x86_64/pie.exe"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(in, size); err != nil {
		t.Fatal(err)
	}
	// Written, the hole would take at least the bytes past the data.
	limit := min(int64(1<<20), (size-int64(len(data)))/2)
	if b := diskBytes(t, in); b > limit {
		t.Skipf("the file system does not keep holes (%d bytes on disk)", b)
	}
	out := filepath.Join(dir, "out.exe")
	for _, args := range [][]string{{"-o", out, in}, {in}} {
		_, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		p := args[len(args)-1]
		if len(args) == 3 {
			p = out
		}
		if b := diskBytes(t, p); b > limit {
			t.Errorf("%v: output uses %d KiB on disk: the hole was written", args, b>>10)
		}
		if st, err := os.Stat(p); err != nil || st.Size() < size {
			t.Errorf("%v: output size %v, %v", args, st.Size(), err)
		}
		if _, stderr, code := runCLI("dump", p); code != exitOK {
			t.Errorf("dump %s: exit %d: %s", p, code, stderr)
		}
	}
}

func diskBytes(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no Stat_t")
	}
	return s.Blocks * 512
}

// sparseArchive writes an archive holding an object with CFI and a member
// of hole bytes left as a hole, and returns its path.
func sparseArchive(t *testing.T, dir, name string, hole int64) string {
	t.Helper()
	obj, err := os.ReadFile(filepath.Join(testdataDir(), "gas/x86_64/debugframe.o"))
	if err != nil {
		t.Fatal(err)
	}
	header := func(name string, size int64) string {
		return fmt.Sprintf("%-16s%-12d%-6d%-6d%-8o%-10d`\n", name+"/", 0, 0, 0, 0o644, size)
	}
	a := elfpatch.ArchiveMagic + header("debugframe.o", int64(len(obj))) + string(obj)
	if len(obj)%2 != 0 {
		a += "\n"
	}
	a += header("zeros.bin", hole)
	p := writeFile(t, dir, name, []byte(a), hole)
	if b := diskBytes(t, p); b > 1<<20 {
		t.Skipf("the file system does not keep holes (%d bytes on disk)", b)
	}
	return p
}

// TestSparseArchive: an archive with a 64 MiB hole, patched in both forms,
// comes out with the hole kept (it was written whole: 64 MiB on disk);
// one of 4 GiB is refused before it is read, with the same message in
// both forms (it took 8.4 GB and 50 s, and came out 4 GiB on disk).
func TestSparseArchive(t *testing.T) {
	dir := t.TempDir()
	in := sparseArchive(t, dir, "lib.a", 64<<20)
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{{"-o", filepath.Join(dir, "lib-o.a"), in}, {"-q", "--output-dir", out, in}} {
		_, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, p := range []string{filepath.Join(dir, "lib-o.a"), filepath.Join(out, "lib.a")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if b := diskBytes(t, p); b > 1<<20 || st.Size() < 64<<20 {
			t.Errorf("%s: %d bytes, %d on disk; want over 64 MiB with under 1 MiB on disk", p, st.Size(), b)
		}
		if data, err := os.ReadFile(p); err != nil || !bytes.Contains(data, []byte(".sframe")) {
			t.Errorf("%s: not patched (%v)", p, err)
		}
	}

	huge := sparseArchive(t, dir, "huge.a", 4<<30)
	want := fmt.Sprintf("sframe-gen: %s: needs about 16.0 GiB of memory (an archive of 4.0 GiB is read whole), over the memory limit of 1 GiB (--memory-limit)\n", huge)
	for _, args := range [][]string{{"-o", filepath.Join(dir, "huge-o.a"), huge}, {"-q", "-j", "2", huge}} {
		start := time.Now()
		_, stderr, code := runCLI(append([]string{"--memory-limit", "1G"}, args...)...)
		if code != exitFailure || stderr != want {
			t.Errorf("%v: exit %d, %q; want 1, %q", args, code, stderr, want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: %v: not refused before reading", args, d)
		}
	}
}

// TestSparseObject: an object whose 32 MiB .data is a hole on disk keeps
// the hole when patched, in both forms (both wrote it whole: 32 MiB).
func TestSparseObject(t *testing.T) {
	gcc := sysfiles.NeedProgram(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "big.c")
	if err := os.WriteFile(src, []byte("char big[32 << 20] = {1};\nint f(int x) { return big[x] + 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "big.o")
	if out, err := exec.Command(gcc, "-O2", "-c", src, "-o", in).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	// Punch out the zeros of .data (all but its first block).
	f, err := os.OpenFile(in, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	const punchHole, keepSize = 0x02, 0x01 // FALLOC_FL_*
	err = syscall.Fallocate(int(f.Fd()), punchHole|keepSize, 1<<20, 30<<20)
	f.Close()
	if err != nil {
		t.Skipf("punching a hole: %v", err)
	}
	if b := diskBytes(t, in); b > 4<<20 {
		t.Skipf("the file system does not keep holes (%d bytes on disk)", b)
	}
	outDir := filepath.Join(dir, "out")
	for _, args := range [][]string{{"-o", filepath.Join(dir, "o.o"), in}, {"-q", "--output-dir", outDir, in}} {
		if _, stderr, code := runCLI(args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, p := range []string{filepath.Join(dir, "o.o"), filepath.Join(outDir, "big.o")} {
		if b := diskBytes(t, p); b > 4<<20 {
			t.Errorf("%s: %d MiB on disk: the hole was written", p, b>>20)
		}
		if _, stderr, code := runCLI("dump", p); code != exitOK {
			t.Errorf("dump %s: exit %d: %s", p, code, stderr)
		}
	}
}
