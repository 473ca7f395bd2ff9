// Package elfpatch writes a finished SFrame section into an ELF file.
//
// Start from [PatchLinked] (an executable or shared library: it chooses
// the section's address, then asks for the bytes encoded for it) or
// [PatchObjectBytes] (a relocatable object, with its relocations), written
// through [TempFiles.Replace], which replaces the output atomically.
// ExamplePatchLinked shows the whole sequence; the library's
// sframegen.Generator.Process is the pipeline that uses them for every
// kind of file.
//
// It does not compute SFrame: its inputs are the section bytes (and, for
// relocatable objects, the relocations). Two kinds of file are handled:
//
//   - Relocatable objects (ET_REL): [PatchObject] adds or replaces .sframe
//     (SHT_GNU_SFRAME) and .rela.sframe exactly as GNU as --gsframe makes
//     them, so GNU ld links the object and merges its SFrame; an object GNU
//     as made comes out as the very file as --gsframe makes.
//   - Linked files (ET_EXEC, ET_DYN): [PatchLinked] places .sframe in a
//     read-only PT_LOAD, covers it with a PT_GNU_SFRAME program header and
//     appends a section header, copying unchanged byte ranges file to file so
//     memory use stays small for large files. A file it patched before is
//     patched as the file it was made from, so re-runs with other sections
//     give one run's bytes and do not grow it.
//
// For a caller that overlaps work with the copy of a big file,
// [PatchLinkedCopyParts] writes only what changes over an output that
// already holds (or is still receiving, see its wait argument) a copy of
// the input made with [CopySparse], and takes the section in pieces.
// [PlanLinked] plans a patch without writing, and tells whether the file
// already holds exactly that section ([LinkedPatch.Unchanged]).
// [PatchArchive] patches the ELF members of a static archive.
//
// Files are read and written at a [Place] (a [Dir] held open and one name
// in it), never through a path resolved again: [OpenSource] opens the file
// without following a link, and [TempFiles.Replace] writes a new file in
// the same directory, with every attribute of the file it replaces, and
// renames it into place only while the name still holds the file read,
// unchanged; when it replaces an existing file, the new file is synced
// before the rename and the directory after it, so that a crash leaves the
// old or the new contents.
// [TempFiles] tracks the temporary files being named so that a signal
// handler can remove them; what SIGKILL leaves of a privileged or linked
// file's replacement is journaled, and finished or undone by the next run
// ([ResumeTemp], [Source.Resume]). docs/elfpatch.md explains the layout strategy.
//
// Only ELFCLASS64 files are accepted: SFrame is defined for 64-bit ABIs only.
package elfpatch
