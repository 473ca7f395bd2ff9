package elfpatch

import "testing"

// TestNameIs checks nameIs against name at every offset of a section-name
// table holding the name, longer names that start or end with it, and a
// prefix of it without its NUL.
func TestNameIs(t *testing.T) {
	f := &file{shstrtab: []byte("\x00.sframe\x00.sframe.x\x00x.sframe\x00.sfram")}
	for off := range len(f.shstrtab) + 2 {
		s := &sect{Name: uint32(off)}
		for _, name := range []string{nameSFrame, ".sfram", "x"} {
			if got, want := f.nameIs(s, name), f.name(s) == name; got != want {
				t.Errorf("name at %d (%q): nameIs(%q) = %v, want %v", off, f.name(s), name, got, want)
			}
		}
	}
}
