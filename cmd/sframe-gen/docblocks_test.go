package main

import (
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A docClaim says which test builds, runs or compares a fenced block of
// the docs, the block found by its document and first line: test is the
// test function (it reads the block from the document), or "" with note
// saying what the block is and why no test reads it.
type docClaim struct {
	test string
	note string
}

// docBlockClaims are the fenced blocks of README.md and docs/*.md other
// than Go blocks (TestDocsGoBlocks builds every one) and docRecipes' (run
// by TestDocRecipes), keyed "DOC:FIRST LINE".
var docBlockClaims = map[string]docClaim{
	"README.md:make run        # builds bin/sframe-gen and runs it on a sample ELF under testdata/":                     {note: "make run writes bin/ of the tree; make test and make test-long are the suite itself"},
	"README.md:CGO_ENABLED=0 go install github.com/sframe-gen/sframe-gen/cmd/sframe-gen@latest":                         {note: "needs the network (the module proxy)"},
	"README.md:sframe-gen [flags] FILE             generate SFrame for FILE, replacing it atomically":                   {note: "the synopsis"},
	"README.md:sframe-gen -j 8 --report sframe.jsonl debian/tmp/     # in place, 8 files at once, a JSON line per file": {test: "TestReadmeBatchExamples"},
	"README.md:sframe-gen ./app                                                      # the program, in place":           {test: "TestStackReadmeRecipe"},
	"docs/architecture.md:ELF file ──► cfi ──────────► lower ─────────────► emit ──────────► elfpatch ──► ELF file":     {note: "a diagram"},
	"docs/batch.md:sframe-gen [flags] PATH...": {test: "TestDocSynopses"},
	"docs/batch.md:sframe-gen: 31 files: 18 patched, 1 up to date, 1 without CFI, 10 skipped, 1 failed; 144 functions covered":                                      {test: "TestBatchDocSamples"},
	`docs/batch.md:{"file":"lib/libfoo.so.1.2","status":"patched","kind":"shared-library","arch":"x86_64","bytes":15944,"fdes":11,"links":["lib/libfoo-again.so"]}`: {test: "TestBatchDocSamples"},
	`docs/batch.md:{"file":"bin/caf\ufffd","status":"patched","kind":"pie-executable","arch":"x86_64","bytes":16408,"fdes":6,"file_bytes":"YmluL2NhZuk="}`:          {test: "TestReportNamesExact"},
	"docs/dump.md:sframe-gen dump [--json] FILE...      (several FILEs: each after a line naming it, as objdump does)":                                              {test: "TestDocSynopses"},
	"docs/dump.md:{": {test: "TestDocJSONKeys"},
	"docs/golden.md:AS=${AS:-as} OBJCOPY=${OBJCOPY:-objcopy} READELF=${READELF:-readelf}   # binutils 2.46+, for the target": {test: "TestGoldenRecipe"},
	"docs/integration.md:SFRAME_GEN ?= sframe-gen":                                   {test: "TestIntegrationDocExcerpts"},
	"docs/integration.md:sframe_gen = find_program('sframe-gen')":                    {test: "TestIntegrationDocExcerpts"},
	"docs/integration.md:Build-Depends: debhelper-compat (= 13), dh-sequence-sframe": {note: "a debian/control line; TestIntegration's deb and debpkg packages use it (not this text)"},
	"docs/integration.md:export DEB_SFRAME_OBJECTS = 1":                              {test: "TestIntegration"},
	"docs/integration.md:override_dh_sframe:":                                        {test: "TestIntegrationDocExcerpts"},
	"docs/integration.md:execute_before_dh_strip:":                                   {note: "a debian/rules rule for a package without the add-on: no test"},
	"docs/integration.md:dpkg-buildpackage -us -uc -b -d":                            {note: "builds and installs sframe-gen's own package (sudo dpkg -i); TestIntegration's debpkg builds it (not this text)"},
	"docs/integration.md:%__brp_sframe_gen %{__sframe_gen} %{__sframe_gen_flags} %{?_smp_build_ncpus:-j %{_smp_build_ncpus}} -- \"%{buildroot}\"": {test: "TestIntegrationDocExcerpts"},
	"docs/integration.md:rpmbuild -bb --build-in-place docs/integration/sframe-gen.spec":                                                          {note: "TestIntegration's rpmpkg builds the spec from a copy of the tree (not this text)"},
	"docs/integration.md:install-exec-hook:":                                                                                                              {test: "TestIntegrationDocExcerpts"},
	"docs/lower.md:CFA offset N not representable on s390x (stored as (offset-160)/8 in 32 bits)":                                                         {test: "TestLowerDocReasons"},
	"docs/lower.md:non-default RA register N":                                                                                                             {test: "TestLowerDocReasons"},
	"docs/performance.md:file                     FDEs  re_wall raw_wal  raw/re raw0/re cp_wall pat_wal  pat/cp rep_wal RSS_Mi  ns/FDE":                   {note: "measured figures (bench.sh's table, machine A)"},
	"docs/robustness.md:go test -run 'TestDamage$' -v ./cmd/sframe-gen                                      # default damage run":                         {note: "runs tests of the suite (make test-long), the race detector and the fuzzers, for minutes to hours"},
	"docs/rows.md:sframe-gen rows [--json] [--eh-frame | --debug-frame] FILE...   (several FILEs: each after a line naming it)":                           {test: "TestDocSynopses"},
	`docs/rows.md:{"start":4096,"end":4160,"rows":[`:                                                                                                      {test: "TestDocJSONKeys"},
	"docs/rows.md:FDE 0x18 pc 0x0..0x14 CIE 0x0 section 1":                                                                                                {test: "TestRowsDocSample"},
	"docs/rows.md:sframe-gen: FILE: .eh_frame: offset 0x208: instruction at offset 0x21a: DW_CFA_GNU_negative_offset_extended: operand runs past the end": {note: "the form of a message"},
	"docs/stack.md:sframe-gen stack [--json] [--sysroot DIR] CORE":                                                                                        {test: "TestDocSynopses"},
	"docs/stack.md:$ sframe-gen stack core":                                                                                                               {note: "sample output (a walk of a C++ exception's core)"},
	"docs/stack.md:SFRAME_STACK_STOPS=125 go test ./cmd/sframe-gen -run 'TestStackAgainstGDB/s390x' -timeout 4h -v":                                       {note: "a test of the suite with more stops: 4 hours"},
	"docs/stats.md:testdata/gas/x86_64/warnings.o: dry run: the .sframe section generating would write (SFRAME_ABI_AMD64_ENDIAN_LITTLE, version 3)":       {test: "TestStatsDocSamples"},
	"docs/stats.md:{": {test: "TestStatsDocSamples"},
	"docs/stats.md:$ sframe-gen stats --dry-run testdata/link":                                                {test: "TestStatsDocExample"},
	"docs/verify.md:sframe-gen: FILE: FUNCTION@0xADDR: what SFrame says vs what the CFI says [0xADDR, 0xEND)": {note: "the form of a message"},
	"docs/verify.md:$ nice testdata/system-check.sh -j 2":                                                     {note: "measured output of a run over /usr (minutes)"},
}

// TestDocBlocksClaimed checks that every fenced block of README.md and
// docs/*.md is built or run by a test, or says why not: a Go block
// (TestDocsGoBlocks builds them all), a recipe of docRecipes
// (TestDocRecipes), or an entry of docBlockClaims naming a test that
// exists and reads it, or a note. A new block without one fails the test,
// as does a claim whose block is gone. It logs the blocks no test reads.
func TestDocBlocksClaimed(t *testing.T) {
	root := filepath.Join(testdataDir(), "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	recipes := fencedRecipes()
	tests := moduleTests(t, root)
	used := map[string]bool{}
	var blocks, tested int
	for _, path := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		name, _ := filepath.Rel(root, path)
		for _, b := range docFencedBlocks(readDoc(t, root, name)) {
			blocks++
			first, _, _ := strings.Cut(b.text, "\n")
			key := name + ":" + strings.TrimRight(first, " ")
			used[key] = true
			claim, claimed := docBlockClaims[key]
			switch {
			case b.lang == "go":
				tested++
				if claimed {
					t.Errorf("%s:%d: a Go block (TestDocsGoBlocks builds it) has a claim too", name, b.line)
				}
			case recipes[key] && claimed && claim.test != "TestDocRecipes":
				t.Errorf("%s:%d: run by TestDocRecipes, claimed by %q", name, b.line, claim.test)
			case recipes[key] || claimed && claim.test != "" && claim.test != "TestDocRecipes":
				tested++
				if claim.test != "" && !tests[claim.test] {
					t.Errorf("%s:%d: claimed by %s, which is no test of the module", name, b.line, claim.test)
				}
			case claimed && claim.test == "TestDocRecipes":
				t.Errorf("%s:%d: claimed by TestDocRecipes, which does not run it (no docRecipes entry)", name, b.line)
			case claimed && claim.note != "":
				t.Logf("%s:%d: no test: %s", name, b.line, claim.note)
			default:
				t.Errorf("%s:%d: no test builds or runs this block, and docBlockClaims does not say why:\n%s", name, b.line, b.text)
			}
		}
	}
	for key := range docBlockClaims {
		if !used[key] {
			t.Errorf("docBlockClaims: no block %q (changed or gone?)", key)
		}
	}
	for key := range recipes {
		if !used[key] && !strings.HasSuffix(key[:strings.Index(key, ":")], ".go") {
			t.Errorf("docRecipes: no block %q (changed or gone?)", key)
		}
	}
	t.Logf("%d fenced blocks: %d built, run or compared by a test, %d not", blocks, tested, blocks-tested)
}

// fencedRecipes returns the keys ("DOC:FIRST LINE") of the blocks
// docRecipes runs.
func fencedRecipes() map[string]bool {
	recipes := map[string]bool{}
	for _, r := range docRecipes {
		if r.fenced {
			recipes[r.doc+":"+r.text[0]] = true
		}
	}
	return recipes
}

// moduleTests returns the names of the test functions of the module in
// root and of testdata's own modules.
func moduleTests(t *testing.T, root string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	tests := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			tests[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tests
}

// docCommentClaims are the code blocks of the Go doc comments of the
// module (its commands and testdata's programs included), keyed
// "FILE:FIRST LINE", as docBlockClaims for the documents.
var docCommentClaims = map[string]docClaim{
	"doc.go:sec, err := sframegen.GenerateFile(\"libfoo.so\", sframegen.Options{})":                                                                                {test: "TestDocsGoBlocks"},
	"lower/pltaarch64.go:PLT0 (32 bytes)   [bti c;] stp x16, x30, [sp, #-16]!; adrp x16; ldr x17, [x16, #lo];":                                                     {note: "a table of the PLT templates"},
	"emit/verify/pltcode.go:DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;":                                                                    {note: "a DWARF expression"},
	"cmd/sframe-gen/main.go:sframe-gen [flags] FILE            generate (the default command), in place or -o OUT":                                                 {note: "an overview of the synopses (TestDocSynopses checks the docs' with the help)"},
	"cfi/rowdump.go:{\"start\":4096,\"end\":4160,\"rows\":[{\"pc\":4096,\"cfa\":{\"reg\":7,\"offset\":8},\"regs\":{\"16\":{\"rule\":\"offset\",\"offset\":-8}}}]}": {note: "an example of the JSON form (TestDocJSONKeys checks docs/rows.md's)"},
	"cfi/rowdump.go:FDE 0x18 pc 0x1000..0x1040 CIE 0x0":                                                                                                            {note: "an example of the text form (TestRowsDocSample checks docs/rows.md's)"},
	"testdata/costtable/main.go:sframe-gen stats --json --dry-run /usr > usr.json":                                                                                 {test: "TestDocRecipes"},
	"testdata/lookupbench/main.go:lookupbench pcs SECTION-FILE PCS-FILE N     write N PCs (and every FRE start)":                                                   {note: "the synopsis; bench-lookup.sh (TestDocRecipes) and the cachegrind recipe run both forms"},
	"testdata/lookupbench/main.go:ns_per_lookup N found F checksum C":                                                                                              {note: "the output's form; TestDocRecipes's cachegrind recipe matches it"},
	"testdata/replacecopy/main.go:replacecopy [-j N] DIR":                                                                                                          {note: "the synopsis; bench-tree.sh (TestDocRecipes) runs it"},
	"testdata/lowertree/main.go:lowertree [-n RUNS] DIR":                                                                                                           {note: "the synopsis; bench-tree.sh (TestDocRecipes) runs it"},
	"testdata/alternate/main.go:go run ./testdata/alternate N 'PRE::CMD ARGS...' 'CMD ARGS...' ...":                                                                {note: "the synopsis; TestDocRecipes runs performance.md's alternate block"},
}

// TestDocCommentBlocksClaimed checks that every code block of a Go
// comment of the module (package and declaration docs, testdata's
// programs included; tests left out) is claimed in docCommentClaims: by
// a test that exists (TestDocRecipes: by a docRecipes entry), or with a
// note; and that no claim's block is gone.
func TestDocCommentBlocksClaimed(t *testing.T) {
	root := filepath.Join(testdataDir(), "..")
	recipes := fencedRecipes()
	tests := moduleTests(t, root)
	used := map[string]bool{}
	var blocks, tested int
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "fuzz-out") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		name, _ := filepath.Rel(root, path)
		for _, b := range commentCodeBlocks(t, path) {
			first, _, _ := strings.Cut(b, "\n")
			blocks++
			key := name + ":" + strings.TrimRight(first, " ")
			used[key] = true
			claim, ok := docCommentClaims[key]
			switch {
			case !ok:
				t.Errorf("%s: a code block of a comment no test builds or runs, and docCommentClaims does not say why: %q", name, first)
			case claim.test == "TestDocRecipes" && !recipes[key]:
				t.Errorf("%s: claimed by TestDocRecipes, which has no recipe for it", key)
			case claim.test != "" && !tests[claim.test]:
				t.Errorf("%s: claimed by %s, which is no test of the module", key, claim.test)
			case claim.test != "":
				tested++
			default:
				t.Logf("%s: no test: %s", key, claim.note)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range docCommentClaims {
		if !used[key] {
			t.Errorf("docCommentClaims: no block %q (changed or gone?)", key)
		}
	}
	t.Logf("%d code blocks in Go comments: %d built, run or compared by a test, %d not", blocks, tested, blocks-tested)
}

// commentCodeBlocks returns the code blocks of the comments of the Go
// file path.
func commentCodeBlocks(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, g := range f.Comments {
		var p comment.Parser
		for _, b := range p.Parse(g.Text()).Content {
			if c, ok := b.(*comment.Code); ok {
				blocks = append(blocks, c.Text)
			}
		}
	}
	return blocks
}
