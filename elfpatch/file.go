package elfpatch

import (
	"fmt"
	"os"
)

// PatchLinkedFile is [PatchLinked] from the file inPath to the file outPath
// (which may be the same), written atomically with [TempFiles.Replace]
// (see [PatchFile]).
func PatchLinkedFile(inPath, outPath string, size int, encode func(addr uint64) ([]byte, error)) (Layout, error) {
	var lay Layout
	err := PatchFile(nil, inPath, outPath, func(in *Source, tmp *os.File) error {
		var err error
		lay, err = PatchLinked(in.File, tmp, size, encode)
		return err
	})
	if err != nil {
		return Layout{}, err
	}
	return lay, nil
}

// PatchObjectFile is [PatchObject] from the file inPath to the file outPath
// (which may be the same), written atomically with [TempFiles.Replace]
// (see [PatchFile]).
func PatchObjectFile(inPath, outPath string, sframe []byte, relocs []Reloc) error {
	return PatchFile(nil, inPath, outPath, func(in *Source, tmp *os.File) error {
		return PatchObject(in.File, in.Size(), tmp, sframe, relocs)
	})
}

// PatchFile writes what write makes of the file inPath to outPath (which
// may name the same file) through t's [TempFiles.Replace]. Both paths are
// taken as named ([NamedPlace]: a symbolic link followed to its file). In
// place, the file is replaced only if it is still the file read, unchanged,
// with every attribute kept; a file with other hard links is written in its
// own inode (ReplaceOptions.InPlace), so the links stay one file. A new
// outPath gets inPath's permission bits. Errors name inPath.
func PatchFile(t *TempFiles, inPath, outPath string, write func(in *Source, tmp *os.File) error) error {
	at, err := NamedPlace(inPath)
	if err != nil {
		return fmt.Errorf("%s: %w", inPath, err)
	}
	defer at.Dir.Close()
	src, err := OpenSource(at)
	if err != nil {
		return fmt.Errorf("%s: %w", inPath, err)
	}
	defer src.Close()
	dst := at
	if outPath != inPath {
		if dst, err = NamedPlace(outPath); err != nil {
			return fmt.Errorf("%s: %w", outPath, err)
		}
		defer dst.Dir.Close()
	}
	opt := ReplaceOptions{InPlace: src.names(dst) == nil && src.Links() > 1}
	err = t.Replace(dst, src, src.Mode().Perm(), opt, func(tmp *os.File) error { return write(src, tmp) })
	if err != nil {
		return fmt.Errorf("%s: %w", inPath, err)
	}
	return nil
}
