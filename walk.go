package sframegen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// Tree is the paths found under the operands of a batch ([Walk]): the
// regular files to process, each once with its other hard links in the
// tree, and what is left alone. The directories its files are opened in
// are held open until Close.
type Tree struct {
	// Files are the paths found, in the order of the walk: operands in
	// order, directories recursively in lexical order.
	Files  []*TreeFile
	opened []*replace.Dir // the operands' directories
	// outRoot is the output directory, made by Walk when rootMade, and
	// made the directories Walk made under it.
	outRoot  *replace.Dir
	rootMade bool
	made     *outputDirs
	operands []string
}

// TreeFile is one path of a Tree.
type TreeFile struct {
	// Path is the path as found: an operand, or below one.
	Path string
	// Output is where the result goes under WalkOptions.OutputDir ("" in
	// place).
	Output string
	// Links are the other names of a regular file found in the tree (the
	// same device and inode), processed with it; OutputLinks their paths
	// under the output directory.
	Links, OutputLinks []string
	// Size and Mode are what the walk saw (lstat): a symbolic link found
	// in a directory is not followed, an operand is.
	Size int64
	Mode fs.FileMode
	// Named is set for an operand that is not a directory: the user named
	// the file.
	Named bool
	// Temp is set for a temporary name a killed run left and Walk did not
	// resume: left alone, never processed as a file.
	Temp bool
	// Err, when not nil, is why the path could not be read or listed.
	Err error

	// root is the directory of the operand the path was found under,
	// held open, and rel the path below it: the file is opened there
	// again without following a symbolic link (Dir.Place), so a link
	// swapped in after the walk cannot redirect the read or the write.
	// outRoot and outRel are the same for Output.
	root, outRoot *replace.Dir
	rel, outRel   string
	id            [2]uint64 // the device and inode the walk saw
	// linkRels are the Links' paths below root, outLinkRels the
	// OutputLinks' below outRoot.
	linkRels, outLinkRels []string
	// outside is set when the file has hard links the walk did not find.
	outside bool
}

// Regular reports whether f is a regular file to process: the files a
// batch counts.
func (f *TreeFile) Regular() bool { return f.Err == nil && !f.Temp && f.Mode.IsRegular() }

// Open opens f, a regular file, for reading below the directory the walk
// held open, as Process opens it: never through a symbolic link, a FIFO
// not waited for, anything but a regular file refused. size is the
// file's size when it was opened.
func (f *TreeFile) Open() (file *os.File, size int64, err error) {
	at, err := f.root.Place(f.rel)
	if err != nil {
		return nil, 0, err
	}
	defer at.Dir.Close()
	src, err := replace.OpenSource(at)
	if err != nil {
		return nil, 0, err
	}
	return src.File, src.Size(), nil
}

// WalkOptions say how a tree is walked.
type WalkOptions struct {
	// OutputDir, when not "", is the directory the results are written
	// under, mirroring the tree; Walk makes it (Tree.Close closes it)
	// and lists the directories to make under it.
	OutputDir string
	// Resume, in place, finishes or undoes the replacements a killed run
	// left (their temporary names) before the walk, and walks the tree
	// again after them, so that a file whose names were being replaced
	// gets them all. Without it such names are left alone (TreeFile.Temp).
	Resume bool
}

// OutputClashError is the error of Walk for two paths that would be
// written to one output under WalkOptions.OutputDir, or a path that would
// be written over itself (Other "").
type OutputClashError struct {
	Path, Other, Output string
}

// Error names the paths.
func (e *OutputClashError) Error() string {
	if e.Other == "" {
		return fmt.Sprintf("%s would be written over itself", e.Path)
	}
	return fmt.Sprintf("%s and %s would both be written to %s", e.Other, e.Path, e.Output)
}

// Walk walks the operands in order (directories recursively, in lexical
// order) and returns the Tree of the paths found, hard links of a file
// folded into the TreeFile of its first name. Symbolic links found in
// directories are not followed; operands are, by the kernel. Every
// directory is listed through a descriptor of its own, opened below its
// parent without following a link: an entry swapped between a directory
// and a symbolic link is never listed by its path, so no name inside a
// directory the link leads to is seen. An operand that cannot be read is
// a TreeFile with its Err; two paths with one output an
// *OutputClashError. Under WalkOptions.OutputDir, the directories of the
// tree are made (mode 0700 until [Generator.ProcessTree] is done, never
// through a symbolic link found there).
func Walk(operands []string, opt WalkOptions) (*Tree, error) {
	var outRoot *replace.Dir
	made := false
	if opt.OutputDir != "" {
		var err error
		if outRoot, made, err = replace.MkdirNamed(opt.OutputDir); err != nil {
			return nil, &fs.PathError{Op: "mkdir", Path: opt.OutputDir, Err: replace.UnwrapPath(err)}
		}
	}
	t, err := walkResuming(operands, opt, outRoot)
	if err != nil {
		if outRoot != nil {
			outRoot.Close()
		}
		return nil, err
	}
	t.outRoot, t.rootMade, t.operands = outRoot, made, operands
	if outRoot != nil {
		if err := t.makeOutputDirs(); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

// walkResuming is Walk with the output directory made: in place with
// Resume, the temporary names of a killed run are resumed first, and the
// tree walked again after.
func walkResuming(operands []string, opt WalkOptions, outRoot *replace.Dir) (*Tree, error) {
	switch {
	case opt.OutputDir != "":
		t, _, err := walkOperands(operands, opt.OutputDir, outRoot, 0)
		return t, err
	case !opt.Resume:
		t, _, err := walkOperands(operands, "", nil, 2)
		return t, err
	}
	t, temps, err := walkOperands(operands, "", nil, 1)
	if err != nil || len(temps) == 0 {
		return t, err
	}
	var failed []*TreeFile
	for _, tf := range temps {
		at, err := tf.root.Place(tf.rel)
		if err == nil {
			_, err = replace.ResumeTemp(at.Dir, at.Name)
			at.Dir.Close()
		}
		if err != nil {
			failed = append(failed, &TreeFile{Path: tf.Path, Err: replace.UnwrapPath(err)})
		}
	}
	t.Close()
	t, _, err = walkOperands(operands, "", nil, 2)
	if err != nil {
		return nil, err
	}
	t.Files = append(failed, t.Files...)
	return t, nil
}

// Close closes the directories the tree holds open.
func (t *Tree) Close() {
	if t.made != nil {
		t.made.close()
		t.made = nil
	}
	for _, d := range t.opened {
		d.Close()
	}
	t.opened = nil
	if t.outRoot != nil {
		t.outRoot.Close()
		t.outRoot = nil
	}
}

// walker collects the TreeFiles of the operands.
type walker struct {
	outputDir string
	outRoot   *replace.Dir
	t         *Tree
	inodes    map[[2]uint64]*TreeFile
	outs      map[string]string // output path -> input path
	// temps are the temporary names of a killed run found in place
	// (replace.TempOf), returned apart (findTemps 1) or made TreeFiles with Temp
	// (findTemps 2: those left after they were resumed, never processed
	// as files nor counted as names of their file).
	temps     []*TreeFile
	findTemps int
	// cwd is the working directory, for same (read once: os.Getwd
	// stats "." and $PWD, four calls a file when asked each time); ""
	// when it cannot be read.
	cwd string
}

// walkOperands is Walk's walk; findTemps says what becomes of the
// temporary names of a killed run (walker.findTemps).
func walkOperands(operands []string, outputDir string, outRoot *replace.Dir, findTemps int) (t *Tree, temps []*TreeFile, err error) {
	w := &walker{outputDir: outputDir, outRoot: outRoot, t: &Tree{}, inodes: map[[2]uint64]*TreeFile{}, outs: map[string]string{}, findTemps: findTemps}
	if outputDir != "" {
		w.cwd, _ = os.Getwd()
	}
	defer func() {
		if err != nil {
			w.t.Close()
		}
	}()
	for _, op := range operands {
		// An operand that is a symbolic link is followed (as find -H):
		// the user named it; links found in directories are not.
		rootDir, err := replace.OpenDir(op)
		if errors.Is(err, syscall.ENOTDIR) {
			// A file operand is taken where the user named it: its
			// directory, a final symbolic link followed by the kernel.
			at, err := replace.NamedPlace(op)
			var st replace.Entry
			if err == nil {
				if st, err = at.Lstat(); err != nil {
					at.Dir.Close()
				}
			}
			if err != nil {
				w.missing(op, err)
				continue
			}
			w.t.opened = append(w.t.opened, at.Dir)
			n := len(w.t.Files)
			if err := w.add(op, at.Dir, at.Name, filepath.Base(op), st); err != nil {
				return nil, nil, err
			}
			if len(w.t.Files) > n {
				w.t.Files[n].Named = true
			}
			continue
		}
		if err != nil {
			w.missing(op, err)
			continue
		}
		w.t.opened = append(w.t.opened, rootDir)
		st, err := rootDir.Stat()
		if err != nil {
			w.missing(op, err)
			continue
		}
		if err := w.add(op, rootDir, ".", ".", st); err != nil {
			return nil, nil, err
		}
		if err := w.walk(rootDir, rootDir, op, "."); err != nil {
			return nil, nil, err
		}
	}
	return w.t, w.temps, nil
}

// missing records a path that cannot be read.
func (w *walker) missing(path string, err error) {
	w.t.Files = append(w.t.Files, &TreeFile{Path: path, Err: replace.UnwrapPath(err)})
}

// walk adds the entries of dir (path, rel below root), listed through its
// descriptor, and walks its subdirectories, each opened below it.
func (w *walker) walk(root, dir *replace.Dir, path, rel string) error {
	entries, err := dir.List()
	if err != nil {
		w.missing(path, err)
		return nil
	}
	for _, e := range entries {
		p, r := filepath.Join(path, e.Name), filepath.Join(rel, e.Name)
		if e.Mode.IsDir() && w.outputDir != "" && w.same(p, w.outputDir) {
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
			w.missing(p, err)
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
// directory); outRel is its path under the output directory.
func (w *walker) add(path string, root *replace.Dir, rel, outRel string, st replace.Entry) error {
	f := &TreeFile{Path: path, root: root, rel: rel, Size: st.Size, Mode: st.Mode}
	if _, ok := replace.TempOf(filepath.Base(rel)); ok && w.findTemps > 0 && st.Mode.IsRegular() {
		if w.findTemps == 1 {
			w.temps = append(w.temps, f)
			return nil
		}
		f.Temp = true
		w.t.Files = append(w.t.Files, f)
		return nil
	}
	if st.Mode.IsDir() && w.outputDir == "" {
		return nil
	}
	if w.outputDir != "" {
		f.Output = filepath.Join(w.outputDir, outRel)
		f.outRoot, f.outRel = w.outRoot, outRel
		if st.Mode.IsDir() {
			if outRel == "." {
				return nil // the output directory itself
			}
		} else {
			if prev, ok := w.outs[f.Output]; ok {
				return &OutputClashError{Path: path, Other: prev, Output: f.Output}
			}
			if w.same(path, f.Output) {
				return &OutputClashError{Path: path, Output: f.Output}
			}
			w.outs[f.Output] = path
		}
	}
	if st.Mode.IsRegular() {
		// A file is processed once, however many names the walk finds.
		key := [2]uint64{st.Dev, st.Ino}
		if first, ok := w.inodes[key]; ok {
			if st.Nlink == 1 || filepath.Clean(path) == filepath.Clean(first.Path) {
				return nil // the same name again
			}
			first.Links = append(first.Links, path)
			first.linkRels = append(first.linkRels, rel)
			if f.Output != "" {
				first.OutputLinks = append(first.OutputLinks, f.Output)
				first.outLinkRels = append(first.outLinkRels, outRel)
			}
			first.outside = uint64(len(first.Links)+1) < st.Nlink
			return nil
		}
		f.outside = st.Nlink > 1
		f.id = key
		w.inodes[key] = f
	}
	w.t.Files = append(w.t.Files, f)
	return nil
}

// same reports whether two paths name the same place (before any link),
// made absolute as filepath.Abs makes them; false for a relative path
// when the working directory cannot be read.
func (w *walker) same(a, b string) bool {
	x, ok1 := w.abs(a)
	y, ok2 := w.abs(b)
	return ok1 && ok2 && x == y
}

// abs is filepath.Abs with the working directory read once.
func (w *walker) abs(p string) (string, bool) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	return filepath.Join(w.cwd, p), w.cwd != ""
}
