package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/cfi"
	"github.com/sframe-gen/sframe-gen/emit"
	"github.com/sframe-gen/sframe-gen/testdata/elfcheck"
)

// TestDamage runs every command of the CLI on about 900 damaged variants
// of real files of all three ABIs (bit flips, truncations, overlapping and
// out-of-file sections, absurd counts and sizes, forged CFI entries; see
// mutators) and checks that sframe-gen fails cleanly: no panic, no hang, exit
// status 0 or 1, one "sframe-gen: FILE: ..." line per problem, the input
// untouched, no temporary file left, no allocation out of proportion to the
// input.
//
// SFRAME_DAMAGE_VERIFY=1 also runs verify on every output generate wrote
// from a damaged input and logs its findings (not failures: PLT FDEs follow
// the PLT, not the damaged CFI; see docs/robustness.md).
//
// By default half the variants are made (about 900, 20 s on two busy
// cores); SFRAME_DAMAGE_LONG=N makes all of them N times over (different
// seeds), SFRAME_DAMAGE_SEED=N other ones. SFRAME_DAMAGE_ONLY=TEXT runs the
// variants whose name (printed with a failure) contains TEXT.
func TestDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about 900 damaged inputs (runs in make test-long)")
	}
	factor := 1
	if s := os.Getenv("SFRAME_DAMAGE_LONG"); s != "" {
		fmt.Sscan(s, &factor)
		if factor < 1 {
			factor = 1
		}
	}
	var seedBase int64 // SFRAME_DAMAGE_SEED=N: other variants
	if s := os.Getenv("SFRAME_DAMAGE_SEED"); s != "" {
		fmt.Sscan(s, &seedBase)
	}
	bases := damageBases(t)
	work := t.TempDir()
	var stats damageStats
	stats.byKind = map[string]int{}
	stats.messages = map[string]int{}
	stats.knownTerse = map[string]int{}
	start := time.Now()
	for bi, base := range bases {
		orig, err := os.ReadFile(base)
		if err != nil {
			t.Fatal(err)
		}
		l, err := layoutOf(orig)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		for mi, m := range mutators() {
			for k := 0; k < m.n*factor; k++ {
				if factor == 1 && (bi+mi+k)%2 != 0 {
					continue // the default run makes every other variant
				}
				seed := seedBase<<48 | int64(bi)<<32 | int64(mi)<<16 | int64(k)
				r := rand.New(rand.NewSource(seed))
				d := m.fn(r, append([]byte(nil), orig...), l)
				if d == nil {
					continue
				}
				name := fmt.Sprintf("%s.%s.%d", strings.ReplaceAll(relBase(base), "/", "_"), m.kind, k)
				if seedBase != 0 {
					name += fmt.Sprintf(".seed%d", seedBase)
				}
				if only := os.Getenv("SFRAME_DAMAGE_ONLY"); only != "" && !strings.Contains(name, only) {
					continue
				}
				stats.byKind[m.kind]++
				stats.variants++
				problems, hung, err := checkDamaged(cliRunner, filepath.Join(work, name), d, &stats)
				if err != nil {
					t.Fatal(err)
				}
				if len(problems) > 0 {
					keep := keepInput(name, d)
					for _, p := range problems {
						t.Errorf("%s\n\tinput kept as %s", p, keep)
					}
				}
				stats.failures += len(problems)
				if hung {
					t.Fatalf("a run hangs; stopping (its goroutine still runs)")
				}
				if stats.failures > 20 {
					t.Fatalf("too many failures; stopping")
				}
			}
		}
	}
	t.Logf("%d variants of %d files, %d CLI runs in %v; exit 0: %d, exit 1: %d, exit 2 (verify): %d; largest allocation %d MiB",
		stats.variants, len(bases), stats.runs, time.Since(start).Round(time.Millisecond),
		stats.exit[0], stats.exit[1], stats.exit[2], stats.maxAlloc>>20)
	if testing.Verbose() {
		for _, m := range mutators() {
			t.Logf("  %-20s %4d  %s", m.kind, stats.byKind[m.kind], m.doc)
		}
	}
	t.Logf("%d outputs of damaged inputs dumped back, %d with a .sframe dump refuses", stats.outputsDumped, stats.badOutputs)
	for _, v := range stats.verifyFindings {
		t.Logf("verify on output of %s", v)
	}
	if len(stats.knownTerse) > 0 {
		t.Logf("known: messages naming a part but not what is wrong (\"…: EOF\" of eofKnown commands, bare EOF of terseKnown ones): %v", stats.knownTerse)
	}
	if testing.Verbose() {
		var msgs []string
		for m, n := range stats.messages {
			msgs = append(msgs, fmt.Sprintf("%6d  %s", n, m))
		}
		sort.Strings(msgs)
		t.Logf("error messages (file name and numbers elided):\n%s", strings.Join(msgs, "\n"))
	}
	if stats.variants < 500 && os.Getenv("SFRAME_DAMAGE_ONLY") == "" {
		t.Errorf("only %d variants; the test data shrank?", stats.variants)
	}
}

// keepInput saves a damaged input that made a check fail where it outlives
// the test: $TMPDIR/sframe-gen-damage/NAME.
func keepInput(name string, d []byte) string {
	dir := filepath.Join(os.TempDir(), "sframe-gen-damage")
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Sprintf("(not kept: %v)", err)
	}
	if err := os.WriteFile(p, d, 0o644); err != nil {
		return fmt.Sprintf("(not kept: %v)", err)
	}
	return p
}

type damageStats struct {
	variants, runs, failures int
	exit                     [3]int
	maxAlloc                 uint64
	byKind                   map[string]int
	// messages counts the error lines, file name and numbers elided.
	messages map[string]int
	// outputsDumped counts the generate outputs dumped back, badOutputs
	// those whose .sframe dump refused.
	outputsDumped, badOutputs int
	verifyFindings            []string
	// knownTerse counts the bare "EOF" messages of terseKnown commands.
	knownTerse map[string]int
}

// damageBases lists the sound files the variants are made from: linked
// executables and shared libraries, gas and compiler objects, with and
// without .sframe, little and big endian, for x86_64, aarch64 and s390x.
func damageBases(t *testing.T) []string {
	td := testdataDir()
	var out []string
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		perArch := 0
		for _, rel := range []string{
			"link/%s/pie.exe", "link/%s/lazy.so", "link/%s/nopie.gs.exe", "link/%s/relocatable.o",
			"link/%s/demo.pic.gs.o", "gas/%s/encodings.o", "gas/%s/debugframe.o", "gas/%s/personality.o",
			"cc/%s/O2/drap.o",
		} {
			p := filepath.Join(td, fmt.Sprintf(rel, arch))
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
				perArch++
			}
		}
		if perArch < 4 {
			t.Fatalf("%s: only %d base files under %s", arch, perArch, td)
		}
	}
	if p := filepath.Join(td, "cc/aarch64/O2-be/drap.gs.o"); fileExists(p) {
		out = append(out, p)
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func relBase(p string) string {
	if r, err := filepath.Rel(testdataDir(), p); err == nil {
		return r
	}
	return filepath.Base(p)
}

// entryDiag matches a per-entry diagnostic (after "sframe-gen: FILE: "):
// a cfi.EntryError or a function left without an SFrame FDE.
var entryDiag = regexp.MustCompile(`^(\.eh_frame|\.debug_frame|\.zdebug_frame): offset 0x[0-9a-f]+: |: no SFrame FDE: |: SFrame FDE without FREs `)

// terse are messages that do not say what is wrong (debug/elf's bare
// io.EOF for a file cut inside a header).
var terse = map[string]bool{"EOF": true, "unexpected EOF": true}

// terseKnown are commands known to print a bare "EOF" (for a file cut
// inside its headers), counted and logged instead of failing. Empty since
// every command opens its input with openELF (open.go).
var terseKnown = map[string]bool{}

// eofKnown are commands known to print a message naming a part but ending
// in ": EOF": counted and logged, not failed, until fixed. Empty now.
var eofKnown = map[string]bool{}

// numbers matches the numbers elided from messages in the -v summary.
var numbers = regexp.MustCompile(`0x[0-9a-f]+|\b[0-9]+\b|'\[[0-9 ]+\]'`)

// runTimeout is how long one CLI run on a small damaged file may take.
const runTimeout = 20 * time.Second

// cliResult is one in-process CLI run.
type cliResult struct {
	stdout, stderr string
	code           int
	panicked       any
	stack          []byte
	alloc          uint64
}

// runner is what checkDamaged runs: the CLI's main, or in
// TestDamageCheckerFails a broken stand-in.
type runner struct {
	main    func(c *cli, args []string) int
	timeout time.Duration
}

// cliRunner runs the real CLI.
var cliRunner = runner{main: (*cli).main, timeout: runTimeout}

// run runs main in a goroutine with a deadline, recovering a panic and
// measuring the bytes allocated.
func (rn runner) run(args ...string) (res cliResult, hung bool) {
	done := make(chan cliResult, 1)
	go func() {
		var r cliResult
		var o, e bytes.Buffer
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		defer func() {
			if p := recover(); p != nil {
				r.panicked = p
				r.stack = debug.Stack()
			}
			runtime.ReadMemStats(&ms)
			r.alloc = ms.TotalAlloc - before
			r.stdout, r.stderr = o.String(), e.String()
			done <- r
		}()
		r.code = rn.main(&cli{stdout: &o, stderr: &e}, args)
	}()
	select {
	case r := <-done:
		return r, false
	case <-time.After(rn.timeout):
		return cliResult{}, true
	}
}

// checkDamaged writes the damaged file d to dir/in, runs every command on it
// with rn and returns what went wrong. hung is true when a run did not end:
// its goroutine still runs, so the caller should stop.
func checkDamaged(rn runner, dir string, d []byte, st *damageStats) (problems []string, hung bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, d, 0o644); err != nil {
		return nil, false, err
	}
	// Memory bound: a forged size must not turn into an allocation; a
	// compressed CFI section inflates to what it claims (within the
	// memory budget, which the commands check first).
	limit := 64*uint64(len(d)) + 64<<20 + inflatedCFI(d)

	fail := func(cmd string, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s on %s: %s", cmd, in, fmt.Sprintf(format, args...)))
	}
	// check applies the rules to one run. multi allows several stderr
	// lines; report says exit 1 means "problems reported on stdout" (verify),
	// where status 2 is the failure status.
	check := func(cmd string, file string, res cliResult, timedOut bool, multi bool, report bool) bool {
		st.runs++
		if timedOut {
			fail(cmd, "no result after %v (hang)", rn.timeout)
			hung = true
			return false
		}
		if res.panicked != nil {
			fail(cmd, "panic: %v\n%s", res.panicked, res.stack)
			return false
		}
		if res.alloc > st.maxAlloc {
			st.maxAlloc = res.alloc
		}
		if res.alloc > limit {
			fail(cmd, "allocated %d MiB for a %d-byte input", res.alloc>>20, len(d))
		}
		if res.code >= 0 && res.code <= 2 {
			st.exit[res.code]++
		}
		switch {
		case res.code == 0, res.code == 1 && report && res.stderr == "":
		case res.code == 1, res.code == 2 && report:
			lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
			if !strings.HasSuffix(res.stderr, "\n") || res.stderr == "" {
				fail(cmd, "exit %d with stderr %q: want lines ending in a newline", res.code, res.stderr)
				return false
			}
			if !multi {
				// One error line, last; before it only the per-entry
				// diagnostics generate prints for a file it goes on
				// reading (broken CFI entries, skipped functions).
				for _, ln := range lines[:len(lines)-1] {
					if !entryDiag.MatchString(strings.TrimPrefix(ln, "sframe-gen: "+file+": ")) {
						fail(cmd, "exit %d with %d lines on stderr, want one error line (after entry diagnostics):\n%s", res.code, len(lines), res.stderr)
						break
					}
				}
				if last := strings.TrimPrefix(lines[len(lines)-1], "sframe-gen: "+file+": "); entryDiag.MatchString(last) && !strings.HasPrefix(cmd, "dump") {
					fail(cmd, "exit %d and the last stderr line is an entry diagnostic, not the error:\n%s", res.code, res.stderr)
				}
			}
			for _, ln := range lines {
				what, ok := strings.CutPrefix(ln, "sframe-gen: "+file+": ")
				if !ok || what == "" {
					fail(cmd, "stderr line %q does not read \"sframe-gen: %s: what is wrong\"", ln, file)
					break
				}
				if strings.HasSuffix(what, ": EOF") || strings.HasSuffix(what, ": unexpected EOF") {
					// A section or table named, but not what is wrong with
					// it (debug/elf reading past the end of the file).
					if name, _, _ := strings.Cut(cmd, " "); eofKnown[name] {
						st.knownTerse[name+": …: EOF"]++
					} else {
						fail(cmd, "stderr line %q names a part but not what is wrong with it", ln)
					}
				}
				if terse[what] {
					if name, _, _ := strings.Cut(cmd, " "); terseKnown[name] {
						st.knownTerse[name]++
					} else {
						fail(cmd, "stderr line %q does not say what is wrong", ln)
					}
				}
				if st.messages != nil {
					st.messages[cmd+": "+numbers.ReplaceAllString(what, "N")]++
				}
			}
		default:
			fail(cmd, "exit %d (want 0 or 1 for a damaged file); stderr:\n%s", res.code, res.stderr)
		}
		for _, bad := range []string{"goroutine ", "panic:", "runtime error", ".go:"} {
			if strings.Contains(res.stderr, bad) || strings.Contains(res.stdout, bad) {
				fail(cmd, "output contains %q:\n%s", bad, res.stderr)
			}
		}
		return true
	}
	unchanged := func(cmd, path string) {
		got, err := os.ReadFile(path)
		if err != nil {
			fail(cmd, "reading the input back: %v", err)
			return
		}
		if !bytes.Equal(got, d) {
			fail(cmd, "the input file changed")
		}
	}
	noTemps := func(cmd, dir string, want ...string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			fail(cmd, "%v", err)
			return
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != strings.Join(want, " ") {
			fail(cmd, "directory %s holds %q, want %q (temporary files left?)", dir, names, want)
		}
	}

	// generate -o OUT
	outDir := filepath.Join(dir, "out")
	os.Mkdir(outDir, 0o755)
	out := filepath.Join(outDir, "result")
	res, timedOut := rn.run("-o", out, in)
	if check("generate -o", in, res, timedOut, false, false) {
		unchanged("generate -o", in)
		if res.code == 0 {
			noTemps("generate -o", outDir, "result")
			// What generate wrote, its own dump must read: a damaged
			// input may leave the ELF unreadable as it was, but the new
			// .sframe must decode.
			if written, err := os.ReadFile(out); err == nil && !bytes.Equal(written, d) && !hung {
				if err := elfcheck.CheckPreserved(d, written); err != nil {
					fail("generate -o", "the output does not keep the input: %v", err)
				}
				dres, dhung := rn.run("dump", out)
				switch {
				case dhung:
					fail("dump of the output", "hang")
					hung = true
				case dres.panicked != nil:
					fail("dump of the output", "panic: %v\n%s", dres.panicked, dres.stack)
				case dres.code != 0 && strings.Contains(dres.stderr, "sframe"):
					st.badOutputs++
					fail("dump of the output", "generate wrote a .sframe its dump refuses: %s", dres.stderr)
				}
				st.outputsDumped++
				if os.Getenv("SFRAME_DAMAGE_VERIFY") != "" {
					vres, _ := rn.run("verify", out)
					if vres.code != 0 {
						st.verifyFindings = append(st.verifyFindings, fmt.Sprintf("%s (exit %d):\n%s%s", in, vres.code, vres.stdout, vres.stderr))
					}
				}
			}
		} else {
			noTemps("generate -o", outDir)
		}
	}

	// generate -v --strict: the symbolizer reads the (damaged) symbol
	// tables to name skipped functions.
	if !hung {
		strictDir := filepath.Join(dir, "strict")
		os.Mkdir(strictDir, 0o755)
		res, timedOut = rn.run("-v", "--strict", "-o", filepath.Join(strictDir, "result"), in)
		if check("generate -v --strict", in, res, timedOut, false, false) {
			unchanged("generate -v --strict", in)
			if res.code == 0 {
				noTemps("generate -v --strict", strictDir, "result")
			} else {
				noTemps("generate -v --strict", strictDir)
			}
		}
	}

	// generate --raw: the section bytes on stdout must decode.
	if !hung {
		res, timedOut = rn.run("--raw", in)
		if check("generate --raw", in, res, timedOut, false, false) && res.code == 0 && res.stdout != "" {
			if _, err := emit.Decode([]byte(res.stdout)); err != nil {
				fail("generate --raw", "exit 0 but the section does not decode: %v", err)
			}
		}
	}

	// generate in place, on a copy with an unusual mode
	ipDir := filepath.Join(dir, "inplace")
	os.Mkdir(ipDir, 0o755)
	cp := filepath.Join(ipDir, "copy")
	if err := os.WriteFile(cp, d, 0o600); err != nil {
		return problems, hung, err
	}
	os.Chmod(cp, 0o751)
	if hung {
		return problems, hung, nil
	}
	res, timedOut = rn.run(cp)
	if check("generate (in place)", cp, res, timedOut, false, false) {
		noTemps("generate (in place)", ipDir, "copy")
		if res.code != 0 {
			unchanged("generate (in place)", cp)
		} else {
			if fi, err := os.Stat(cp); err != nil || fi.Mode().Perm() != 0o751 {
				fail("generate (in place)", "mode not kept: %v %v", fi.Mode(), err)
			}
			if written, err := os.ReadFile(cp); err == nil && !bytes.Equal(written, d) {
				if err := elfcheck.CheckPreserved(d, written); err != nil {
					fail("generate (in place)", "the result does not keep the input: %v", err)
				}
			}
		}
	}

	if hung {
		return problems, hung, nil
	}
	res, timedOut = rn.run("dump", in)
	check("dump", in, res, timedOut, false, false)
	res, timedOut = rn.run("dump", "--json", in)
	if check("dump --json", in, res, timedOut, false, false) && res.code == 0 && !json.Valid([]byte(res.stdout)) {
		fail("dump --json", "exit 0 but stdout is not JSON")
	}

	if hung {
		return problems, hung, nil
	}
	res, timedOut = rn.run("rows", "--json", in)
	if check("rows --json", in, res, timedOut, true, false) {
		for _, ln := range strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n") {
			if ln != "" && !json.Valid([]byte(ln)) {
				fail("rows --json", "stdout line is not JSON: %.200q", ln)
				break
			}
		}
	}

	for _, cmd := range commands() {
		if hung {
			return problems, hung, nil
		}
		switch cmd.name {
		case "verify":
			// verify's documented status 2 means "FILE cannot be checked".
			res, timedOut = rn.run("verify", in)
			check("verify", in, res, timedOut, true, true)
		case "stats":
			res, timedOut = rn.run("stats", in)
			check("stats", in, res, timedOut, false, false)
		}
	}
	unchanged("all commands", in)
	if len(problems) == 0 {
		os.RemoveAll(dir)
	}
	return problems, hung, nil
}

// inflatedCFI is the most a compressed CFI section of the ELF file d
// claims (cfi.SectionBytes): what reading it may allocate on top of the
// damage test's bound.
func inflatedCFI(d []byte) uint64 {
	f, err := elf.NewFile(bytes.NewReader(d))
	if err != nil {
		return 0
	}
	var most uint64
	for _, src := range []cfi.Source{cfi.EHFrame, cfi.DebugFrame} {
		if n, err := cfi.SectionBytes(f, src); err == nil && n <= cfi.MaxSectionBytes {
			most = max(most, n)
		}
	}
	return most
}
