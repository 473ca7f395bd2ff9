package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	sframegen "github.com/sframe-gen/sframe-gen"
)

// jobKind is what the walk found at a path.
type jobKind int

const (
	kindFile    jobKind = iota // a regular file: processed
	kindSymlink                // left alone (recreated under --output-dir)
	kindOther                  // a FIFO, device or socket: left alone
	kindDir                    // a directory (only listed with --output-dir)
	kindMissing                // an operand that cannot be read: a failure
)

// job is one path of the batch: a regular file to process (with its other
// hard links in the tree), or something left alone.
type job struct {
	path string
	out  string // where the result goes: "" in place, else under --output-dir
	// root is the directory of the operand the path was found under,
	// held open, and rel the path below it: the file is opened there
	// again without following a symbolic link (sframegen.Dir.Place), so a
	// link swapped in after the walk cannot redirect the read or the
	// write. outRoot and outRel are the same for out.
	root, outRoot *sframegen.Dir
	rel, outRel   string
	id            [2]uint64 // the device and inode the walk saw
	kind          jobKind
	size          int64
	mode          fs.FileMode
	// links are the other names of the same file found in the tree (same
	// device and inode), linkRels their paths below root; outLinks and
	// outLinkRels their places under --output-dir.
	links, outLinks       []string
	linkRels, outLinkRels []string
	// outside is set when the file has hard links the walk did not find.
	outside bool
	// operand is set for a regular file named on the command line (not
	// found by walking a directory).
	operand bool
	err     error // kindMissing
}

// walker collects the jobs of the batch's operands.
type walker struct {
	outputDir string
	outRoot   *sframegen.Dir
	jobs      []*job
	inodes    map[[2]uint64]*job
	outs      map[string]string // output path -> input path
	opened    []*sframegen.Dir  // the operands' directories
}

// collect walks the operands in order (directories recursively, in
// lexical order) and returns one job per path found, hard links of a file
// folded into the job of its first name. Symbolic links found in
// directories are not followed; operands are.
// A usage error is returned when two inputs would be written to one output.
// The directories the jobs refer to are held open until close is called.
func collect(operands []string, outputDir string, outRoot *sframegen.Dir) (jobs []*job, close func(), err error) {
	w := &walker{outputDir: outputDir, outRoot: outRoot, inodes: map[[2]uint64]*job{}, outs: map[string]string{}}
	closeAll := func() {
		for _, d := range w.opened {
			d.Close()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	for _, op := range operands {
		// An operand that is a symbolic link is followed (as find -H):
		// the user named it; links found in directories are not.
		st, err := os.Stat(op)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			w.jobs = append(w.jobs, &job{path: op, kind: kindMissing, err: err})
			continue
		}
		if !st.IsDir() {
			// A file operand is taken where the user named it: its
			// directory, a final symbolic link followed.
			at, err := sframegen.NamedPlace(op)
			if err != nil {
				w.jobs = append(w.jobs, &job{path: op, kind: kindMissing, err: unwrapPath(err)})
				continue
			}
			n := len(w.jobs)
			if err := w.add(op, at.Dir, at.Name, filepath.Base(op), st); err != nil {
				return nil, nil, err
			}
			if len(w.jobs) > n {
				w.jobs[n].operand = true
			}
			w.opened = append(w.opened, at.Dir)
			continue
		}
		rootDir, err := sframegen.OpenDir(op)
		if err != nil {
			w.jobs = append(w.jobs, &job{path: op, kind: kindMissing, err: unwrapPath(err)})
			continue
		}
		w.opened = append(w.opened, rootDir)
		root := op
		if lst, err := os.Lstat(op); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
			root = op + string(filepath.Separator) // WalkDir lstats its root
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				w.jobs = append(w.jobs, &job{path: path, kind: kindMissing, err: err})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() && outputDir != "" && path != root && same(path, outputDir) {
				return fs.SkipDir // the results of this run
			}
			info, err := d.Info()
			if err != nil {
				w.jobs = append(w.jobs, &job{path: path, kind: kindMissing, err: err})
				return nil
			}
			rel, err := filepath.Rel(op, path)
			if err != nil {
				return err
			}
			return w.add(path, rootDir, rel, rel, info)
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return w.jobs, closeAll, nil
}

// add records the path found at rel below root (the operand's
// directory); outRel is its path under --output-dir.
func (w *walker) add(path string, root *sframegen.Dir, rel, outRel string, st fs.FileInfo) error {
	j := &job{path: path, root: root, rel: rel, size: st.Size(), mode: st.Mode()}
	switch {
	case st.IsDir():
		if w.outputDir == "" {
			return nil
		}
		j.kind = kindDir
	case st.Mode()&fs.ModeSymlink != 0:
		j.kind = kindSymlink
	case !st.Mode().IsRegular():
		j.kind = kindOther
	}
	if w.outputDir != "" {
		j.out = filepath.Join(w.outputDir, outRel)
		j.outRoot, j.outRel = w.outRoot, outRel
		if j.kind == kindDir {
			if outRel == "." {
				return nil // the output directory itself
			}
		} else {
			if prev, ok := w.outs[j.out]; ok {
				return usageError{msg: fmt.Sprintf("%s and %s would both be written to %s (--output-dir)", displayName(prev), displayName(path), displayName(j.out))}
			}
			if same(path, j.out) {
				return usageError{msg: fmt.Sprintf("--output-dir would write %s over itself", displayName(path))}
			}
			w.outs[j.out] = path
		}
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok && j.kind == kindFile {
		// A file is processed once, however many names the walk finds.
		key := [2]uint64{uint64(s.Dev), s.Ino}
		if first, ok := w.inodes[key]; ok {
			if s.Nlink == 1 || filepath.Clean(path) == filepath.Clean(first.path) {
				return nil // the same name again
			}
			first.links = append(first.links, path)
			first.linkRels = append(first.linkRels, rel)
			if j.out != "" {
				first.outLinks = append(first.outLinks, j.out)
				first.outLinkRels = append(first.outLinkRels, outRel)
			}
			first.outside = uint64(len(first.links)+1) < uint64(s.Nlink)
			return nil
		}
		j.outside = s.Nlink > 1
		j.id = key
		w.inodes[key] = j
	}
	w.jobs = append(w.jobs, j)
	return nil
}

// same reports whether two paths name the same place (before any link).
func same(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}
