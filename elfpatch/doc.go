// Package elfpatch writes a finished SFrame section into an ELF file.
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
// [ReplaceFile] writes through a temporary file in the output's directory and
// renames it into place. docs/elfpatch.md explains the layout strategy.
//
// Only ELFCLASS64 files are accepted: SFrame is defined for 64-bit ABIs only.
package elfpatch
