package sframegen

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
)

// TreeOptions say how [Generator.ProcessTree] processes a Tree.
type TreeOptions struct {
	// Workers is the number of files processed at once (0: GOMAXPROCS).
	Workers int
	// KeepTimes gives each file written the access and modification
	// times of its input.
	KeepTimes bool
	// Sync syncs each file to the disk before it replaces the old one,
	// as Process does for one file; without it the files are written as
	// cp writes them (replace.ReplaceOptions.NoSync).
	Sync bool
	// Begin, when not nil, is called on a worker as it begins the regular
	// file Files[i].
	Begin func(i int)
	// Done, when not nil, is called on the worker once Files[i] is done
	// with: out and err are what Process returned for a regular file; a
	// path left alone (a symbolic link, copied under the output
	// directory; a FIFO, a device) is Skipped with the reason; one that
	// could not be read is Failed with TreeFile.Err. A file the user named that SFrame has
	// nothing to say about (not ELF) is Failed too, as Process fails it.
	// Done is called from several goroutines at once.
	Done func(i int, out *Outcome, err error)
	// Ordered, when not nil, is called with each index in the order of
	// the walk, on ProcessTree's goroutine, once Done has returned for it.
	Ordered func(i int)
}

// syncWorkers is the number of workers per CPU token (TreeOptions.Workers):
// the others wait for the disk (fsync before a file is replaced).
const syncWorkers = 4

// ProcessTree processes every regular file of t (Process, each file
// replaced together with its other names in the tree, or written under
// the output directory) on opt.Workers goroutines, the biggest files
// first, and calls opt.Done for each path. The other paths (symbolic
// links, made again under an output directory) are done meanwhile, from
// the start, on a goroutine of their own. Under an output directory,
// symbolic links are made again and the directories made get their
// sources' modes at the end; the error is about those. Directories
// files were renamed into are synced once each, at the end.
func (g *Generator) ProcessTree(t *Tree, opt TreeOptions) error {
	if g.gc != nil {
		g.gc.startTree()
		defer g.gc.endTree()
	}
	closer := newInputCloser()
	defer closer.wait()
	workers := cmp.Or(opt.Workers, runtime.GOMAXPROCS(0))
	files := 0
	for _, f := range t.Files {
		if f.Regular() {
			files++
		}
	}
	// A worker holds one of the CPU tokens while it reads, lowers and
	// writes a file, and gives it back while the file is synced to the
	// disk (Sync) and renamed: more workers than tokens keep the CPUs
	// busy meanwhile. The other paths take no token: they are the
	// kernel's work (a symbolic link made again), done meanwhile.
	dirs := newDirSyncer()
	cpu := make(chan struct{}, workers)
	each(t, min(workers*syncWorkers, max(files, 1)), func(i int) {
		f := t.Files[i]
		if !f.Regular() {
			out, err := g.processTreeFile(f, replace.ReplaceOptions{}, closer.close)
			if opt.Done != nil {
				opt.Done(i, &out, err)
			}
			return
		}
		cpu <- struct{}{}
		var once sync.Once
		release := func() { once.Do(func() { <-cpu }) }
		if opt.Begin != nil {
			opt.Begin(i)
		}
		ro := replace.ReplaceOptions{KeepTimes: opt.KeepTimes, NoSync: !opt.Sync, Written: release, DirSynced: dirs.add}
		out, err := g.processTreeFile(f, ro, closer.close)
		release()
		if opt.Done != nil {
			opt.Done(i, &out, err)
		}
	}, opt.Ordered)
	err := t.finishDirs()
	closer.wait()
	dirs.sync()
	return err
}

// Each calls work with the index of each path of t on workers goroutines
// (0: GOMAXPROCS) for the regular files, the biggest first, and on one
// more goroutine, meanwhile, for the other paths, in the order of the
// walk; and ordered (when not nil) with each index in the order of the
// walk, on the caller's goroutine, once work has returned for it.
func (t *Tree) Each(workers int, work, ordered func(i int)) {
	each(t, cmp.Or(workers, runtime.GOMAXPROCS(0)), work, ordered)
}

// each is Each, with workers given.
func each(t *Tree, workers int, work, ordered func(i int)) {
	done := make([]chan struct{}, len(t.Files))
	for i := range done {
		done[i] = make(chan struct{})
	}
	order := largestFirst(t.Files)
	regular := 0
	for regular < len(order) && t.Files[order[regular]].Regular() {
		regular++
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				work(i)
				close(done[i])
			}
		})
	}
	// The paths that are not regular files, on a goroutine of their own
	// from the start: taken after the files, the symbolic links of a
	// tree of libraries (one or two a library, made again under an
	// output directory) were the last 67-240 ms of a 0.5-1.4 s run, on
	// one CPU, each waiting for the directory's lock
	// (docs/performance.md, "A tree").
	wg.Go(func() {
		for _, i := range order[regular:] {
			work(i)
			close(done[i])
		}
	})
	go func() {
		for _, i := range order[:regular] {
			next <- i
		}
		close(next)
	}()
	for i := range t.Files {
		<-done[i]
		if ordered != nil {
			ordered(i)
		}
	}
	wg.Wait()
}

// largestFirst returns the indexes of files in the order the workers take
// them: the regular files, the biggest first, so that the last files to
// finish are small ones and every CPU stays busy to the end (a big file
// taken last would finish alone), then everything else in the order of
// the walk.
func largestFirst(files []*TreeFile) []int {
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	size := func(f *TreeFile) int64 {
		if !f.Regular() {
			return -1
		}
		return f.Size
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(size(files[b]), size(files[a]))
	})
	return order
}

// processTreeFile does one path of a tree; closeInput closes the input
// files.
func (g *Generator) processTreeFile(f *TreeFile, ro replace.ReplaceOptions, closeInput func(*os.File)) (Outcome, error) {
	switch {
	case f.Err != nil:
		return Outcome{Status: Failed, Reason: f.Err.Error()}, f.Err
	case f.Mode.IsDir():
		return Outcome{}, nil // made by Walk
	case f.Temp:
		return Outcome{Status: Skipped, Reason: "a temporary file of an interrupted sframe-gen run, not one it can finish: left alone"}, nil
	case f.Mode&fs.ModeSymlink != 0:
		out := Outcome{Status: Skipped, Reason: "symbolic link"}
		if f.Output != "" {
			if err := copySymlink(f); err != nil {
				err = replace.UnwrapPath(err)
				return Outcome{Status: Failed, Reason: err.Error()}, err
			}
		}
		return out, nil
	case !f.Mode.IsRegular():
		return Outcome{Status: Skipped, Reason: "not a regular file (" + elfread.FileKind(f.Mode) + ")"}, nil
	}
	out, err := g.processPlaces(f, ro, closeInput)
	if err == nil && f.Named && out.Status == Skipped {
		// A file the user named gets no SFrame: an error, as it is when
		// named alone, not passed over as the files a walk finds.
		if f.Output != "" {
			out.Reason += " (copied as it is)"
		}
		out.Status = Failed
		return out, errors.New(out.Reason)
	}
	return out, err
}

// processPlaces opens the places of f (the file, its other names, its
// output and the output's other names, each below the directory the walk
// held open, never through a symbolic link) and runs Process on them.
func (g *Generator) processPlaces(f *TreeFile, ro replace.ReplaceOptions, closeInput func(*os.File)) (Outcome, error) {
	at, err := f.root.Place(f.rel)
	if err != nil {
		return Outcome{}, replace.UnwrapPath(err)
	}
	defer at.Dir.Close()
	job := Job{In: at, Replace: ro}
	if f.Output == "" {
		job.Replace.InPlace = f.outside
		for i, rel := range f.linkRels {
			l, err := f.root.Place(rel)
			if err != nil {
				return Outcome{}, fmt.Errorf("%s: %w", f.Links[i], replace.UnwrapPath(err))
			}
			defer l.Dir.Close()
			job.Replace.Links = append(job.Replace.Links, l)
		}
	} else {
		if job.Out, err = f.outRoot.Place(f.outRel); err != nil {
			return Outcome{}, &OutputError{Op: "writing", Link: -1, Err: replace.UnwrapPath(err)}
		}
		defer job.Out.Dir.Close()
		for i, rel := range f.outLinkRels {
			l, err := f.outRoot.Place(rel)
			if err != nil {
				return Outcome{}, &OutputError{Op: "linking", Link: i, Err: replace.UnwrapPath(err)}
			}
			defer l.Dir.Close()
			job.OutLinks = append(job.OutLinks, l)
		}
	}
	return g.process(job, f.id, closeInput)
}

// copySymlink makes the symbolic link f again under the output directory.
func copySymlink(f *TreeFile) error {
	in, err := f.root.Place(f.rel)
	if err != nil {
		return err
	}
	defer in.Dir.Close()
	target, err := in.Readlink()
	if err != nil {
		return err
	}
	out, err := f.outRoot.Place(f.outRel)
	if err != nil {
		return err
	}
	defer out.Dir.Close()
	return out.Dir.Symlink(target, out.Name)
}

// inputCloser closes the input files of a tree (Process's, given to it)
// on goroutines of its own (closers), while the workers go on: the last
// close of a file replaced frees its blocks, which on a file system that
// discards them as it frees them (ext4 without a journal, mounted with
// discard) waits for the device (docs/performance.md). At most closeQueue
// files wait to be closed; a worker with one more waits.
type inputCloser struct {
	files chan *os.File
	wg    sync.WaitGroup
	once  sync.Once
}

const (
	closers    = 4
	closeQueue = 64
)

func newInputCloser() *inputCloser {
	c := &inputCloser{files: make(chan *os.File, closeQueue)}
	for range closers {
		c.wg.Go(func() {
			for f := range c.files {
				f.Close()
			}
		})
	}
	return c
}

// close closes f on one of c's goroutines.
func (c *inputCloser) close(f *os.File) { c.files <- f }

// wait closes the files given so far, and returns once they are closed.
// No file may be given after.
func (c *inputCloser) wait() {
	c.once.Do(func() { close(c.files) })
	c.wg.Wait()
}

// outputDirs are the directories a Walk made under the output directory
// (and the output directory itself when it made it), mode 0700 while the
// tree is processed, and the modes they get at its end (finishDirs):
// their sources' (permission, set-group-ID and sticky bits), as cp -a
// gives them. A directory that was there keeps its mode: the run changes
// only what it made.
type outputDirs struct {
	dirs  []*replace.Dir
	modes []os.FileMode
	// rootMode is the output directory's, when the walk made it.
	rootMode os.FileMode
}

// dirModeBits are the bits of a source directory's mode its copy gets.
const dirModeBits = os.ModePerm | os.ModeSetgid | os.ModeSticky

// makeOutputDirs makes the directories of t under the output directory,
// in walk order (parents first), never through a symbolic link found
// there.
func (t *Tree) makeOutputDirs() error {
	made := &outputDirs{}
	for _, f := range t.Files {
		if f.Err != nil || !f.Mode.IsDir() {
			continue
		}
		d, isNew, err := f.outRoot.MkdirBeneath(f.outRel)
		if err != nil {
			made.close()
			return fmt.Errorf("%s: %w", f.Output, replace.UnwrapPath(err))
		}
		if !isNew {
			d.Close()
			continue
		}
		made.dirs = append(made.dirs, d)
		made.modes = append(made.modes, f.Mode&dirModeBits)
	}
	if t.rootMade {
		// The output directory gets the mode of the first directory
		// among the operands (as cp -a gives a copy its source's), or
		// 0777 less the umask (as mkdir) when none is a directory.
		made.rootMode = 0o777 &^ umask()
		for _, op := range t.operands {
			if st, err := os.Stat(op); err == nil && st.IsDir() {
				made.rootMode = st.Mode() & dirModeBits
				break
			}
		}
	}
	t.made = made
	return nil
}

// finishDirs gives each directory made its source's mode and closes it.
func (t *Tree) finishDirs() error {
	m := t.made
	if m == nil {
		return nil
	}
	var first error
	for i, d := range m.dirs {
		if err := d.Chmod(m.modes[i]); err != nil && first == nil {
			first = err
		}
	}
	if t.rootMade && t.outRoot != nil {
		if err := t.outRoot.Chmod(m.rootMode); err != nil && first == nil {
			first = err
		}
	}
	m.close()
	t.made = nil
	return first
}

func (m *outputDirs) close() {
	for _, d := range m.dirs {
		d.Close()
	}
	m.dirs = nil
}

// dirSyncer collects the directories files were renamed into, to sync
// each once at the end (replace.ReplaceOptions.DirSynced) rather than after every
// file. Each is kept as a descriptor of its own (one per directory:
// device and inode), and synced through it: never reopened by path, where
// a directory swapped for a symbolic link to a FIFO or a device would be
// opened instead.
type dirSyncer struct {
	mu   sync.Mutex
	dirs map[[2]uint64]*replace.Dir
}

func newDirSyncer() *dirSyncer { return &dirSyncer{dirs: map[[2]uint64]*replace.Dir{}} }

func (d *dirSyncer) add(dir *replace.Dir) {
	id, err := dir.ID()
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs[id] != nil {
		return
	}
	if c, err := dir.Clone(); err == nil {
		d.dirs[id] = c
	}
}

// sync syncs the directories collected, and closes them.
func (d *dirSyncer) sync() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, dir := range d.dirs {
		dir.Sync()
		dir.Close()
		delete(d.dirs, id)
	}
}

// umask is the process's file mode creation mask (/proc/self/status),
// 022 where it cannot be read.
func umask() os.FileMode {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o022
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return os.FileMode(m) & os.ModePerm
			}
		}
	}
	return 0o022
}
