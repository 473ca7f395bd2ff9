// Package target reads what a stack walk needs of a stopped process, for
// package unwind: a core file (OpenCore) or a running process stopped
// with ptrace (Attach, Linux x86-64 only), its threads with their
// registers, its memory, and the ELF files mapped into it (modules) with
// their SFrame sections and function symbols (Symbols). Process.Walk
// walks every thread and names the frames' functions (Process.Report: as
// plain values, for JSON or text); Process.Walker gives the unwind.Walker
// to walk registers of one's own.
//
// The files:
//
//   - process.go: Process, Options and Meter (what reading may charge),
//     Walk and the frames it returns.
//   - report.go: Report, the walks as "sframe-gen stack" prints them
//     (Process.Report; JSON tags, Report.WriteText).
//   - core.go: an ELF core's notes (NT_PRSTATUS registers per ABI,
//     NT_FILE mappings, NT_AUXV) and its memory (PT_LOAD segments).
//   - modules.go: the modules of a process: from its mappings (their
//     load bias from the file's PT_LOAD segments), or, for a core
//     without NT_FILE (qemu-user's), from the auxiliary vector and the
//     dynamic linker's list in memory; a file whose GNU build ID is not
//     the one in memory is not used.
//   - symbols.go: Symbols, the function names of an ELF file, for stack
//     frames and for reports on functions.
//   - attach_linux_amd64.go: Attach (ptrace, /proc/PID/maps and mem);
//     attach_other.go: its error elsewhere.
//   - files are opened with elfread.OpenRegular: only when regular, never
//     waiting on a FIFO.
//
// Core reading builds on every system Go supports; only Attach is
// Linux-only.
package target
