package elfpatch

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/elfcheck"
	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// Sources whose objects have what moved between runs: SHT_NOBITS sections
// aligned more than the section before them, thread-local NOBITS, empty
// sections, COMDAT groups.
const (
	bssC = "static char big[4096];\nchar *get(int i){return &big[i];}\n"
	// Several NOBITS sections (-fdata-sections), of growing alignment,
	// between sections with bytes.
	manyBssC = `static char a[3] __attribute__((aligned(64)));
static long b[5];
static __thread char t[100] __attribute__((aligned(32)));
int d = 7;
static char e[1] __attribute__((aligned(4096)));
char *get(int i) { t[i]++; b[i]++; e[0]++; return &a[i] + d; }
`
	// Inline functions and template instances in COMDAT groups.
	groupsCC = `template <class T> struct S { static T v; T get(T x) { return x + v++; } };
template <class T> T S<T>::v;
inline int twice(int x) { return 2 * x; }
int use(int x) { S<int> s; S<long> l; return s.get(x) + l.get(x) + twice(x); }
`
)

// objectTarget is a compiler for relocatable objects and the relocation
// type .rela.sframe uses for its ABI.
type objectTarget struct {
	name, cc string
	reloc    uint32
}

var objectTargets = []objectTarget{
	{"x86_64", "gcc", uint32(elf.R_X86_64_PC64)},
	{"aarch64", "aarch64-linux-gnu-gcc", uint32(elf.R_AARCH64_PREL64)},
	{"s390x", "s390x-linux-gnu-gcc", uint32(elf.R_390_PC64)},
}

// TestPatchObjectFixedPoint: patching a patched object again with the same
// section gives its bytes (a second run writes nothing), for objects built
// by the real compilers of each ABI (both byte orders) and for layouts the
// compilers do not make. On the old layout, .bss moved on every run (its
// aligned sh_offset put it after the next section the run after), and an
// empty section tied at the offset of a section with bytes swapped with it.
func TestPatchObjectFixedPoint(t *testing.T) {
	type input struct {
		name string
		src  string
		lang string // "c" or "c++"
		args []string
		edit func(t *testing.T, obj []byte) []byte // a layout the compiler does not make
		only string                                // the one target it is built for, if not all
	}
	inputs := []input{
		{name: "bss", src: bssC, lang: "c", args: []string{"-O2"}},
		{name: "bss-O0", src: bssC, lang: "c", args: []string{"-O0"}},
		{name: "many-nobits", src: manyBssC, lang: "c", args: []string{"-O2", "-fdata-sections", "-ffunction-sections"}},
		// Debian 12's s390x assembler has no --gsframe; the second pass
		// of checkFixedPoint replaces an existing .sframe on every target.
		{name: "gas-sframe", src: bssC, lang: "c", args: []string{"-O2", "-Wa,--gsframe"}, only: "x86_64"},
		{name: "gas-sframe", src: bssC, lang: "c", args: []string{"-O2", "-Wa,--gsframe"}, only: "aarch64"},
		{name: "groups", src: groupsCC, lang: "c++", args: []string{"-O0"}},
		// Edits of a little-endian object's section headers.
		{name: "empty-aligned-ties", src: bssC, lang: "c", args: []string{"-O2"}, edit: emptySectionTies, only: "x86_64"},
		{name: "null-section", src: bssC, lang: "c", args: []string{"-O2"}, edit: nullSection, only: "x86_64"},
		{name: "aligned-past-input", src: bssC, lang: "c", args: []string{"-O2"}, edit: textAlignedToPage, only: "x86_64"},
	}
	for _, tg := range objectTargets {
		for _, in := range inputs {
			if in.only != "" && in.only != tg.name {
				continue
			}
			t.Run(tg.name+"/"+in.name, func(t *testing.T) {
				obj := compileObject(t, tg.cc, in.lang, in.src, in.args...)
				if in.edit != nil {
					obj = in.edit(t, obj)
				}
				checkFixedPoint(t, obj, tg.reloc)
			})
		}
	}
}

// checkFixedPoint patches obj, then the output, with a section of each of
// two sizes, and wants the output of each patch to patch into itself.
func checkFixedPoint(t *testing.T, obj []byte, relocType uint32) {
	t.Helper()
	text := textSection(t, obj)
	for _, size := range []int{44, 60} {
		sf := bytes.Repeat([]byte{0x5a}, size)
		relocs := []Reloc{{Offset: 28, Type: relocType, Section: text}}
		first, err := PatchObjectBytes(obj, sf, relocs)
		if err != nil {
			t.Fatalf("first patch: %v", err)
		}
		if err := elfcheck.CheckPreserved(obj, first); err != nil {
			t.Fatalf("first patch does not keep the input: %v", err)
		}
		checkNobitsAligned(t, first)
		second, err := PatchObjectBytes(first, sf, relocs)
		if err != nil {
			t.Fatalf("second patch: %v", err)
		}
		if !bytes.Equal(second, first) {
			t.Fatalf("%d-byte section: second patch differs from the first:\nfirst:\n%s\nsecond:\n%s",
				size, sectionOffsets(t, first), sectionOffsets(t, second))
		}
		obj = first // the next size replaces an existing .sframe
	}
}

// compileObject compiles src with cc (skipped, or failed under CI, when cc
// is missing) and returns the object.
func compileObject(t *testing.T, cc, lang, src string, args ...string) []byte {
	t.Helper()
	sysfiles.NeedProgram(t, cc)
	dir := t.TempDir()
	out := filepath.Join(dir, "in.o")
	args = append(append([]string{"-x", lang, "-c", "-o", out}, args...), "-")
	cmd := exec.Command(cc, args...)
	cmd.Stdin = bytes.NewBufferString(src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", cc, args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// textSection returns the index of obj's first executable section.
func textSection(t *testing.T, obj []byte) uint32 {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Size > 0 {
			return uint32(i)
		}
	}
	t.Fatal("no executable section")
	return 0
}

// checkNobitsAligned wants every SHT_NOBITS section of obj at an offset
// its alignment (up to a page) allows, as GNU as places them.
func checkNobitsAligned(t *testing.T, obj []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections {
		if a := min(max(s.Addralign, 1), maxFileAlign); s.Type == elf.SHT_NOBITS && s.Offset%a != 0 {
			t.Errorf("%s at offset %#x, not aligned to %d", s.Name, s.Offset, a)
		}
	}
}

// sectionOffsets lists the sections of obj with their offsets and sizes.
func sectionOffsets(t *testing.T, obj []byte) string {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return err.Error()
	}
	var b bytes.Buffer
	for i, s := range f.Sections {
		fmt.Fprintf(&b, "  [%2d] %-20s %-14v off %#06x size %#x align %d\n", i, s.Name, s.Type, s.Offset, s.Size, s.Addralign)
	}
	return b.String()
}

// emptySectionTies gives the object's .note.GNU-stack (empty) the offset of
// .data (empty, before .bss and .comment) and an alignment of 16: the old
// layout put it at the offset where .comment then started, and the run
// after placed .comment (a lower index) first.
func emptySectionTies(t *testing.T, obj []byte) []byte {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	data := f.Section(".data")
	if data == nil {
		t.Fatal("no .data")
	}
	obj = setShdr(t, obj, ".note.GNU-stack", 24, 8, data.Offset)
	return setShdr(t, obj, ".note.GNU-stack", 48, 8, 16)
}

// textAlignedToPage asks a page's alignment of the object's .text, which
// the compiler put at offset 0x40: in the output it goes to 0x1000, past
// the end of the input (reading it again at that offset from the input
// panicked).
func textAlignedToPage(t *testing.T, obj []byte) []byte {
	return setShdr(t, obj, ".text", 48, 8, 4096)
}

// nullSection makes the object's .data an SHT_NULL section aligned to 32.
func nullSection(t *testing.T, obj []byte) []byte {
	obj = setShdr(t, obj, ".data", 4, 4, shtNull)
	return setShdr(t, obj, ".data", 48, 8, 32)
}
