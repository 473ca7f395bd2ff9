package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// A docRecipe is a shell recipe of the docs that TestDocRecipes runs as
// written, but for its substitutions: a fenced block (the whole block,
// found by its first line) or inline commands (code spans, found by their
// text, run one after the other). bash -e runs it in the tree's root (in
// {T}/work with inTemp) with {T}/bin first in $PATH (the test's
// sframe-gen and what setup built), TMPDIR={T} and MAKEFLAGS=BIN=... so
// that make build writes {T}/bin/sframe-gen, {T} being the test's
// directory. The substitutions make it small and keep it out of /tmp and
// the tree; each is a regular expression, replaced everywhere, that must
// match (a recipe changed in the doc fails the test instead of running
// another way). In a replacement or env, {ELF} is the small input,
// testdata/link/x86_64/leveldb.exe (839 FDEs), which is also copied to
// {T}/llvm.so and {T}/libLLVM.so, the names the recipes give rust's
// libLLVM.so. The variables of env are those the docs or the scripts
// name (RUNS=1, SFRAME_GEN=...), or the tools' own (VALGRIND_OPTS,
// MAKEFLAGS), each said where it is set.
type docRecipe struct {
	doc    string   // README.md or docs/NAME.md
	text   []string // the block's first line (fenced), or the code spans
	fenced bool
	subst  []docSubst
	env    []string // the documented variables set for a small run (RUNS=1)
	needs  []string // programs it runs beyond bash, go, make and coreutils
	long   bool     // -short skips it (make test-long runs it)
	inTemp bool     // run in {T}/work, not the tree's root
	setup  func(t *testing.T, r *recipeRun)
	after  string   // a shell command that checks the result (with {T}, {ELF})
	want   []string // regular expressions (with {T}) the output (the recipe's, after's) must match
}

// docSubst replaces old (a regular expression) by new.
type docSubst struct{ old, new string }

// recipeRun is the state of one recipe's run.
type recipeRun struct {
	root, tmp, bin, elf string
}

// Substitutions most recipes share.
var (
	// /tmp/X: a file of the test's directory.
	substTmp = docSubst{`/tmp/`, `{T}/`}
	// bin/sframe-gen, the tree's build (make build): the test's.
	substBin = docSubst{`(^|[\s':])bin/sframe-gen`, `${1}{T}/bin/sframe-gen`}
	// rust's libLLVM.so named by its path: the small input.
	substLLVM = docSubst{`/root/\.rustup/\S+/libLLVM\.so\S*`, `{ELF}`}
	// a benchmark run once: -benchtime 1x appended to go test.
	substBenchOnce = docSubst{`(go test [^\n]*-bench [^\n]*?)(\s*(#.*)?)$`, `$1 -benchtime=1x -count=1$2`}
)

// docRecipes are the recipes TestDocRecipes runs. Every fenced block of
// the docs a reader is told to run is here or claimed by another test in
// docBlockClaims (TestDocBlocksClaimed); every command of
// docs/performance.md too (perfNotRun lists the rest, with the reason).
var docRecipes = []docRecipe{
	{
		doc: "docs/performance.md", fenced: true, needs: []string{"valgrind", "callgrind_annotate"},
		text:  []string{"GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \\"},
		subst: []docSubst{substTmp, substBin},
		want:  []string{`PROGRAM TOTALS`, `lower\.\(\*Lowerer\)\.lowerFast`},
	},
	{
		doc: "docs/performance.md", fenced: true, needs: []string{"perf"},
		text: []string{"perf record -F 20000 -e cpu-clock -o /tmp/share.data -- sh -c \\"},
		// 100 runs, not 5: the small stand-in for libLLVM.so spends
		// 0.2% of its time in shareTable.keep, which 5 runs' samples
		// (about 800) missed now and then, and perf annotate then
		// finds nothing to annotate.
		subst: []docSubst{substTmp, substBin, {`for i in 1 2 3 4 5;`, `for i in $$(seq 100);`}},
		setup: needPerfRecord,
		want:  []string{`lower\.\(\*Lowerer\)\.lowerFast\n`, `Disassembly of section`, `emit\.\(\*shareTable\)\.keep`},
	},
	{
		doc: "docs/performance.md", fenced: true, needs: []string{"readelf"},
		text: []string{"F=/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/libLLVM.so.22.1-rust-1.95.0-stable"},
		// 2 rounds each, not 21.
		subst: []docSubst{substLLVM, substTmp, substBin, {`alternate 21 `, `alternate 2 `}},
		want:  []string{`readelf --debug-dump=frames-interp \S+ +wall min .* cpu med`, `(?m)^\S+/rmsync \S+::\S+ --raw -o \S+ \S+ +wall min`, `(?m)^\S+/rmsync \S+/out::\S+ -o \S+/out \S+ +wall min`},
	},
	{
		doc: "docs/performance.md", text: []string{"go run ./testdata/pagecost"},
		want: []string{`a fresh 4 KiB page: [0-9.]+ us`},
	},
	{
		doc: "docs/performance.md", text: []string{"go run ./testdata/pagecost -huge"},
		want: []string{`a fresh 2 MiB page: [0-9.]+ ms in the first run, [0-9.]+ ms at best`},
	},
	{
		doc: "docs/performance.md", text: []string{"testdata/bench.sh FILE"}, needs: []string{"readelf", "/usr/bin/time"},
		subst: []docSubst{{`FILE`, `{ELF}`}},
		env:   []string{"RUNS=1", "SIZES=0", "SFRAME_GEN={T}/bin/sframe-gen"},
		want:  []string{`raw/re .* pat/cp .* RSS_Mi .* ns/FDE`, `(?m)^leveldb\.exe +839 `},
	},
	{
		doc: "docs/performance.md", long: true, text: []string{"testdata/bench-tree.sh [DIR]"}, needs: []string{"objcopy", "/usr/bin/time"},
		subst: []docSubst{{`\[DIR\]`, `{T}/tree`}},
		env:   []string{"RUNS=1", "SMALL=5", "SFRAME_GEN={T}/bin/sframe-gen"},
		setup: func(t *testing.T, r *recipeRun) { r.copyTree(t, "tree", "link/x86_64/*.so") },
		want:  []string{`--output-dir \(a new tree\)`, `second run: .* files written: 0;`, `in place / objcopy`},
	},
	{
		// The fair rounds: a second of WAIT, not 65; OLD, the build
		// compared, is the tree's own.
		doc: "docs/performance.md", long: true, text: []string{`WAIT=65 CMDS="cp out baseout sfg rc base" BASE=OLD testdata/bench-tree.sh`}, needs: []string{"/usr/bin/time"},
		subst: []docSubst{{`WAIT=65`, `WAIT=1`}, {`BASE=OLD`, `BASE={T}/bin/sframe-gen`}, {`bench-tree\.sh$`, `bench-tree.sh {T}/tree`}},
		env:   []string{"RUNS=2", "SMALL=5", "SFRAME_GEN={T}/bin/sframe-gen"},
		setup: func(t *testing.T, r *recipeRun) { r.copyTree(t, "tree", "link/x86_64/*.so") },
		want:  []string{`--output-dir \(a new tree\)`, `--output-dir / BASE --output-dir`, `in place / BASE in place`, `in place / replacecopy \(the floor\)`, `per round \(cp -a wall: out/baseout/sfg/rc/base / cp -a\)`},
	},
	{
		// In place against the floor: a second of WAIT, not 65.
		doc: "docs/performance.md", long: true, text: []string{`WAIT=65 CMDS="cp out sfg rc oc" testdata/bench-tree.sh`}, needs: []string{"objcopy", "/usr/bin/time"},
		subst: []docSubst{{`WAIT=65`, `WAIT=1`}, {`bench-tree\.sh$`, `bench-tree.sh {T}/tree`}},
		env:   []string{"RUNS=2", "SMALL=5", "SFRAME_GEN={T}/bin/sframe-gen"},
		setup: func(t *testing.T, r *recipeRun) { r.copyTree(t, "tree", "link/x86_64/*.so") },
		want:  []string{`--output-dir \(a new tree\)`, `in place / replacecopy \(the floor\)`, `in place / objcopy`, `per round \(cp -a wall: out/sfg/rc/oc / cp -a\)`},
	},
	{
		// --output-dir against cp -a, each command given memory the
		// host backed: a second of WAIT, not 65, and 8 MiB, not 1024.
		doc: "docs/performance.md", long: true, text: []string{`WAIT=65 PREWARM=1024 CMDS="cp out" testdata/bench-tree.sh`}, needs: []string{"/usr/bin/time"},
		subst: []docSubst{{`WAIT=65`, `WAIT=1`}, {`PREWARM=1024`, `PREWARM=8`}, {`bench-tree\.sh$`, `bench-tree.sh {T}/tree`}},
		env:   []string{"RUNS=2", "SMALL=5", "SFRAME_GEN={T}/bin/sframe-gen"},
		setup: func(t *testing.T, r *recipeRun) { r.copyTree(t, "tree", "link/x86_64/*.so") },
		want:  []string{`8 MiB of page cache written and deleted before each command`, `--output-dir \(a new tree\)`, `per round \(cp -a wall: out / cp -a\)`},
	},
	{
		doc: "docs/performance.md", text: []string{"testdata/bench-lookup.sh [FILE]"},
		subst: []docSubst{{`\[FILE\]`, `{ELF}`}},
		env:   []string{"ROUNDS=1", "PASSES=1", "PCS=20000"},
		// gcc and the reference prefix's libsframe, or skip (fail under CI).
		setup: func(t *testing.T, r *recipeRun) { libsframeLookup(t) },
		want:  []string{`agree: found `, `ratio emit\.Reader / libsframe: `},
	},
	{
		doc: "docs/performance.md", needs: []string{"valgrind"},
		text: []string{"valgrind --tool=cachegrind --cache-sim=yes --LL=2097152,16,64 lookupbench time SECTION PCS 1"},
		// SECTION and PCS made as bench-lookup.sh makes them; cachegrind's
		// output in the test's directory (VALGRIND_OPTS).
		subst: []docSubst{{`SECTION`, `{T}/section`}, {`PCS`, `{T}/pcs`}},
		env:   []string{"VALGRIND_OPTS=--cachegrind-out-file={T}/cachegrind.out.%p"},
		setup: func(t *testing.T, r *recipeRun) {
			r.run(t, "go build -o {T}/bin/lookupbench ./testdata/lookupbench && sframe-gen --raw -o {T}/section {ELF} && lookupbench pcs {T}/section {T}/pcs 20000")
		},
		want: []string{`ns_per_lookup [0-9.]+ found [1-9]`, `LL misses:`},
	},
	{
		doc: "docs/performance.md", text: []string{"go test ./emit -run '^$' -bench '^BenchmarkLookup$'"},
		subst: []docSubst{substBenchOnce},
		want:  []string{`(?m)^BenchmarkLookup\S*\s+1\s+[\d.]+ ns/op`},
	},
	{
		doc: "docs/performance.md", text: []string{"EMIT_BENCH_SFRAME=FILE go test ./emit -run '^$' -bench 'NewReader|ReaderIndex' -benchmem"},
		subst: []docSubst{{`=FILE`, `={T}/section`}, substBenchOnce},
		setup: func(t *testing.T, r *recipeRun) { r.run(t, "sframe-gen --raw -o {T}/section {ELF}") },
		want:  []string{`(?m)^BenchmarkNewReader\S*\s+1\s+[\d.]+ ns/op`, `(?m)^BenchmarkReaderIndex\S*\s+1\s+[\d.]+ ns/op`},
	},
	{
		doc: "docs/performance.md", long: true, needs: []string{"/usr/bin/time"},
		text: []string{"go test -c -o W ./cmd/sframe-gen", "cd cmd/sframe-gen && /usr/bin/time -f %U W -test.run '^$' -test.bench StackWalk/sframe -test.benchtime Nx"},
		// W in the test's directory; N=2, not 2000.
		subst: []docSubst{{`(-o |time -f %U )W`, `${1}{T}/W`}, {`benchtime Nx`, `benchtime 2x`}},
		want:  []string{`(?m)^BenchmarkStackWalk/sframe\S*\s+2\s+[\d.]+ ns/op`},
	},
	{
		doc: "docs/performance.md", long: true, text: []string{"make bench-stages"},
		// Each benchmark once: go is a wrapper adding -benchtime=1x
		// -count=1 (MAKEFLAGS=GO=...); the input the small one.
		env: []string{"SFRAME_BENCH_ELF={ELF}", "MAKEFLAGS=GO={T}/bin/go1x"},
		setup: func(t *testing.T, r *recipeRun) {
			r.writeScript(t, "go1x", "#!/bin/sh\nexec go \"$@\" -benchtime=1x -count=1\n")
		},
		want: []string{`(?m)^BenchmarkStageOpen\S*\s+1\s`, `(?m)^BenchmarkStageEncode\S*\s+1\s`, `(?m)^BenchmarkGenerate\S*\s+1\s`},
	},
	{
		doc: "docs/performance.md", text: []string{"LOWER_BENCH_ELF=FILE go test ./lower -run '^$' -bench LowerLibLLVM"},
		subst: []docSubst{{`=FILE`, `={ELF}`}, substBenchOnce},
		want:  []string{`(?m)^BenchmarkLowerLibLLVM\S*\s+1\s+[\d.]+ ns/op`},
	},
	{
		doc: "docs/performance.md", text: []string{"go test ./cfi -run '^$' -bench RowsOnly"},
		subst: []docSubst{substBenchOnce},
		want:  []string{`(?m)^BenchmarkRowsOnly/fast\S*\s+1\s+[\d.]+ ns/op`},
	},
	{
		doc: "docs/cost.md", fenced: true,
		text: []string{"sframe-gen stats --json --dry-run /usr > usr.json     # 31 s, 544 MB peak here (2 cores)"},
		// A tree of small libraries for /usr; the JSON in the test's directory.
		subst: []docSubst{{` /usr `, ` {T}/tree `}, {`usr\.json`, `{T}/usr.json`}},
		setup: func(t *testing.T, r *recipeRun) { r.copyTree(t, "tree", "link/*/*.so") },
		want:  []string{`(?m)^26 files described \(0 without CFI`, `(?m)^\| all \| 26 \| [0-9.]+ MB \|`, `(?m)^\| SFRAME_ABI_S390X_ENDIAN_BIG \| \d+ \|`},
	},
	{
		doc: "testdata/costtable/main.go", fenced: true, text: []string{"sframe-gen stats --json --dry-run /usr > usr.json"},
		subst: []docSubst{{` /usr `, ` {T}/tree `}, {`usr\.json`, `{T}/usr.json`}},
		setup: func(t *testing.T, r *recipeRun) { r.copyTree(t, "tree", "link/*/*.so") },
		want:  []string{`(?m)^26 files described \(0 without CFI`, `(?m)^\| all \| 26 \| [0-9.]+ MB \|`},
	},
	{
		doc: "docs/cost.md", fenced: true,
		text:  []string{"sframe-gen stats --json --dry-run --merge-fdes /usr > usr-merged.json"},
		subst: []docSubst{{` /usr `, ` {T}/tree `}, {`usr-merged\.json`, `{T}/usr-merged.json`}},
		setup: func(t *testing.T, r *recipeRun) { r.copyTree(t, "tree", "link/*/*.so") },
		want:  []string{`(?m)^\| all \| 26 \| [0-9.]+ MB \|`},
	},
	{
		doc: "docs/integration.md", fenced: true, inTemp: true, text: []string{"go build -o app ."},
		setup: func(t *testing.T, r *recipeRun) {
			r.writeFile(t, "work/go.mod", "module app\n\ngo 1.22\n")
			r.writeFile(t, "work/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"app\") }\n")
		},
		after: "sframe-gen verify app && ./app",
		want:  []string{`(?m)^sframe-gen: app: \d+ functions checked, .* 0 problems`, `(?m)^app$`},
	},
	{
		doc: "docs/integration.md", fenced: true, long: true, inTemp: true, needs: []string{"cmake", "gcc"},
		text: []string{"include(SFrameGen)"},
		// The block is a part of a CMakeLists.txt: written into one after
		// mytool's add_executable (sframe_gen_target needs the target) and
		// before another's (sframe_gen_all_targets: the targets from there
		// on), then configured and built.
		subst: []docSubst{
			{`\A`, "cat >CMakeLists.txt <<'EOF'\ncmake_minimum_required(VERSION 3.16)\nproject(demo C)\nlist(APPEND CMAKE_MODULE_PATH {ROOT}/docs/integration)\nadd_executable(mytool main.c)\n"},
			{`\z`, "add_executable(other main.c)\nEOF\ncmake -S . -B build >/dev/null && cmake --build build >/dev/null"},
		},
		setup: func(t *testing.T, r *recipeRun) {
			r.writeFile(t, "work/main.c", "#include <stdio.h>\nint main(void) { puts(\"demo\"); return 0; }\n")
		},
		after: "sframe-gen verify build/mytool build/other && build/mytool",
		want:  []string{`(?m)^sframe-gen: build/mytool: \d+ functions checked, .* 0 problems`, `(?m)^sframe-gen: build/other: \d+ functions checked, .* 0 problems`, `(?m)^demo$`},
	},
	{
		doc: "docs/integration.md", fenced: true, long: true, inTemp: true, needs: []string{"cargo"},
		text: []string{"cargo build --release"},
		// myprog: a Cargo package of that name, without dependencies.
		setup: func(t *testing.T, r *recipeRun) {
			r.writeFile(t, "work/Cargo.toml", "[package]\nname = \"myprog\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
			r.writeFile(t, "work/src/main.rs", "fn main() {\n    println!(\"myprog\");\n}\n")
		},
		after: "sframe-gen verify target/release/myprog && target/release/myprog",
		want:  []string{`(?m)^sframe-gen: target/release/myprog: \d+ functions checked, .* 0 problems`, `(?m)^myprog$`},
	},
	{
		doc: "docs/rows.md", fenced: true, text: []string{"go test ./cfi -run XXX -bench Rows -benchtime 30x -count 2"},
		subst: []docSubst{{`-benchtime 30x -count 2`, `-benchtime 1x -count 1`}},
		want:  []string{`(?m)^BenchmarkRows\S*\s+1\s+[\d.]+ ns/op`},
	},
	{
		doc: "docs/sharing.md", fenced: true, text: []string{"testdata/sharing-table.sh                       # the table above"},
		// The small input for the machine's big binaries; the script's
		// sframe-gen the test's (not bin/sframe-gen).
		subst: []docSubst{{`sharing-table\.sh `, `sharing-table.sh {ELF} `}, substTmp},
		env:   []string{"SFRAME_GEN={T}/bin/sframe-gen"},
		want:  []string{"(?m)^\\| `\\S+leveldb\\.exe` \\| amd64_endian_little \\|", `(?m)^  written .*shared`, `(?m)^sframe-gen: {T}/libLLVM\.patched\.so: wrote \.sframe`},
	},
	{
		doc: "docs/sharing.md", fenced: true, long: true, needs: []string{"valgrind"},
		text: []string{"GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind sframe-gen --raw -o /tmp/a /tmp/libLLVM.so"},
		// Callgrind's outputs in the test's directory (VALGRIND_OPTS); the
		// benchmarks on the small input.
		subst: []docSubst{substTmp, {`-benchtime 20x`, `-benchtime 1x`}},
		env:   []string{"SFRAME_BENCH_ELF={ELF}", "VALGRIND_OPTS=--callgrind-out-file={T}/callgrind.out.%p"},
		want:  []string{`(?m)==\d+== Collected : \d+`, `(?m)^BenchmarkStageShare\S*\s+1\s`, `(?m)^BenchmarkStageScanSerial\S*\s+1\s`},
	},
	{
		doc: "docs/stack.md", fenced: true, inTemp: true, needs: []string{"gcc", "ldd"},
		text: []string{"sframe-gen ./app"},
		// app: testdata/sample/hello.c.
		setup: func(t *testing.T, r *recipeRun) { r.run(t, "gcc -O2 -o {T}/work/app testdata/sample/hello.c") },
		after: "sframe-gen verify app lib/libc.so.6",
		want:  []string{`(?m)^hello, `, `(?m)^sframe-gen: app: \d+ functions checked, .* 0 problems`, `(?m)^sframe-gen: lib/libc\.so\.6: \d+ functions checked, .* 0 problems`},
	},
	{
		doc: "docs/stack.md", fenced: true, long: true, text: []string{"go test ./cmd/sframe-gen -run '^$' -bench StackWalk -count 5"},
		subst: []docSubst{substBenchOnce},
		want:  []string{`(?m)^BenchmarkStackWalk/sframe\S*\s+1\s+[\d.]+ ns/op`},
	},
	{
		doc: "docs/verify.md", fenced: true, needs: []string{"/usr/bin/python3"},
		text:  []string{"cp -L /usr/bin/python3 /tmp/p && sframe-gen -o /tmp/p.sf /tmp/p && time sframe-gen verify /tmp/p.sf"},
		subst: []docSubst{{`/tmp/p`, `{T}/p`}},
		want:  []string{`(?m)^sframe-gen: {T}/p\.sf: \d+ functions checked, .* 0 problems`, `(?m)^real\s`},
	},
}

// perfNotRun are the commands of docs/performance.md that TestDocRecipes
// does not run, each with the reason (what runs it otherwise).
var perfNotRun = map[string]string{
	"make bench":                       "the three scripts bench.sh, bench-tree.sh and bench-lookup.sh on the machine's big binaries (minutes); each script is run here",
	"make pgo":                         "rewrites cmd/sframe-gen/default.pgo in the tree from 300 runs on libLLVM.so",
	"testdata/alternate":               "the program of the Tools block, which runs it",
	"testdata/alternate N CMD...":      "its synopsis; the Tools block runs it",
	"testdata/bench.sh":                "as testdata/bench.sh FILE, run here",
	"testdata/bench-tree.sh":           "as testdata/bench-tree.sh [DIR], run here",
	"testdata/bench-lookup.sh":         "as testdata/bench-lookup.sh [FILE], run here",
	"testdata/replacecopy -j 2":        "a step of bench-tree.sh, which runs it",
	"testdata/lowertree":               "a step of bench-tree.sh, which runs it",
	"perf record -F 4000":              "the sampling rate of a measure, not a command",
	"perf record":                      "names the tool of the block below it, which is run here",
	"perf record -g":                   "a hint (profile with call graphs), no command",
	"go test -c":                       "part of a sentence on benchstat; the StackWalk recipe runs go test -c",
	"go tool pprof -top":               "a hint on reading a -cpuprofile, no command",
	"go build":                         "names the build that uses default.pgo",
	"testdata/link/*/":                 "a directory, not a command",
	"go test -c -o W ./cmd/sframe-gen": "the first half of the StackWalk recipe, run here",
}

// TestDocRecipes runs the shell recipes of docRecipes (see docRecipe)
// and checks that each exits 0 and prints what it must; and that every
// command of docs/performance.md (a code span starting as a command
// does) is a recipe run here or in perfNotRun.
func TestDocRecipes(t *testing.T) {
	root, err := filepath.Abs(filepath.Join(testdataDir(), ".."))
	if err != nil {
		t.Fatal(err)
	}
	perf := readDoc(t, root, "docs/performance.md")
	run := map[string]bool{}
	for _, r := range docRecipes {
		for _, s := range r.text {
			run[strings.Join(strings.Fields(s), " ")] = true
		}
	}
	for _, span := range docCommandSpans(perf) {
		if !run[span] && perfNotRun[span] == "" {
			t.Errorf("docs/performance.md: command `%s` is not run by TestDocRecipes nor in perfNotRun", span)
		}
	}
	bin := buildCommand(t)
	for _, r := range docRecipes {
		f := strings.Fields(r.text[0])
		name := strings.ReplaceAll(filepath.Base(r.doc)+":"+strings.Join(f[:min(len(f), 3)], " "), "/", "_")
		t.Run(name, func(t *testing.T) {
			script := recipeText(t, root, r)
			if r.long && testing.Short() {
				t.Skip("-short: builds a test binary or copies and syncs trees (make test-long runs it)")
			}
			for _, p := range r.needs {
				sysfiles.NeedProgram(t, p)
			}
			rr := &recipeRun{root: root, tmp: t.TempDir(), elf: filepath.Join(root, "testdata", "link", "x86_64", "leveldb.exe")}
			rr.bin = filepath.Join(rr.tmp, "bin")
			for _, d := range []string{rr.bin, filepath.Join(rr.tmp, "work")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			copyFile(t, bin, filepath.Join(rr.bin, "sframe-gen"))
			if err := os.Chmod(filepath.Join(rr.bin, "sframe-gen"), 0o755); err != nil {
				t.Fatal(err)
			}
			copyFile(t, rr.elf, filepath.Join(rr.tmp, "llvm.so"))
			copyFile(t, rr.elf, filepath.Join(rr.tmp, "libLLVM.so"))
			if r.setup != nil {
				r.setup(t, rr)
			}
			dir := root
			if r.inTemp {
				dir = filepath.Join(rr.tmp, "work")
			}
			env := make([]string, len(r.env))
			for i, e := range r.env {
				env[i] = rr.expand(e)
			}
			start := time.Now()
			out := rr.bash(t, dir, rr.expand(script), env...)
			t.Logf("%s: %.1f s\n%s", name, time.Since(start).Seconds(), script)
			if r.after != "" {
				out += rr.bash(t, dir, rr.expand(r.after))
			}
			for _, w := range r.want {
				if !regexp.MustCompile(strings.ReplaceAll(w, "{T}", regexp.QuoteMeta(rr.tmp))).MatchString(out) {
					t.Errorf("the output does not match %q:\n%s", w, out)
				}
			}
		})
	}
}

// recipeText returns r's text in its document (a Go file's: a code
// block of its comments) with its substitutions made, failing t when the
// document does not have it or a substitution changes nothing.
func recipeText(t *testing.T, root string, r docRecipe) string {
	t.Helper()
	doc := readDoc(t, root, r.doc)
	var parts []string
	for _, s := range r.text {
		if r.fenced && strings.HasSuffix(r.doc, ".go") {
			i := slices.IndexFunc(commentCodeBlocks(t, filepath.Join(root, r.doc)), func(b string) bool { return strings.HasPrefix(b, s+"\n") })
			if i < 0 {
				t.Fatalf("%s has no code block starting with %q in its comments", r.doc, s)
			}
			parts = append(parts, commentCodeBlocks(t, filepath.Join(root, r.doc))[i])
			continue
		}
		if r.fenced {
			b, ok := fencedBlock(doc, s)
			if !ok {
				t.Fatalf("%s has no block starting with %q", r.doc, s)
			}
			parts = append(parts, b)
			continue
		}
		if !slices.Contains(docCodeSpans(doc), s) {
			t.Fatalf("%s has no command `%s`", r.doc, s)
		}
		parts = append(parts, s)
	}
	text := strings.Join(parts, "\n")
	for _, s := range r.subst {
		re := regexp.MustCompile("(?m)" + s.old)
		if !re.MatchString(text) {
			t.Fatalf("%s: %q is not in the recipe (it changed?):\n%s", r.doc, s.old, text)
		}
		text = re.ReplaceAllString(text, s.new)
	}
	return text
}

// fencedBlock returns the text of the fenced block of doc whose first line
// is first.
func fencedBlock(doc, first string) (string, bool) {
	for _, b := range docFencedBlocks(doc) {
		if strings.HasPrefix(b.text, first+"\n") {
			return b.text, true
		}
	}
	return "", false
}

// docFenced is a fenced code block of a document.
type docFenced struct {
	line int    // the line of its opening fence
	lang string // what follows the fence (go, sh, json, ...)
	text string // its lines, the fence's indentation removed
}

// docFencedBlocks returns the fenced blocks of a Markdown document, also
// those indented in a list.
func docFencedBlocks(doc string) []docFenced {
	var blocks []docFenced
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		indent, lang, ok := strings.Cut(lines[i], "```")
		if !ok || strings.TrimSpace(indent) != "" {
			continue
		}
		var body strings.Builder
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body.WriteString(strings.TrimPrefix(lines[j], indent) + "\n")
		}
		blocks = append(blocks, docFenced{line: i + 1, lang: strings.TrimSpace(lang), text: body.String()})
		i = j
	}
	return blocks
}

// docCommand matches a code span that starts as a command does: a script
// or program of testdata, go, make, perf, valgrind, /usr/bin/time, or a
// variable set before one. Its text may run over two lines.
var docCommand = regexp.MustCompile("^(?:testdata/|go\\s|make\\s|perf\\s|valgrind\\s|/usr/bin/time\\s|[A-Z_]+=\\S+\\s)")

// docCommandSpans returns the code spans of a document's prose that
// docCommand matches.
func docCommandSpans(doc string) []string {
	var spans []string
	for _, s := range docCodeSpans(doc) {
		if docCommand.MatchString(s) {
			spans = append(spans, s)
		}
	}
	return spans
}

// docCodeSpans returns the code spans of a document's prose (fenced
// blocks left out), each with its white space as one space.
func docCodeSpans(doc string) []string {
	var prose strings.Builder
	lines := strings.Split(doc, "\n")
	in := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			prose.WriteString(l + "\n")
		}
	}
	var spans []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(prose.String(), -1) {
		spans = append(spans, strings.Join(strings.Fields(m[1]), " "))
	}
	return spans
}

// readDoc reads the document name (relative to the tree's root).
func readDoc(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expand replaces {T}, {ELF} and {ROOT} (the tree's root) in s.
func (r *recipeRun) expand(s string) string {
	return strings.NewReplacer("{T}", r.tmp, "{ELF}", r.elf, "{ROOT}", r.root).Replace(s)
}

// bash runs script with bash -e in dir, the test's bin directory first in
// $PATH, and returns its output; a failure fails t.
func (r *recipeRun) bash(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+r.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+r.tmp, "MAKEFLAGS=BIN="+filepath.Join(r.bin, "sframe-gen"), "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s\n--- output:\n%s", err, script, out)
	}
	return string(out)
}

// run runs a setup command (with {T} and {ELF}) in the tree's root.
func (r *recipeRun) run(t *testing.T, script string) {
	t.Helper()
	r.bash(t, r.root, r.expand(script))
}

// copyTree copies the files of testdata matching pattern into {T}/dir,
// each named by its path under testdata (link-x86_64-lazy.so).
func (r *recipeRun) copyTree(t *testing.T, dir, pattern string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(r.root, "testdata", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/%s: no files (%v)", pattern, err)
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Join(r.tmp, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join(r.root, "testdata"), f)
		copyFile(t, f, filepath.Join(r.tmp, dir, strings.ReplaceAll(rel, "/", "-")))
	}
}

// writeFile writes a file into the test's directory.
func (r *recipeRun) writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(r.tmp, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.tmp, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeScript writes an executable script into the test's bin directory.
func (r *recipeRun) writeScript(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.bin, name), []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// needPerfRecord skips t (fails it under CI=true) when perf cannot
// record here: perf_event_open refused (perf_event_paranoid above 1 for a
// user without CAP_PERFMON, or a container's seccomp profile).
func needPerfRecord(t *testing.T, r *recipeRun) {
	t.Helper()
	out, err := exec.Command("perf", "record", "-e", "cpu-clock", "-o", filepath.Join(r.tmp, "probe.data"), "--", "true").CombinedOutput()
	if err != nil {
		paranoid, _ := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
		sysfiles.NeedInput(t, "perf record fails here (perf_event_paranoid %s): %v: as root, echo 1 > /proc/sys/kernel/perf_event_paranoid, or allow perf_event_open in the container\n%s",
			strings.TrimSpace(string(paranoid)), err, out)
	}
}
