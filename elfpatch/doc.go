// Package elfpatch writes a finished SFrame section into an ELF file.
//
// Start from [PatchLinkedFile] (an executable or shared library: it
// chooses the section's address, then asks for the bytes encoded for it) or
// [PatchObjectFile] (a relocatable object, with its relocations); both
// replace the output atomically. ExamplePatchLinkedFile shows the whole
// sequence.
//
// It does not compute SFrame: its inputs are the section bytes (and, for
// relocatable objects, the relocations). Two kinds of file are handled:
//
//   - Relocatable objects (ET_REL): [PatchObject] adds or replaces .sframe
//     (SHT_GNU_SFRAME) and .rela.sframe exactly as GNU as --gsframe makes
//     them, so GNU ld links the object and merges its SFrame.
//   - Linked files (ET_EXEC, ET_DYN): [PatchLinked] places .sframe in a
//     read-only PT_LOAD, covers it with a PT_GNU_SFRAME program header and
//     appends a section header, copying unchanged byte ranges file to file so
//     memory use stays small for large files.
//
// For a caller that overlaps work with the copy of a big file,
// [PatchLinkedCopyParts] writes only what changes over an output that
// already holds (or is still receiving, see its wait argument) a copy of
// the input made with [CopySparse], and takes the section in pieces.
// [PlanLinked] plans a patch without writing, and tells whether the file
// already holds exactly that section ([LinkedPatch.Unchanged]).
// [PatchArchive] patches the ELF members of a static archive.
//
// [TempFiles.ReplaceFile] writes through a temporary file in the output's directory and
// renames it into place; when it replaces an existing file, the temporary
// file is synced before the rename and the directory after it, so that a
// crash leaves the old or the new contents (a new output is not synced, as
// cp and ld do not). [TempFiles] tracks the temporary files being written so
// that a signal handler can remove them. docs/elfpatch.md explains the
// layout strategy.
//
// Only ELFCLASS64 files are accepted: SFrame is defined for 64-bit ABIs only.
package elfpatch
