// Package sframegen generates SFrame stack-trace sections from the DWARF
// call-frame information of ELF files, in one call: the library form of the
// sframe-gen command.
//
// Start from [GenerateFile] to get a file's section (its bytes, the address
// they assume, the functions left out and why), or [WriteFile] to write the
// file with it, atomically, as the command does (every object of a static
// archive too). [Options] choose the SFrame version, GNU compatibility,
// shared FRE blocks and strictness.
//
//	sec, err := sframegen.GenerateFile("libfoo.so", sframegen.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Printf("%d bytes at %#x, %d functions left out\n", len(sec.Bytes()), sec.Addr, len(sec.Omitted()))
//
// A program that processes many files makes one [Generator]
// ([NewGenerator]) and calls [Generator.Process] for each file, from as
// many goroutines as it likes, the files sharing an elfread.MemoryBudget; or it
// walks paths with [Walk] and processes the [Tree] on N workers with
// [Generator.ProcessTree], as the command's batch form does (one result a
// path, in the order of the walk).
//
// Underneath, the packages do one step each: cfi reads the CFI, lower
// translates it per ABI, emit is the SFrame format (and emit.Reader, for
// stack walkers, looks PCs up in a section), elfpatch writes the ELF file.
//
// Files are opened and replaced (GenerateFile, WriteFile,
// Generator.Process, Walk) on linux only, through package
// elfpatch/replace; elsewhere these return an error wrapping
// replace.ErrUnsupported. [Generate], from an io.ReaderAt, builds and
// works on every system Go supports.
//
// The files of the package:
//
//   - generate.go: GenerateFile, WriteFile, Generator.Generate and
//     GenerateAt (a section without writing the file).
//   - generator.go: Options, Generator and the Resources its files share.
//   - section.go: Section, what was generated and left out (Omitted), and
//     the errors of generating.
//   - process.go: Generator.Process, one file's pipeline (Job, Outcome,
//     Status), with its memory charged in stages; linked.go, object.go and
//     archive.go write each kind of file; write.go replaces it.
//   - walk.go: Walk, the Tree of the paths of a batch; tree.go:
//     ProcessTree and Each, its files on workers; treereport.go:
//     TreeFile.AppendReport, a file's line of the report (JSON).
//   - messages.go: Outcome.AppendMessages, what Process found and did, as
//     the command prints it.
//   - gc.go: the garbage collector set to the files (Resources.TuneGC).
//   - input.go: an ELF file's ABI and whether SFrame describes it
//     (Supported, Generates), read through package elfpatch/elfread, which
//     holds the memory budget (elfread.MemoryBudget) and charges what
//     debug/elf allocates before it does; lowering.go: its CFI lowered (on
//     every CPU for a big section).
//   - cost.go: what a file is charged before it is processed (Cost).
//   - stats.go: Generator.Stats, a file's statistics (package emit/stats);
//     ObjectStats, a file's or archive member's, named and charged to a
//     memory budget; TreeStats, every file's of a Tree and their total.
//   - mmap.go: mapping a file read (mmap_other.go: reading it, elsewhere).
//     The function names of reports come from emit/unwind/target.Symbols.
package sframegen
