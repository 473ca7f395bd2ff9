// Package elfpatch writes a finished SFrame section into an ELF file.
//
// Start from [PatchLinked] (an executable or shared library: it chooses
// the section's address, then asks for the bytes encoded for it) or
// [PatchObjectBytes] (a relocatable object, with its relocations).
// ExamplePatchLinked shows the whole sequence; the library's
// sframegen.Generator.Process is the pipeline that uses them for every
// kind of file, writing through package replace, which replaces the
// output atomically.
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
// the input made with sparse.Copy, and takes the section in pieces.
// [PlanLinked] plans a patch without writing, and tells whether the file
// already holds exactly that section ([LinkedPatch.Unchanged]).
// [PatchArchive] patches the ELF members of a static archive.
//
// elfpatch rewrites bytes: its inputs and outputs are open files, byte
// slices, readers and writers; it names no path, opens and renames no file
// and builds on every system Go supports (pwritev on Linux). Opening files
// without following links and replacing them atomically, with their
// attributes, is package replace's job (Linux only); copying a file
// without filling its holes, package sparse's. docs/elfpatch.md explains
// the layout strategy.
//
// Only ELFCLASS64 files are accepted: SFrame is defined for 64-bit ABIs only.
package elfpatch
