//go:build !linux

package replace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
)

// ErrUnsupported is the error of every operation of the package on a
// system other than Linux, where it declares the same names (so that a
// library using it builds) and does nothing.
var ErrUnsupported = errors.New("opening and replacing files is supported on linux only")

// The errors of the Linux build (see its documentation).
var (
	ErrChanged       = errors.New("changed while sframe-gen read it (another process writes it, or replaced it); left as it is")
	ErrDanglingLink  = errors.New("a symbolic link to nothing (not written through)")
	ErrLinkMoved     = errors.New("the file its symbolic link names was moved while sframe-gen opened it")
	ErrSymlinkInPath = errors.New("a symbolic link or \"..\" in its path (not followed)")
)

// A Dir is a directory held open (Linux only).
type Dir struct{ path string }

// A Place is a directory held open and one name in it (Linux only).
type Place struct {
	Dir  *Dir
	Name string
}

// A Source is a regular file opened for reading at its place (Linux only).
type Source struct {
	Place
	File *os.File
}

// TempFiles tracks the temporary files being written (Linux only).
type TempFiles struct{}

func unsupported(op, path string) error {
	return &fs.PathError{Op: op, Path: path, Err: ErrUnsupported}
}

// OpenDir fails with ErrUnsupported.
func OpenDir(path string) (*Dir, error) { return nil, unsupported("open", path) }

// MkdirNamed fails with ErrUnsupported.
func MkdirNamed(path string) (dir *Dir, made bool, err error) {
	return nil, false, unsupported("mkdir", path)
}

// NamedPlace fails with ErrUnsupported.
func NamedPlace(path string) (Place, error) { return Place{}, unsupported("open", path) }

// OutputPlace fails with ErrUnsupported.
func OutputPlace(path string) (Place, error) { return Place{}, unsupported("open", path) }

// OpenNamed fails with ErrUnsupported.
func OpenNamed(path string) (*Source, error) { return nil, unsupported("open", path) }

// OpenSource fails with ErrUnsupported.
func OpenSource(p Place) (*Source, error) { return nil, unsupported("open", p.Path()) }

// OpenSink fails with ErrUnsupported.
func OpenSink(p Place) (io.WriteCloser, error) { return nil, unsupported("open", p.Path()) }

// Link fails with ErrUnsupported.
func Link(from, to Place) error { return unsupported("link", to.Path()) }

// ResumeTemp fails with ErrUnsupported.
func ResumeTemp(dir *Dir, tmp string) (Resumed, error) { return NotJournaled, unsupported("open", tmp) }

// TempOf reports false: no name is a temporary one where nothing is replaced.
func TempOf(name string) (string, bool) { return "", false }

// Beneath fails with ErrUnsupported.
func (d *Dir) Beneath(rel string) (*Dir, error) { return nil, unsupported("open", rel) }

// Chmod fails with ErrUnsupported.
func (d *Dir) Chmod(m fs.FileMode) error { return unsupported("chmod", d.Path()) }

// Clone fails with ErrUnsupported.
func (d *Dir) Clone() (*Dir, error) { return nil, unsupported("dup", d.Path()) }

// Close does nothing.
func (d *Dir) Close() error { return nil }

// ID fails with ErrUnsupported.
func (d *Dir) ID() ([2]uint64, error) { return [2]uint64{}, unsupported("stat", d.Path()) }

// List fails with ErrUnsupported.
func (d *Dir) List() ([]Entry, error) { return nil, unsupported("open", d.Path()) }

// MkdirBeneath fails with ErrUnsupported.
func (d *Dir) MkdirBeneath(rel string) (*Dir, bool, error) {
	return nil, false, unsupported("mkdir", rel)
}

// Path is the name, for messages.
func (d *Dir) Path() string { return d.path }

// Place fails with ErrUnsupported.
func (d *Dir) Place(rel string) (Place, error) { return Place{}, unsupported("open", rel) }

// Stat fails with ErrUnsupported.
func (d *Dir) Stat() (Entry, error) { return Entry{}, unsupported("stat", d.Path()) }

// Symlink fails with ErrUnsupported.
func (d *Dir) Symlink(target, name string) error { return unsupported("symlink", name) }

// Sync fails with ErrUnsupported.
func (d *Dir) Sync() error { return unsupported("sync", d.Path()) }

// Writable fails with ErrUnsupported.
func (d *Dir) Writable() error { return unsupported("access", d.Path()) }

// Lstat fails with ErrUnsupported.
func (p Place) Lstat() (Entry, error) { return Entry{}, unsupported("lstat", p.Path()) }

// Path is the name, for messages.
func (p Place) Path() string { return p.Name }

// Readlink fails with ErrUnsupported.
func (p Place) Readlink() (string, error) { return "", unsupported("readlink", p.Path()) }

// Close does nothing.
func (s *Source) Close() error { return nil }

// ID is zero.
func (s *Source) ID() [2]uint64 { return [2]uint64{} }

// Links is zero.
func (s *Source) Links() uint64 { return 0 }

// Mode is zero.
func (s *Source) Mode() fs.FileMode { return 0 }

// Resume fails with ErrUnsupported.
func (s *Source) Resume(allNames bool) error { return ErrUnsupported }

// Size is zero.
func (s *Source) Size() int64 { return 0 }

// Sparse is false.
func (s *Source) Sparse() bool { return false }

// Times are zero.
func (s *Source) Times() (atime, mtime time.Time) { return }

// RemoveAll does nothing.
func (t *TempFiles) RemoveAll() {}

// WaitFor does nothing.
func (t *TempFiles) WaitFor(ready <-chan struct{}) {}

// ReplaceFile fails with ErrUnsupported.
func (t *TempFiles) ReplaceFile(path string, perm fs.FileMode, write func(tmp *os.File) error) error {
	return unsupported("replace", path)
}

// Replace fails with ErrUnsupported.
func (t *TempFiles) Replace(dst Place, src *Source, perm fs.FileMode, opt ReplaceOptions, write func(tmp *os.File) error) error {
	return unsupported("replace", dst.Path())
}

// A Stream is where a command writes a stream once (Linux only).
type Stream struct{}

// OpenStream fails with ErrUnsupported.
func OpenStream(path string, perm os.FileMode, stdout, stderr io.Writer) (*Stream, error) {
	return nil, unsupported("open", path)
}

// Terminal is false.
func (s *Stream) Terminal() bool { return false }

// IsTerminal is false.
func IsTerminal(fd int) bool { return false }

// Finish fails with ErrUnsupported.
func (s *Stream) Finish(t *TempFiles, fill func(w io.Writer) error) error { return ErrUnsupported }

// Close does nothing.
func (s *Stream) Close() error { return nil }
