// Package stats measures an SFrame section: the functions it covers of
// those the call-frame information describes, its FDEs and FREs by kind,
// where its bytes go ([Breakdown]: header, FDE index, attribute records,
// FRE start addresses, FRE info, data words) and what sharing blocks of
// FRE data saves. It is what "sframe-gen stats" prints (docs/stats.md).
//
// [Measure] counts a section's bytes; [Stats.Cover] adds the coverage a
// verify report measured; [Tally] groups the functions left out by
// reason; [Total] and [Counts] add the figures of many files up ([File]:
// what a tree's file holds). Stats.WriteText, Stats.WriteLine and
// Total.WriteText print them as "sframe-gen stats" does. The
// statistics of the section generating would write (a dry run) are
// sframegen's Generator.Stats.
//
// Files: stats.go (Stats, Measure, the breakdown, Total, File), text.go
// (the text forms).
package stats
