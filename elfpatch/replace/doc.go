// Package replace reads and replaces files on Linux without following a
// path twice: the file machinery elfpatch's outputs are written through.
// It is supported on linux only; elsewhere its functions fail with
// ErrUnsupported.
//
// Files are read and written at a [Place] (a [Dir] held open and one name
// in it), never through a path resolved again: [NamedPlace] and
// [OutputPlace] have the kernel resolve a name the user gave (a final
// symbolic link followed only by open(2)), [Dir.Beneath] opens a directory
// below another without following any link (openat2), [OpenSource] opens
// the file there without following a link, and [TempFiles.Replace] writes
// a new file in the same directory (O_TMPFILE, else a temporary name),
// with every attribute of the file it replaces (owner, mode, extended
// attributes, capabilities), and renames it into place only while the
// name still holds the file read, unchanged; when it replaces an existing
// file, the new file is synced before the rename and the directory after
// it, so that a crash leaves the old or the new contents.
// [ReplaceOptions.InPlace] writes a file's own inode instead.
// [TempFiles] tracks the temporary files being named so that a signal
// handler can remove them; what SIGKILL leaves of a privileged or linked
// file's replacement is journaled (an extended attribute), and finished or
// undone by the next run ([ResumeTemp], [Source.Resume]). [Dir.List],
// [Dir.MkdirBeneath], [MkdirNamed], [Dir.Symlink] and [Link] walk and
// make trees through descriptors; [OpenSink] opens a report's FIFO, null
// device or terminal without waiting, and [OpenStream] a stream written
// once at the end of a run (standard output, an inherited descriptor, a
// sink, or a file replaced). docs/robustness.md says what each
// step defends against.
//
// Files: options.go (the declarations every system has: ReplaceOptions,
// Entry, NotRegularError, Resumed, InheritedFD), place.go (Dir, Place,
// Source: opening), dir.go (a Dir's entries: making, linking, listing),
// output.go (OutputPlace, OpenSink), stream.go (Stream), atomic.go
// (TempFiles.Replace), attrs.go (attributes kept), inplace.go
// (ReplaceOptions.InPlace), resume.go (the journal, ResumeTemp), mkdir.go
// (MkdirNamed).
package replace
