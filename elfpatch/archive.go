package elfpatch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ArchiveMagic starts a static archive (ar(1), the common format).
const ArchiveMagic = "!<arch>\n"

const (
	arHeaderSize = 60
	arMaxSize    = 9999999999 // the widest the header's 10-digit size field holds
)

// memberKind tells the special members of an archive from its files.
type memberKind int

const (
	memberFile      memberKind = iota
	memberSymtab               // "/": the GNU/SysV symbol index, 32-bit offsets
	memberSymtab64             // "/SYM64/": the same with 64-bit offsets
	memberLongNames            // "//": the GNU long-name table
)

// arMember is one member of an archive as read.
type arMember struct {
	kind   memberKind
	off    int64  // file offset of its header
	header []byte // the 60-byte header
	prefix []byte // a BSD long name ("#1/N"), which the size counts
	data   []byte // its contents (after prefix)
	name   string // its name, long names resolved
}

// parsedArchive is a static archive read by parseArchive.
type parsedArchive struct {
	members []arMember
}

// ArchiveMember is one file of a static archive.
type ArchiveMember struct {
	// Name is the member's name, long names resolved.
	Name string
	// Data is the member's contents.
	Data []byte
}

// ArchiveMembers returns the files of the static archive data (not its
// symbol index or name table), in order, read as PatchArchive reads them
// (GNU and BSD long names; thin archives refused). Their Data alias data.
func ArchiveMembers(data []byte) ([]ArchiveMember, error) {
	a, err := parseArchive(data)
	if err != nil {
		return nil, err
	}
	return a.Members(), nil
}

// parseArchive reads a static archive (GNU or BSD ar format): its members,
// their long names (the GNU "//" table, BSD "#1/N" names) and its symbol
// index ("/" or "/SYM64/"), whose every entry must point at a member.
// Thin archives are not accepted.
func parseArchive(data []byte) (*parsedArchive, error) {
	if !bytes.HasPrefix(data, []byte(ArchiveMagic)) {
		return nil, fmt.Errorf("not an ar archive (no %q magic)", strings.TrimSpace(ArchiveMagic))
	}
	a := &parsedArchive{}
	var longNames []byte
	for off := int64(len(ArchiveMagic)); off < int64(len(data)); {
		if int64(len(data))-off < arHeaderSize {
			if allNewlines(data[off:]) {
				break // padding some writers leave at the end
			}
			return nil, fmt.Errorf("archive member header at %#x cut off: %d bytes left of %d", off, int64(len(data))-off, arHeaderSize)
		}
		h := data[off : off+arHeaderSize]
		if h[58] != '`' || h[59] != '\n' {
			return nil, fmt.Errorf("archive member header at %#x: bad terminator %q", off, h[58:60])
		}
		size, err := strconv.ParseUint(strings.TrimRight(string(h[48:58]), " "), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("archive member header at %#x: bad size %q", off, h[48:58])
		}
		start := off + arHeaderSize
		if size > uint64(int64(len(data))-start) {
			return nil, fmt.Errorf("archive member at %#x: %d bytes run past the end of the archive (%d bytes)", off, size, len(data))
		}
		m := arMember{off: off, header: h, data: data[start : start+int64(size)]}
		rawName := strings.TrimRight(string(h[:16]), " ")
		switch {
		case rawName == "/":
			m.kind = memberSymtab
		case rawName == "/SYM64/":
			m.kind = memberSymtab64
		case rawName == "//":
			m.kind, longNames = memberLongNames, m.data
		case strings.HasPrefix(rawName, "#1/"):
			n, err := strconv.ParseUint(rawName[3:], 10, 64)
			if err != nil || n > size {
				return nil, fmt.Errorf("archive member at %#x: bad BSD name %q", off, rawName)
			}
			m.prefix, m.data = m.data[:n], m.data[n:]
			m.name = strings.TrimRight(string(m.prefix), "\x00")
		case len(rawName) > 1 && rawName[0] == '/':
			i, err := strconv.ParseUint(rawName[1:], 10, 64)
			if err != nil || longNames == nil || i >= uint64(len(longNames)) {
				return nil, fmt.Errorf("archive member at %#x: long name %q not in the name table", off, rawName)
			}
			name := longNames[i:]
			if e := bytes.IndexByte(name, '\n'); e >= 0 {
				name = name[:e]
			}
			m.name = strings.TrimSuffix(string(name), "/")
		default:
			m.name = strings.TrimSuffix(rawName, "/")
		}
		a.members = append(a.members, m)
		off = start + int64(size) + int64(size&1)
	}
	for i := range a.members {
		if m := &a.members[i]; m.kind == memberSymtab || m.kind == memberSymtab64 {
			if _, err := a.symbolOffsets(m); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

// printableName is a member name as errors print it: quoted (strconv.Quote)
// when it holds anything but printable UTF-8, such as a terminal escape
// sequence.
func printableName(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

func allNewlines(b []byte) bool {
	for _, c := range b {
		if c != '\n' {
			return false
		}
	}
	return true
}

// symbolOffsets returns the member header offsets of the symbol index m,
// each checked to be the offset of a member.
func (a *parsedArchive) symbolOffsets(m *arMember) ([]int64, error) {
	w := 4
	if m.kind == memberSymtab64 {
		w = 8
	}
	word := func(i int) uint64 {
		if w == 4 {
			return uint64(binary.BigEndian.Uint32(m.data[i*4:]))
		}
		return binary.BigEndian.Uint64(m.data[i*8:])
	}
	if len(m.data) < w {
		return nil, fmt.Errorf("archive symbol index at %#x: %d bytes, too short for its count", m.off, len(m.data))
	}
	n := word(0)
	if n > uint64(len(m.data)/w-1) {
		return nil, fmt.Errorf("archive symbol index at %#x: %d symbols do not fit in %d bytes", m.off, n, len(m.data))
	}
	starts := map[int64]bool{}
	for _, o := range a.members {
		starts[o.off] = true
	}
	offs := make([]int64, n)
	for i := range offs {
		o := word(i + 1)
		if o > uint64(1<<62) || !starts[int64(o)] {
			return nil, fmt.Errorf("archive symbol index at %#x: entry %d points at %#x, where no member starts", m.off, i, o)
		}
		offs[i] = int64(o)
	}
	return offs, nil
}

// Members returns the archive's files (not its symbol index or name
// table), in order. Their Data alias the parsed bytes.
func (a *parsedArchive) Members() []ArchiveMember {
	var out []ArchiveMember
	for _, m := range a.members {
		if m.kind == memberFile {
			out = append(out, ArchiveMember{Name: m.name, Data: m.data})
		}
	}
	return out
}

// PatchArchive returns the archive data with each file member replaced by
// what patch returns for it (its name and contents; returning the contents
// unchanged keeps the member), headers otherwise kept (dates, owners,
// modes, names) and the symbol index's member offsets recomputed for the
// new member sizes, so that ar, nm -s and ld read it as before. When no
// member changes, the result is data itself.
func PatchArchive(data []byte, patch func(name string, member []byte) ([]byte, error)) ([]byte, error) {
	a, err := parseArchive(data)
	if err != nil {
		return nil, err
	}
	newData := make([][]byte, len(a.members))
	changed := false
	for i := range a.members {
		m := &a.members[i]
		newData[i] = m.data
		if m.kind != memberFile {
			continue
		}
		b, err := patch(m.name, m.data)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", printableName(m.name), err)
		}
		if !bytes.Equal(b, m.data) {
			newData[i], changed = b, true
		}
	}
	if !changed {
		return data, nil
	}
	// New header offsets, then the symbol indexes pointing at them.
	newOff := map[int64]int64{}
	pos := int64(len(ArchiveMagic))
	for i, m := range a.members {
		newOff[m.off] = pos
		size := int64(len(m.prefix) + len(newData[i]))
		if size > arMaxSize {
			return nil, fmt.Errorf("member %s: %d bytes do not fit an archive header", printableName(m.name), size)
		}
		pos += arHeaderSize + size + size&1
	}
	for i := range a.members {
		m := &a.members[i]
		if m.kind != memberSymtab && m.kind != memberSymtab64 {
			continue
		}
		offs, err := a.symbolOffsets(m)
		if err != nil {
			return nil, err
		}
		idx := bytes.Clone(m.data)
		for k, o := range offs {
			n := newOff[o]
			if m.kind == memberSymtab {
				if n > 0xffffffff {
					return nil, fmt.Errorf("archive grows past 4 GiB: its 32-bit symbol index cannot point at member %d", k)
				}
				binary.BigEndian.PutUint32(idx[4+4*k:], uint32(n))
			} else {
				binary.BigEndian.PutUint64(idx[8+8*k:], uint64(n))
			}
		}
		newData[i] = idx
	}
	out := make([]byte, 0, pos)
	out = append(out, ArchiveMagic...)
	for i, m := range a.members {
		size := len(m.prefix) + len(newData[i])
		h := bytes.Clone(m.header)
		copy(h[48:58], fmt.Sprintf("%-10d", size))
		out = append(out, h...)
		out = append(out, m.prefix...)
		out = append(out, newData[i]...)
		if size&1 != 0 {
			out = append(out, '\n')
		}
	}
	return out, nil
}
