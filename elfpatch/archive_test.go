package elfpatch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// arFile is one member for buildArchive.
type arFile struct {
	name string
	data []byte
	syms []string // global symbols it defines (for the index)
}

// buildArchive writes a GNU-format archive as GNU ar does: a symbol index
// ("/", or "/SYM64/" with sym64), a "//" long-name table for names over 15
// bytes, members padded to even sizes. With bsd, names go BSD's way
// ("#1/N" before the data) and there is no index.
func buildArchive(files []arFile, sym64, bsd bool) []byte {
	header := func(name string, size int) []byte {
		return fmt.Appendf(nil, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", name, 0, 0, 0, 0o644, size)
	}
	var long bytes.Buffer
	names := make([]string, len(files))
	var prefixes [][]byte
	for i, f := range files {
		prefixes = append(prefixes, nil)
		switch {
		case bsd:
			names[i] = fmt.Sprintf("#1/%d", len(f.name))
			prefixes[i] = []byte(f.name)
		case len(f.name) > 15:
			names[i] = fmt.Sprintf("/%d", long.Len())
			long.WriteString(f.name + "/\n")
		default:
			names[i] = f.name + "/"
		}
	}
	var syms []string
	var owner []int
	for i, f := range files {
		for _, s := range f.syms {
			syms = append(syms, s)
			owner = append(owner, i)
		}
	}
	w := 4
	if sym64 {
		w = 8
	}
	idxSize := 0
	if !bsd && len(syms) > 0 {
		idxSize = w * (1 + len(syms))
		for _, s := range syms {
			idxSize += len(s) + 1
		}
	}
	pad := func(n int) int { return n + n&1 }
	pos := len(ArchiveMagic)
	if idxSize > 0 {
		pos += arHeaderSize + pad(idxSize)
	}
	if long.Len() > 0 {
		pos += arHeaderSize + pad(long.Len())
	}
	offs := make([]int, len(files))
	for i, f := range files {
		offs[i] = pos
		pos += arHeaderSize + pad(len(prefixes[i])+len(f.data))
	}
	out := []byte(ArchiveMagic)
	add := func(name string, data ...[]byte) {
		n := 0
		for _, d := range data {
			n += len(d)
		}
		out = append(out, header(name, n)...)
		for _, d := range data {
			out = append(out, d...)
		}
		if n&1 != 0 {
			out = append(out, '\n')
		}
	}
	if idxSize > 0 {
		idx := make([]byte, w*(1+len(syms)))
		put := func(i, v int) {
			if sym64 {
				binary.BigEndian.PutUint64(idx[8*i:], uint64(v))
			} else {
				binary.BigEndian.PutUint32(idx[4*i:], uint32(v))
			}
		}
		put(0, len(syms))
		for k := range syms {
			put(k+1, offs[owner[k]])
		}
		for _, s := range syms {
			idx = append(idx, s...)
			idx = append(idx, 0)
		}
		name := "/"
		if sym64 {
			name = "/SYM64/"
		}
		add(name, idx)
	}
	if long.Len() > 0 {
		add("//", long.Bytes())
	}
	for i, f := range files {
		add(names[i], prefixes[i], f.data)
	}
	return out
}

// archiveSeeds are small archives of every shape the parser knows.
func archiveSeeds() [][]byte {
	files := []arFile{
		{"a.o", []byte("\x7fELF a"), []string{"fa", "ga"}},
		{"a_name_longer_than_fifteen.o", []byte("\x7fELF bb"), []string{"fb"}},
		{"notes.txt", []byte("odd"), nil},
	}
	return [][]byte{
		buildArchive(files, false, false),
		buildArchive(files, true, false),
		buildArchive(files, false, true),
		[]byte(ArchiveMagic),
	}
}

// checkIndex checks that every symbol index entry of a points at the member
// with the given ordinal among the file members.
func indexOwners(t *testing.T, a *parsedArchive) []string {
	t.Helper()
	byOff := map[int64]string{}
	for _, m := range a.members {
		byOff[m.off] = m.name
	}
	var owners []string
	for i := range a.members {
		m := &a.members[i]
		if m.kind != memberSymtab && m.kind != memberSymtab64 {
			continue
		}
		offs, err := a.symbolOffsets(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range offs {
			owners = append(owners, byOff[o])
		}
	}
	return owners
}

// TestPatchArchive patches the seed archives (GNU index, 64-bit index,
// BSD names): unchanged members give the same bytes; grown members keep
// names, order and every index entry pointing at its member.
func TestPatchArchive(t *testing.T) {
	for i, data := range archiveSeeds() {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkPatchArchive(t, data)
		})
	}
}

func checkPatchArchive(t *testing.T, data []byte) {
	a, err := parseArchive(data)
	if err != nil {
		t.Fatalf("ParseArchive: %v", err)
	}
	same, err := PatchArchive(data, func(_ string, m []byte) ([]byte, error) { return m, nil })
	if err != nil || !bytes.Equal(same, data) {
		t.Fatalf("identity patch: %v, equal %v", err, bytes.Equal(same, data))
	}
	grow := func(name string, m []byte) ([]byte, error) {
		return append(bytes.Clone(m), []byte(name)...), nil
	}
	out, err := PatchArchive(data, grow)
	if err != nil {
		t.Fatalf("PatchArchive: %v", err)
	}
	b, err := parseArchive(out)
	if err != nil {
		t.Fatalf("patched archive does not parse: %v", err)
	}
	am, bm := a.Members(), b.Members()
	if len(am) != len(bm) {
		t.Fatalf("%d members, was %d", len(bm), len(am))
	}
	for i := range am {
		want, _ := grow(am[i].Name, am[i].Data)
		if bm[i].Name != am[i].Name || !bytes.Equal(bm[i].Data, want) {
			t.Errorf("member %d: %q %q, want %q %q", i, bm[i].Name, bm[i].Data, am[i].Name, want)
		}
	}
	if got, want := indexOwners(t, b), indexOwners(t, a); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("index points at %v, was %v", got, want)
	}
}

// TestParseArchiveErrors: damaged archives get an error, not a panic.
func TestParseArchiveErrors(t *testing.T) {
	good := archiveSeeds()[0]
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"no magic", []byte("!<thin>\n"), "not an ar archive"},
		{"cut header", good[:len(ArchiveMagic)+30], "cut off"},
		{"bad size", func() []byte {
			b := bytes.Clone(good)
			b[len(ArchiveMagic)+48] = 'x'
			return b
		}(), "bad size"},
		{"bad terminator", func() []byte {
			b := bytes.Clone(good)
			b[len(ArchiveMagic)+58] = 'x'
			return b
		}(), "bad terminator"},
		{"size past end", good[:len(good)-2], "past the end"},
		{"index points nowhere", func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[len(ArchiveMagic)+arHeaderSize+4:], 12345)
			return b
		}(), "no member starts"},
	} {
		if _, err := parseArchive(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestPatchArchiveGNU builds an archive with GNU ar (long names, an odd
// member size), patches members, and checks with ar and nm -s that the
// archive lists the same members with the new contents and an index that
// names the same members for the same symbols.
func TestPatchArchiveGNU(t *testing.T) {
	ar, nm := sysfiles.NeedProgram(t, "ar"), sysfiles.NeedProgram(t, "nm")
	dir := t.TempDir()
	var names []string
	for i, src := range []string{"../testdata/link/x86_64/demo.pic.o", "../testdata/cc/x86_64/O2/drap.o", "../testdata/gas/x86_64/basic.o"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		name := []string{"demo.o", "an_object_with_a_long_name.o", "basic.o"}[i]
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	os.WriteFile(filepath.Join(dir, "odd.txt"), []byte("odd"), 0o644)
	names = append(names, "odd.txt")
	lib := filepath.Join(dir, "lib.a")
	args := []string{"rcsD", lib}
	for _, n := range names {
		args = append(args, filepath.Join(dir, n))
	}
	run(t, ar, args...)
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	checkPatchArchive(t, data)
	// Grow the ELF members by whole 16-byte blocks after their end (which
	// ELF readers ignore): nm must still read them through the index.
	out, err := PatchArchive(data, func(name string, m []byte) ([]byte, error) {
		if name == "odd.txt" {
			return m, nil
		}
		return append(bytes.Clone(m), make([]byte, 16*len(name))...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	patched := filepath.Join(dir, "patched.a")
	os.WriteFile(patched, out, 0o644)
	tBefore, _ := run(t, ar, "t", lib)
	tAfter, _ := run(t, ar, "t", patched)
	if tBefore != tAfter {
		t.Errorf("ar t: %q, was %q", tAfter, tBefore)
	}
	index := func(p string) string {
		cmd, _ := run(t, nm, "-s", p)
		s, _, _ := strings.Cut(cmd, "\n\n")
		return s
	}
	if a, b := index(lib), index(patched); a != b || !strings.Contains(a, "Archive index:") {
		t.Errorf("nm -s index:\n%s\nwas\n%s", b, a)
	}
	for _, n := range names {
		got, _ := run(t, ar, "p", patched, n)
		want, _ := os.ReadFile(filepath.Join(dir, n))
		if n != "odd.txt" {
			want = append(want, make([]byte, 16*len(n))...)
		}
		if got != string(want) {
			t.Errorf("ar p %s: contents differ", n)
		}
	}
}

// FuzzParseArchive: no panic on any input; an archive that parses patches
// back to itself unchanged, and with every member grown parses again with
// the same names and an index naming the same members.
func FuzzParseArchive(f *testing.F) {
	for _, s := range archiveSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := parseArchive(data); err != nil {
			return
		}
		checkPatchArchive(t, data)
	})
}
