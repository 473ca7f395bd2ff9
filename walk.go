package main

import (
	"errors"
	"fmt"
	"io/fs"
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
	kindTemp                   // a killed run's temporary name not resumed: left alone
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
	// temps are the temporary names of a killed run found in place
	// (sframegen.TempOf), returned apart (findTemps 1) or made jobs of
	// kindTemp (findTemps 2: those left after they were resumed, never
	// processed as files nor counted as names of their file).
	temps     []*job
	findTemps int
}

// collect walks the operands in order (directories recursively, in
// lexical order) and returns one job per path found, hard links of a file
// folded into the job of its first name. Symbolic links found in
// directories are not followed; operands are, by the kernel. Every
// directory is listed through a descriptor of its own, opened below its
// parent without following a link (sframegen.Dir.Beneath, List): an entry
// swapped between a directory and a symbolic link is never listed by its
// path, so no name inside a directory the link leads to is seen.
// A usage error is returned when two inputs would be written to one output.
// The directories the jobs refer to are held open until close is called.
//
// In place, the temporary names a killed run left are resumed first
// (sframegen.ResumeTemp), and the tree walked again after: a file whose
// names were being replaced gets them all.
func collect(operands []string, outputDir string, outRoot *sframegen.Dir) (jobs []*job, close func(), err error) {
	if outputDir != "" {
		jobs, close, _, err := walkOperands(operands, outputDir, outRoot, 0)
		return jobs, close, err
	}
	jobs, close, temps, err := walkOperands(operands, outputDir, outRoot, 1)
	if err != nil || len(temps) == 0 {
		return jobs, close, err
	}
	var failed []*job
	for _, t := range temps {
		at, err := t.root.Place(t.rel)
		if err == nil {
			_, err = sframegen.ResumeTemp(at)
			at.Dir.Close()
		}
		if err != nil {
			failed = append(failed, &job{path: t.path, kind: kindMissing, err: unwrapPath(err)})
		}
	}
	close()
	jobs, close, _, err = walkOperands(operands, outputDir, outRoot, 2)
	return append(failed, jobs...), close, err
}

// walkOperands is collect's walk; findTemps says what becomes of the
// temporary names of a killed run (walker.findTemps).
func walkOperands(operands []string, outputDir string, outRoot *sframegen.Dir, findTemps int) (jobs []*job, close func(), temps []*job, err error) {
	w := &walker{outputDir: outputDir, outRoot: outRoot, inodes: map[[2]uint64]*job{}, outs: map[string]string{}, findTemps: findTemps}
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
		rootDir, err := sframegen.OpenDir(op)
		if errors.Is(err, syscall.ENOTDIR) {
			// A file operand is taken where the user named it: its
			// directory, a final symbolic link followed by the kernel.
			at, err := sframegen.NamedPlace(op)
			var st sframegen.Entry
			if err == nil {
				if st, err = at.Lstat(); err != nil {
					at.Dir.Close()
				}
			}
			if err != nil {
				w.jobs = append(w.jobs, &job{path: op, kind: kindMissing, err: unwrapPath(err)})
				continue
			}
			w.opened = append(w.opened, at.Dir)
			n := len(w.jobs)
			if err := w.add(op, at.Dir, at.Name, filepath.Base(op), st); err != nil {
				return nil, nil, nil, err
			}
			if len(w.jobs) > n {
				w.jobs[n].operand = true
			}
			continue
		}
		if err != nil {
			w.jobs = append(w.jobs, &job{path: op, kind: kindMissing, err: unwrapPath(err)})
			continue
		}
		w.opened = append(w.opened, rootDir)
		st, err := rootDir.Stat()
		if err != nil {
			w.jobs = append(w.jobs, &job{path: op, kind: kindMissing, err: unwrapPath(err)})
			continue
		}
		if err := w.add(op, rootDir, ".", ".", st); err != nil {
			return nil, nil, nil, err
		}
		if err := w.walk(rootDir, rootDir, op, "."); err != nil {
			return nil, nil, nil, err
		}
	}
	return w.jobs, closeAll, w.temps, nil
}

// walk adds the entries of dir (path, rel below root), listed through its
// descriptor, and walks its subdirectories, each opened below it.
func (w *walker) walk(root, dir *sframegen.Dir, path, rel string) error {
	entries, err := dir.List()
	if err != nil {
		w.jobs = append(w.jobs, &job{path: path, kind: kindMissing, err: unwrapPath(err)})
		return nil
	}
	for _, e := range entries {
		p, r := filepath.Join(path, e.Name), filepath.Join(rel, e.Name)
		if e.Mode.IsDir() && w.outputDir != "" && same(p, w.outputDir) {
			continue // the results of this run
		}
		if err := w.add(p, root, r, r, e); err != nil {
			return err
		}
		if !e.Mode.IsDir() {
			continue
		}
		sub, err := dir.Beneath(e.Name)
		if err != nil {
			w.jobs = append(w.jobs, &job{path: p, kind: kindMissing, err: unwrapPath(err)})
			continue
		}
		err = w.walk(root, sub, p, r)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// add records the path found at rel below root (the operand's
// directory); outRel is its path under --output-dir.
func (w *walker) add(path string, root *sframegen.Dir, rel, outRel string, st sframegen.Entry) error {
	j := &job{path: path, root: root, rel: rel, size: st.Size, mode: st.Mode}
	if _, ok := sframegen.TempOf(filepath.Base(rel)); ok && w.findTemps > 0 && st.Mode.IsRegular() {
		if w.findTemps == 1 {
			w.temps = append(w.temps, j)
			return nil
		}
		j.kind = kindTemp
		w.jobs = append(w.jobs, j)
		return nil
	}
	switch {
	case st.Mode.IsDir():
		if w.outputDir == "" {
			return nil
		}
		j.kind = kindDir
	case st.Mode&fs.ModeSymlink != 0:
		j.kind = kindSymlink
	case !st.Mode.IsRegular():
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
	if j.kind == kindFile {
		// A file is processed once, however many names the walk finds.
		key := [2]uint64{st.Dev, st.Ino}
		if first, ok := w.inodes[key]; ok {
			if st.Nlink == 1 || filepath.Clean(path) == filepath.Clean(first.path) {
				return nil // the same name again
			}
			first.links = append(first.links, path)
			first.linkRels = append(first.linkRels, rel)
			if j.out != "" {
				first.outLinks = append(first.outLinks, j.out)
				first.outLinkRels = append(first.outLinkRels, outRel)
			}
			first.outside = uint64(len(first.links)+1) < st.Nlink
			return nil
		}
		j.outside = st.Nlink > 1
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
