//go:build linux

package replace_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// Replace a file atomically: the new contents are written to a temporary
// file in the same directory, which gets the old file's mode and owner
// and is renamed over it once complete. A failing write leaves the old
// file as it was.
func ExampleTempFiles_ReplaceFile() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "prog")
	if err := os.WriteFile(path, []byte("old"), 0o750); err != nil {
		log.Fatal(err)
	}
	var temps replace.TempFiles // RemoveAll, from a signal handler, removes what is being written
	err = temps.ReplaceFile(path, 0o644, func(tmp *os.File) error {
		_, err := tmp.WriteString("new")
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	err = temps.ReplaceFile(path, 0o644, func(tmp *os.File) error {
		tmp.WriteString("half")
		return fmt.Errorf("out of space")
	})
	fmt.Println(err)
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	fmt.Printf("%s %v\n", b, st.Mode())
	// Output:
	// out of space
	// new -rwxr-x---
}
