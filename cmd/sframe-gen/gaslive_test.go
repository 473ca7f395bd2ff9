package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// liveSource is a C or C++ file the live comparison compiles, and the
// compiler flags it needs.
type liveSource struct {
	path  string
	cxx   bool
	flags []string
}

// liveSources lists the sources of TestGasLayoutLive: the repository's
// C (tree-sitter, the link demo, the DRAP cases, the layout cases of
// testdata/cc/src/gaslayout) and part of leveldb (C++: COMDAT groups).
func liveSources(t *testing.T) []liveSource {
	td := testdataDir()
	var srcs []liveSource
	add := func(pattern string, cxx bool, flags ...string) {
		m, _ := filepath.Glob(filepath.Join(td, pattern))
		if len(m) == 0 {
			t.Fatalf("no %s under %s", pattern, td)
		}
		for _, p := range m {
			srcs = append(srcs, liveSource{p, cxx, flags})
		}
	}
	ts := filepath.Join(td, "cc", "src", "tree-sitter")
	tsInc := []string{"-I" + filepath.Join(ts, "include"), "-I" + filepath.Join(ts, "src")}
	add("cc/src/gaslayout/*.c", false)
	add("cc/src/misc/*.c", false)
	add("link/src/*.c", false, append([]string{"-DUSE_DEMO"}, tsInc...)...)
	add("cc/src/tree-sitter/src/*.c", false, tsInc...)
	ldb := filepath.Join(td, "cc", "src", "leveldb")
	for _, f := range []string{"util/coding.cc", "util/hash.cc", "util/status.cc", "table/block.cc", "db/dbformat.cc", "db/log_writer.cc"} {
		add("cc/src/leveldb/"+f, true, "-std=gnu++11", "-DLEVELDB_PLATFORM_POSIX", "-DOS_LINUX", "-DLEVELDB_ATOMIC_PRESENT", "-I"+ldb, "-I"+filepath.Join(ldb, "include"))
	}
	return srcs
}

// liveOptions are the compiler flags of one build of the live comparison,
// and those given to gcc when it assembles the .s.
type liveOptions struct {
	name            string
	cflags, asflags []string
}

// liveVariants are the builds of the small sources besides -O0/-O2/-Os.
var liveVariants = []liveOptions{
	{name: "O2-g", cflags: []string{"-O2", "-g"}},
	{name: "O2-g-as-g", cflags: []string{"-O2", "-g"}, asflags: []string{"-g"}},
	{name: "O2-debug-frame", cflags: []string{"-O2", "-g", "-fno-asynchronous-unwind-tables"}},
	{name: "O2-sections-pic", cflags: []string{"-O2", "-ffunction-sections", "-fdata-sections", "-fPIC"}},
}

// liveObject is one object of the live comparison and how it compared.
type liveObject struct {
	name   string
	same   bool
	reason string // why it differs
}

// TestGasLayoutLive compiles C and C++ files with gcc -O0, -O2 and -Os for
// x86-64, AArch64 and s390x (and the small C files in liveVariants' other
// ways too), assembles each .s with the reference GNU as
// with and without --gsframe, runs `sframe-gen --gas-compat -o` on the
// object made without, and compares the whole output with the object made
// with, byte for byte. At least 98% must be identical; every object that
// differs is listed with the reason.
func TestGasLayoutLive(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles about 300 objects (-short)")
	}
	type abi struct{ arch, cc, cxx string }
	abis := []abi{{"x86_64", "gcc", "g++"}, {"aarch64", "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"}, {"s390x", "s390x-linux-gnu-gcc", "s390x-linux-gnu-g++"}}
	srcs := liveSources(t)
	type job struct {
		a   abi
		opt liveOptions
		src liveSource
	}
	var jobs []job
	for _, a := range abis {
		sysfiles.NeedProgram(t, a.cc)
		sysfiles.NeedProgram(t, a.cxx)
		sysfiles.GNURef.Tool(t, a.arch, "as")
		for _, opt := range []string{"-O0", "-O2", "-Os"} {
			for _, s := range srcs {
				jobs = append(jobs, job{a, liveOptions{name: opt[1:], cflags: []string{opt}}, s})
			}
		}
		// Other layouts on the small sources: debug info (gas adds
		// .debug_line_str; with -g on the .s, its own line table),
		// .debug_frame alone, a section per function and per datum.
		for _, opt := range liveVariants {
			for _, s := range srcs {
				if !s.cxx && !strings.Contains(filepath.ToSlash(s.path), "tree-sitter") {
					jobs = append(jobs, job{a, opt, s})
				}
			}
		}
	}
	dir := t.TempDir()
	results := make([]liveObject, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, runtime.NumCPU()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				cc := j.a.cc
				if j.src.cxx {
					cc = j.a.cxx
				}
				base := strings.TrimSuffix(filepath.Base(j.src.path), filepath.Ext(j.src.path))
				name := fmt.Sprintf("%s/%s/%s", j.a.arch, j.opt.name, base)
				results[i] = compareLive(t, filepath.Join(dir, fmt.Sprint(i)), name, j.a.arch, cc, j.opt, j.src)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	same := 0
	var differ []string
	for _, r := range results {
		if r.same {
			same++
		} else {
			differ = append(differ, r.name+": "+r.reason)
		}
	}
	sort.Strings(differ)
	rate := float64(same) / float64(len(results))
	t.Logf("%d of %d objects identical to as --gsframe's (%.1f%%)", same, len(results), 100*rate)
	for _, d := range differ {
		t.Logf("differs: %s", d)
	}
	if rate < 0.98 {
		t.Errorf("identity rate %.1f%%, want at least 98%%", 100*rate)
	}
}

// compareLive builds one object both ways in dir and compares our output
// with gas's.
func compareLive(t *testing.T, dir, name, arch, cc string, opt liveOptions, src liveSource) liveObject {
	res := liveObject{name: name}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error(err)
		return res
	}
	bdir := sysfiles.GNURef.GCC(t, arch)
	s, plain, gs, out := filepath.Join(dir, "x.s"), filepath.Join(dir, "x.o"), filepath.Join(dir, "x.gs.o"), filepath.Join(dir, "out.o")
	cflags := opt.cflags
	if !slices.Contains(cflags, "-g") {
		cflags = append([]string{"-g0"}, cflags...)
	}
	steps := [][]string{
		slices.Concat([]string{cc, "-S"}, cflags, src.flags, []string{"-o", s, src.path}),
		slices.Concat([]string{cc, "-B", bdir}, opt.asflags, []string{"-c", s, "-o", plain}),
		slices.Concat([]string{cc, "-B", bdir, "-Wa,--gsframe"}, opt.asflags, []string{"-c", s, "-o", gs}),
	}
	var warnings []byte
	for k, st := range steps {
		cmd := exec.Command(st[0], st[1:]...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: %v: %v\n%s", name, st, err, stderr.Bytes())
			res.reason = "not built"
			return res
		}
		if k == 2 {
			warnings = stderr.Bytes()
		}
	}
	if _, stderr, code := runCLI("--gas-compat", "-o", out, plain); code != 0 {
		res.reason = fmt.Sprintf("sframe-gen exit %d: %s", code, strings.TrimSpace(stderr))
		return res
	}
	got, err1 := os.ReadFile(out)
	want, err2 := os.ReadFile(gs)
	if err1 != nil || err2 != nil {
		t.Errorf("%s: %v %v", name, err1, err2)
		return res
	}
	if bytes.Equal(got, want) {
		res.same = true
		return res
	}
	res.reason = liveDiff(t, out, gs, warnings)
	return res
}

// liveDiff says why our object out differs from gas's gs: the .sframe
// section itself (with the warnings gas printed), or the layout (the first
// section header that differs).
func liveDiff(t *testing.T, out, gs string, warnings []byte) string {
	a, b := sectionBytes(t, out, ".sframe"), sectionBytes(t, gs, ".sframe")
	if !bytes.Equal(a, b) {
		w := strings.TrimSpace(string(warnings))
		if i := strings.IndexByte(w, '\n'); i >= 0 {
			w = w[:i]
		}
		return fmt.Sprintf(".sframe differs (%d bytes, gas %d; gas said: %q)", len(a), len(b), w)
	}
	fa, err1 := elf.Open(out)
	fb, err2 := elf.Open(gs)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("unreadable: %v %v", err1, err2)
	}
	defer fa.Close()
	defer fb.Close()
	if len(fa.Sections) != len(fb.Sections) {
		return fmt.Sprintf("%d sections, gas %d", len(fa.Sections), len(fb.Sections))
	}
	for i := range fa.Sections {
		x, y := fa.Sections[i].SectionHeader, fb.Sections[i].SectionHeader
		if x != y {
			return fmt.Sprintf("section %d: %+v, gas %+v", i, x, y)
		}
	}
	sa, _ := fa.Symbols()
	sb, _ := fb.Symbols()
	if len(sa) != len(sb) {
		return fmt.Sprintf("%d symbols, gas %d", len(sa), len(sb))
	}
	return "same sections, other bytes differ"
}
