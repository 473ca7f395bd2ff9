package sframegen_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/emit"
)

// TestReadmeProgram builds the program of the README's "Use it as a Go
// library" and runs it on linked libraries of testdata for x86-64, AArch64
// and s390x (gasmix.so has flex FDEs, outermost FREs, signed return
// addresses, signal trampolines and FDEs without FREs): at the first and
// the last byte of every FRE of every function, its line must say what
// the dump of the same section says there (emit.Dump, what sframe-gen dump
// prints), column by column. Bad arguments are usage errors (exit 2).
func TestReadmeProgram(t *testing.T) {
	prog := buildReadmeProgram(t)
	t.Run("usage", func(t *testing.T) {
		lib := filepath.Join("testdata", "link", "x86_64", "direct.so")
		for _, args := range [][]string{nil, {lib}, {lib, "zz"}, {lib, "0x10", "-1"}} {
			out, code := runProgram(t, prog, args...)
			if code != 2 || !strings.Contains(out, "usage: where FILE PC...") {
				t.Errorf("where %q: exit %d, output %q; want exit 2 and the usage", args, code, out)
			}
		}
		out, code := runProgram(t, prog, "testdata/no-such-file", "0x10")
		if code != 1 || !strings.Contains(out, "testdata/no-such-file") {
			t.Errorf("where on a missing file: exit %d, output %q; want exit 1 naming the file", code, out)
		}
	})
	for _, arch := range []readmeArch{
		{name: "x86_64", sp: 7, fp: 6},
		{name: "aarch64", sp: 31, fp: 29},
		{name: "s390x", sp: 15, fp: 11},
	} {
		for _, lib := range []string{"gasmix.so", "direct.so"} {
			t.Run(arch.name+"/"+lib, func(t *testing.T) {
				checkReadmeProgram(t, prog, arch, filepath.Join("testdata", "link", arch.name, lib))
			})
		}
	}
}

// readmeArch names an ABI's stack and frame pointers (DWARF numbers), which
// the dump calls sp and fp.
type readmeArch struct {
	name   string
	sp, fp int
}

// checkReadmeProgram compares the program's answers on lib with the dump.
func checkReadmeProgram(t *testing.T, prog string, arch readmeArch, lib string) {
	sec, err := sframegen.GenerateFile(lib, sframegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := emit.Decode(sec.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	if err := emit.Dump(&dump, dec, sec.Addr, ".sframe"); err != nil {
		t.Fatal(err)
	}
	want := expectedFromDump(t, dump.String(), arch)
	if len(want) < 20 {
		t.Fatalf("only %d addresses to check in %s", len(want), lib)
	}
	args := []string{lib}
	for _, w := range want {
		args = append(args, fmt.Sprintf("%#x", w.pc))
	}
	out, code := runProgram(t, prog, args...)
	if code != 0 {
		t.Fatalf("where: exit %d\n%s", code, out)
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines for %d addresses:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		if got[i] != w.line {
			t.Errorf("%s at %#x: the program printed\n\t%s\nthe dump says\n\t%s", lib, w.pc, got[i], w.line)
		}
	}
	for _, must := range mustSee[filepath.Base(lib)+"/"+arch.name] {
		if !strings.Contains(out, must) {
			t.Errorf("%s: no line with %q: the test no longer covers that case", lib, must)
		}
	}
	t.Logf("%s: %d addresses", lib, len(want))
}

// mustSee lists, per library and ABI, what some line must say: the cases
// the program must get right are in gasmix.so.
var mustSee = map[string][]string{
	"gasmix.so/x86_64":  {"outermost frame", "no SFrame", "FP = [CFA-16]", "CFA = [r6-8]", "RA = r11+0"},
	"gasmix.so/aarch64": {"outermost frame", "no SFrame", "RA = unchanged", "(signed: authenticate it)"},
	"gasmix.so/s390x":   {"outermost frame", "no SFrame", "RA = unchanged", "RA = r16+0"},
}

// expected is what the program must print at pc.
type expected struct {
	pc   uint64
	line string
}

var (
	dumpFunc = regexp.MustCompile(`^    func idx \[\d+\]: pc = 0x([0-9a-f]+), size = (\d+) bytes(.*)$`)
	dumpFRE  = regexp.MustCompile(`^    ([0-9a-f]{16})  (.*?) *$`)
	dumpRA   = regexp.MustCompile(`^    CFA fixed RA offset: (-?\d+)$`)
	// The columns are padded to 10, 10 and 13 characters, and touch when
	// a rule is longer (sp+2147483647u).
	dumpCols = regexp.MustCompile(`^(` + dumpRule + `) *(u|` + dumpRule + `) *([fuU]|` + dumpRule + `)(\[s\])?$`)
)

// dumpRule is a rule in the dump: sp+8, c-16, r10+0, (fp-8), and sp+-8
// (a default FDE's negative CFA offset).
const dumpRule = `\(?[a-z]+\d*(?:\+|\+-|-)\d+\)?`

var ()

// dumpFunction is one function of the dump: where it is, whether its FDE
// is a flex or a PC-mask one, and its FRE rows.
type dumpFunction struct {
	pc, size   uint64
	flex, mask bool
	rows       []dumpRow
}

// dumpRow is one FRE row: its absolute start and its columns (nil for "RA
// undefined").
type dumpRow struct {
	start uint64
	cols  []string
}

// expectedFromDump reads the dump's functions and returns, for the first
// and the last byte of every FRE of every function that is not a PC-mask
// one (PLT stubs print offsets, not addresses), and for the first byte of
// every function without FREs, the line the program must print.
func expectedFromDump(t *testing.T, dump string, arch readmeArch) []expected {
	fixedRA, funcs := parseDump(t, dump)
	var want []expected
	for _, f := range funcs {
		if f.mask {
			continue
		}
		if len(f.rows) == 0 {
			want = append(want, expected{f.pc, fmt.Sprintf("%#x: no SFrame (no function, or before its first FRE)", f.pc)})
		}
		for j, row := range f.rows {
			end := f.pc + f.size
			if j+1 < len(f.rows) {
				end = f.rows[j+1].start
			}
			if row.start >= end {
				continue // an FRE at the function's end covers no byte
			}
			pcs := []uint64{row.start}
			if end-1 > row.start {
				pcs = append(pcs, end-1)
			}
			for _, pc := range pcs {
				want = append(want, expected{pc, fmt.Sprintf("%#x: %s", pc, arch.answer(row, f.flex, fixedRA))})
			}
		}
	}
	return want
}

// parseDump reads the header's fixed RA offset and the functions of a dump.
func parseDump(t *testing.T, dump string) (fixedRA int, funcs []dumpFunction) {
	sc := bufio.NewScanner(strings.NewReader(dump))
	for sc.Scan() {
		line := sc.Text()
		if m := dumpRA.FindStringSubmatch(line); m != nil {
			fixedRA, _ = strconv.Atoi(m[1])
		} else if m := dumpFunc.FindStringSubmatch(line); m != nil {
			pc, _ := strconv.ParseUint(m[1], 16, 64)
			size, _ := strconv.ParseUint(m[2], 10, 64)
			funcs = append(funcs, dumpFunction{pc: pc, size: size, flex: strings.Contains(m[3], `attr = "`) && strings.Contains(m[3], "F")})
		} else if strings.Contains(line, "STARTPC[m]") {
			funcs[len(funcs)-1].mask = true
		} else if m := dumpFRE.FindStringSubmatch(line); m != nil {
			start, _ := strconv.ParseUint(m[1], 16, 64)
			row := dumpRow{start: start}
			if m[2] != "RA undefined" {
				cols := dumpCols.FindStringSubmatch(m[2])
				if cols == nil {
					t.Fatalf("dump row %q: not CFA, FP and RA columns", line)
				}
				row.cols = []string{cols[1], cols[2], cols[3] + cols[4]}
			}
			f := &funcs[len(funcs)-1]
			f.rows = append(f.rows, row)
		}
	}
	if len(funcs) == 0 {
		t.Fatalf("no function in the dump:\n%s", dump)
	}
	return fixedRA, funcs
}

// answer is the program's text for a dump row: CFA, RA and FP in its
// notation. The dump writes sp, fp and rN for registers, c for the CFA,
// (x) for the word at x (flex FDEs), u for no rule, f for the fixed RA
// offset, U for an RA padding word (the fixed offset, if the ABI has one,
// applies) and [s] after a signed return address. A CFA-based FP or RA rule
// is where the register was saved: the word at that address.
func (a readmeArch) answer(row dumpRow, flex bool, fixedRA int) string {
	if row.cols == nil {
		return "outermost frame: the return address is undefined, stop"
	}
	cfa, fp, ra := row.cols[0], row.cols[1], row.cols[2]
	ra, signed := strings.CutSuffix(ra, "[s]")
	raText := a.saved(ra, fixedRA)
	if signed {
		raText += " (signed: authenticate it)"
	}
	return fmt.Sprintf("CFA = %s, RA = %s, FP = %s", a.rule(cfa), raText, a.saved(fp, fixedRA))
}

// saved translates an FP or RA column.
func (a readmeArch) saved(col string, fixedRA int) string {
	switch {
	case col == "u", col == "U" && fixedRA == 0:
		return "unchanged"
	case col == "f", col == "U":
		return fmt.Sprintf("[CFA%+d]", fixedRA)
	case strings.HasPrefix(col, "c"):
		return "[" + a.rule(col) + "]"
	}
	return a.rule(col)
}

// rule translates a register rule: sp+8, r10+0, (fp-8).
func (a readmeArch) rule(col string) string {
	if inner, ok := strings.CutPrefix(col, "("); ok {
		return "[" + a.rule(strings.TrimSuffix(inner, ")")) + "]"
	}
	i := strings.IndexAny(col, "+-")
	if i < 0 {
		return "?" + col
	}
	name := col[:i]
	off, err := strconv.Atoi(strings.TrimPrefix(col[i:], "+"))
	if err != nil {
		return "?" + col
	}
	switch name {
	case "sp":
		name = "r" + strconv.Itoa(a.sp)
	case "fp":
		name = "r" + strconv.Itoa(a.fp)
	case "c":
		name = "CFA"
	}
	return fmt.Sprintf("%s%+d", name, off)
}

// buildReadmeProgram writes the README's program into a module of its own
// outside the tree (replacing the module's path with this tree) and
// builds it offline from the module cache.
func buildReadmeProgram(t *testing.T) string {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Use it as a Go library")
	if !ok {
		t.Fatal(`README.md has no "## Use it as a Go library"`)
	}
	_, code, ok := strings.Cut(after, "```go\n")
	if ok {
		code, _, ok = strings.Cut(code, "```")
	}
	if !ok {
		t.Fatal("no Go program in the README's library section")
	}
	dir := docModule(t, map[string]string{"main.go": code})
	prog := filepath.Join(dir, "where")
	if out, err := goInModule(dir, "build", "-o", prog, "."); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return prog
}

// docModule writes files (names relative to the module's directory) into a
// new module outside the tree that requires this tree's module in place
// (a replace directive) and has its go.sum, and returns its directory.
func docModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files["go.mod"] = "module readme\n\ngo 1.22\n\nrequire github.com/sframe-gen/sframe-gen v0.0.0\n\nreplace github.com/sframe-gen/sframe-gen => " + root + "\n"
	files["go.sum"] = string(sum)
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goInModule runs the go command in a module made by docModule, offline
// (from the module cache) and outside any workspace.
func goInModule(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	return cmd.CombinedOutput()
}

// runProgram runs prog with args and returns its output (stdout and
// stderr) and exit status.
func runProgram(t *testing.T, prog string, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(prog, args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("%s: %v", prog, err)
	return "", -1
}

// TestDocsGoBlocks builds every Go code block of README.md, docs/*.md and
// the library packages' doc comments, each where it is written (a //line
// directive: an error names the document and its line), in a module that
// uses this tree. A block that starts with "package" is a file of its own;
// one that starts with a declaration (func, type, var, const; after its
// doc comment) is put in a
// file, the rest in a function body; the packages a block names (fmt.,
// emit., ...) are imported for it. So a block must declare what it uses.
func TestDocsGoBlocks(t *testing.T) {
	blocks := docGoBlocks(t)
	if len(blocks) < 3 {
		t.Fatalf("only %d Go blocks found in the docs: the extraction is broken", len(blocks))
	}
	files := map[string]string{}
	for i, b := range blocks {
		files[fmt.Sprintf("b%02d/block.go", i)] = b.source(fmt.Sprintf("b%02d", i))
	}
	dir := docModule(t, files)
	if out, err := goInModule(dir, "vet", "./..."); err != nil {
		t.Errorf("a Go block of the docs does not build: %v\n%s", err, out)
	}
	for _, b := range blocks {
		t.Logf("%s:%d: %d lines", b.file, b.line, strings.Count(b.code, "\n"))
	}
}

// docBlock is a Go code block of a document: where it starts and its text.
type docBlock struct {
	file string
	line int // of the block's first line
	code string
}

// docImports are the packages a block may name, by the name it uses.
var docImports = map[string]string{
	"bytes": "bytes", "elf": "debug/elf", "errors": "errors", "fmt": "fmt", "io": "io",
	"log": "log", "os": "os", "strconv": "strconv", "strings": "strings",
	"sframegen": "github.com/sframe-gen/sframe-gen",
	"cfi":       "github.com/sframe-gen/sframe-gen/cfi",
	"lower":     "github.com/sframe-gen/sframe-gen/lower",
	"emit":      "github.com/sframe-gen/sframe-gen/emit",
	"verify":    "github.com/sframe-gen/sframe-gen/emit/verify",
	"unwind":    "github.com/sframe-gen/sframe-gen/emit/unwind",
	"elfpatch":  "github.com/sframe-gen/sframe-gen/elfpatch",
	"replace":   "github.com/sframe-gen/sframe-gen/elfpatch/replace",
	"elfread":   "github.com/sframe-gen/sframe-gen/elfpatch/elfread",
}

// source is the block as a Go file of package pkg (main for a program).
func (b docBlock) source(pkg string) string {
	abs, _ := filepath.Abs(b.file) // a //line name is relative to the file's directory
	at := fmt.Sprintf("//line %s:%d\n", abs, b.line)
	if strings.HasPrefix(b.code, "package ") {
		return at + b.code
	}
	var imports strings.Builder
	for name, path := range docImports {
		if regexp.MustCompile(`\b` + name + `\.`).MatchString(b.code) {
			fmt.Fprintf(&imports, "import %s %q\n", name, path)
		}
	}
	head := "package " + pkg + "\n\n" + imports.String() + "\n"
	if regexp.MustCompile(`^(//.*\n)*(func|type|var|const) `).MatchString(b.code) {
		return head + at + b.code
	}
	return head + "func _() {\n" + at + b.code + "}\n"
}

// docGoBlocks returns the Go blocks of README.md and docs/*.md (fenced
// ```go) and of the package doc comments of the library's packages (code
// blocks, as go doc shows them).
func docGoBlocks(t *testing.T) []docBlock {
	var blocks []docBlock
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	fence := regexp.MustCompile("(?s)\n```go\n(.*?)```")
	for _, name := range append([]string{"README.md"}, docs...) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range fence.FindAllStringSubmatchIndex(text, -1) {
			line := strings.Count(text[:m[2]], "\n") + 1
			blocks = append(blocks, docBlock{name, line, text[m[2]:m[3]]})
		}
	}
	for _, dir := range []string{".", "cfi", "lower", "emit", "emit/verify", "emit/unwind", "elfpatch"} {
		blocks = append(blocks, packageDocBlocks(t, dir)...)
	}
	return blocks
}

// packageDocBlocks returns the code blocks of the package doc comment of
// the package in dir. A comment's code block is indented by a tab; its
// lines are found in the file by their text.
func packageDocBlocks(t *testing.T, dir string) []docBlock {
	fset := token.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	for _, p := range pkgs {
		for name, f := range p.Files {
			if f.Doc == nil {
				continue
			}
			var parse comment.Parser
			for _, blk := range parse.Parse(f.Doc.Text()).Content {
				code, ok := blk.(*comment.Code)
				if !ok {
					continue
				}
				first, _, _ := strings.Cut(code.Text, "\n")
				line := fset.Position(f.Doc.Pos()).Line
				for _, c := range f.Doc.List {
					if strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "\t") == first {
						line = fset.Position(c.Pos()).Line
						break
					}
				}
				blocks = append(blocks, docBlock{name, line, code.Text})
			}
		}
	}
	return blocks
}
