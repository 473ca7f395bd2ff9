package elfpatch

import (
	"fmt"
	"os"
)

// PatchLinkedFile is [PatchLinked] from the file inPath to the file outPath
// (which may be the same), written atomically with [TempFiles.ReplaceFile]. A new
// outPath gets inPath's permission bits.
func PatchLinkedFile(inPath, outPath string, size int, encode func(addr uint64) ([]byte, error)) (Layout, error) {
	in, err := os.Open(inPath)
	if err != nil {
		return Layout{}, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return Layout{}, err
	}
	var lay Layout
	err = replaceFile(outPath, st.Mode().Perm(), func(tmp *os.File) error {
		var err error
		lay, err = PatchLinked(in, tmp, size, encode)
		return err
	})
	if err != nil {
		return Layout{}, fmt.Errorf("%s: %w", inPath, err)
	}
	return lay, nil
}

// PatchObjectFile is [PatchObject] from the file inPath to the file outPath
// (which may be the same), written atomically with [TempFiles.ReplaceFile].
func PatchObjectFile(inPath, outPath string, sframe []byte, relocs []Reloc) error {
	in, err := os.Open(inPath)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	err = replaceFile(outPath, st.Mode().Perm(), func(tmp *os.File) error {
		return PatchObject(in, st.Size(), tmp, sframe, relocs)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", inPath, err)
	}
	return nil
}
