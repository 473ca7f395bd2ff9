// Command replacecopy replaces every regular file under DIR by a copy of
// itself, the way the batch form replaces the files it patches, without
// changing a byte: each file copied in the kernel (copy_file_range) to a
// new file beside it, given its mode and owner, renamed over it; the
// replaced files closed on goroutines of their own. testdata/bench-tree.sh
// times it beside cp -a and sframe-gen: what replacing the files in place
// costs the file system, whatever the program that does it
// (docs/performance.md, "A tree").
//
//	replacecopy [-j N] DIR
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

func main() {
	jobs := flag.Int("j", 2, "files replaced at once")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: replacecopy [-j N] DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *jobs); err != nil {
		fmt.Fprintln(os.Stderr, "replacecopy:", err)
		os.Exit(1)
	}
}

type file struct {
	path string
	size int64
}

func run(dir string, jobs int) error {
	var files []file
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, file{path, info.Size()})
		return nil
	})
	if err != nil {
		return err
	}
	// The biggest first, as the batch form takes them.
	slices.SortStableFunc(files, func(a, b file) int { return cmp.Compare(b.size, a.size) })

	closing := make(chan *os.File, 64)
	var closers sync.WaitGroup
	for range 4 {
		closers.Go(func() {
			for f := range closing {
				f.Close()
			}
		})
	}
	next := make(chan file)
	errs := make(chan error, len(files))
	var workers sync.WaitGroup
	for range jobs {
		workers.Go(func() {
			for f := range next {
				if err := replace(f.path, closing); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	workers.Wait()
	close(closing)
	closers.Wait()
	close(errs)
	return <-errs // nil when there is none
}

// replace copies path to a new file in its directory and renames the copy
// over it; the original is handed to closing once replaced.
func replace(path string, closing chan<- *os.File) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		src.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".replacecopy")
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		src.Close()
		return err
	}
	err = copyAll(dst, src, st.Size)
	if err == nil {
		err = dst.Chmod(fs.FileMode(st.Mode & 0o7777))
	}
	if err == nil {
		err = dst.Chown(int(st.Uid), int(st.Gid))
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		src.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	closing <- src
	return nil
}

// copyAll copies size bytes of src to dst in the kernel.
func copyAll(dst, src *os.File, size int64) error {
	var off int64
	for off < size {
		n, err := unix.CopyFileRange(int(src.Fd()), nil, int(dst.Fd()), nil, int(size-off), 0)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("copy_file_range: no byte copied at %d of %d", off, size)
		}
		off += int64(n)
	}
	return nil
}
