// Package sparse copies files without filling their holes.
//
// [Copy] copies a file's first bytes to another at the same offsets,
// writing only its data ranges (SEEK_DATA/SEEK_HOLE), so that a sparse
// input (a small file that claims terabytes) gives a sparse output, and
// [CopyOver] writes a file over another, punching the holes. elfpatch
// copies a linked file's unchanged bytes with Copy; replace writes a file
// in place with CopyOver. Holes are found and punched on Linux; elsewhere
// every byte is copied (and holes are written as zeros).
//
// sparse.go: Copy, CopyOver; sparse_linux.go: the Linux system calls;
// sparse_other.go: the rest.
package sparse
