package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	sframegen "github.com/sframe-gen/sframe-gen"
)

// batchOptions are the flags of the batch form, sframe-gen [flags] PATH...
type batchOptions struct {
	jobs          int
	quiet         bool
	report        string
	preserveDates bool
	outputDir     string
	sync          bool
}

// syncWorkers is the number of workers per CPU token (-j): the others
// wait for the disk (fsync before a file is replaced).
const syncWorkers = 4

// defaultJobs is the number of files processed at once by default: the
// CPUs this process may run on.
func defaultJobs() int { return runtime.GOMAXPROCS(0) }

// runBatch processes every file under the paths (directories walked
// recursively) on b.jobs goroutines, prints each file's messages in the
// order of the walk, then a summary, and writes the report. Exit status 1
// when any file failed.
func (c *cli) runBatch(paths []string, o generateOptions, b batchOptions) int {
	var reportTo *streamTarget // --report's, checked before any file is patched
	if b.report != "" {
		var err error
		if reportTo, err = openStream(c, b.report, 0o600); err != nil {
			return c.fail(b.report, fmt.Errorf("--report: %w", err))
		}
		defer reportTo.close()
	}
	closer := newInputCloser()
	defer closer.wait()
	var gc *batchCollector
	if c.batchGC != nil {
		gc = c.batchGC()
	}
	g, err := c.generator(o, false, &batchRun{closeInput: closer.close, gc: gc})
	if err != nil {
		return c.fail("", err)
	}
	var outRoot *sframegen.Dir
	rootMade := false
	if b.outputDir != "" {
		if outRoot, rootMade, err = sframegen.MkdirNamed(b.outputDir); err != nil {
			return c.fail(b.outputDir, unwrapPath(err))
		}
		defer outRoot.Close()
	}
	jobs, closeDirs, err := collect(paths, b.outputDir, outRoot)
	if err != nil {
		return c.fail("", err)
	}
	defer closeDirs()
	if b.jobs < 1 {
		b.jobs = defaultJobs()
	}
	var total int64
	files := 0
	for _, j := range jobs {
		if j.kind == kindFile {
			total += j.size
			files++
		}
	}
	made, err := makeOutputDirs(jobs)
	if err == nil && rootMade {
		made.root(outRoot, paths)
	}
	if err != nil {
		return c.fail("", err)
	}
	prog := newProgress(c.stderr, b.quiet, files, total)
	results := make([]fileResult, len(jobs))
	done := make([]chan struct{}, len(jobs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	// Workers take the jobs in order; the results are printed in the same
	// order as they complete, whatever the number of workers. A worker
	// holds one of b.jobs CPU tokens while it reads, lowers and writes a
	// file, and gives it back while the file is synced to the disk (with
	// --sync) and renamed: more workers than tokens keep the CPUs busy
	// meanwhile (--sync -j 2 on the tree of docs/performance.md: 1.9 ->
	// 1.3 times cp -a when the disk keeps up).
	next := make(chan int)
	cpu := make(chan struct{}, b.jobs)
	dirs := newDirSyncer()
	var wg sync.WaitGroup
	for range min(b.jobs*syncWorkers, max(files, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				cpu <- struct{}{}
				var once sync.Once
				release := func() { once.Do(func() { <-cpu }) }
				// The status line counts the regular files, as files
				// and total do: links, directories and operands that
				// cannot be read are no part of them.
				counted := j.kind == kindFile
				if counted {
					prog.start(j.path, j.size)
				}
				results[i] = c.runJob(g, j, o, sframegen.ReplaceOptions{KeepTimes: b.preserveDates, NoSync: !b.sync, Written: release, DirSynced: dirs.add})
				release()
				if counted {
					prog.finish(j.path, j.size)
				}
				close(done[i])
			}
		}()
	}
	go func() {
		for _, i := range largestFirst(jobs) {
			next <- i
		}
		close(next)
	}()
	var sum summary
	var rep *report // with --report only: its lines cost 15k instructions a file
	if reportTo != nil {
		rep = newReport()
	}
	for i, j := range jobs {
		<-done[i]
		r := &results[i]
		if len(r.msgs) > 0 {
			prog.print(r.msgs)
		}
		if j.kind == kindDir {
			continue
		}
		sum.add(r)
		if rep != nil {
			rep.add(j, r)
		}
		r.msgs = nil
	}
	wg.Wait()
	if err := made.finish(); err != nil {
		fmt.Fprintf(c.stderr, "sframe-gen: %v\n", err)
		sum.counts[statusFailed]++
	}
	closer.wait()
	dirs.sync()
	prog.stop()
	if !b.quiet {
		fmt.Fprintf(c.stderr, "sframe-gen: %s\n", sum)
	}
	if reportTo != nil {
		if err := reportTo.write(c, func(w io.Writer) error { _, err := w.Write(rep.buf.Bytes()); return err }); err != nil {
			return c.fail(b.report, err)
		}
	}
	if sum.counts[statusFailed] > 0 {
		return exitFailure
	}
	return exitOK
}

// largestFirst returns the indexes of jobs in the order the workers take
// them: the biggest files first, so that the last files to finish are
// small ones and every CPU stays busy to the end (a big file taken last
// would finish alone), then everything else in the order of the walk.
func largestFirst(jobs []*job) []int {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	size := func(j *job) int64 {
		if j.kind != kindFile {
			return -1
		}
		return j.size
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(size(jobs[b]), size(jobs[a]))
	})
	return order
}

// runJob does one job of the batch.
func (c *cli) runJob(g *sframegen.Generator, j *job, o generateOptions, ro sframegen.ReplaceOptions) fileResult {
	switch j.kind {
	case kindFile:
		return c.processFile(g, j, o, ro)
	case kindMissing:
		return fileResult{status: statusFailed, reason: j.err.Error(),
			msgs: fmt.Appendf(nil, "sframe-gen: %s: %v\n", displayName(j.path), j.err)}
	case kindDir:
		return fileResult{} // made before the workers started
	case kindTemp:
		return fileResult{status: statusSkipped, reason: "a temporary file of an interrupted sframe-gen run, not one it can finish: left alone"}
	case kindSymlink:
		r := fileResult{status: statusSkipped, reason: "symbolic link"}
		if j.out != "" {
			if err := copySymlink(j); err != nil {
				r.status, r.reason = statusFailed, unwrapPath(err).Error()
				r.msgs = fmt.Appendf(nil, "sframe-gen: %s: %v\n", displayName(j.out), unwrapPath(err))
			}
		}
		return r
	}
	return fileResult{status: statusSkipped, reason: "not a regular file (" + fileKind(j.mode) + ")"}
}

// copySymlink makes the symbolic link j again under --output-dir.
func copySymlink(j *job) error {
	in, err := j.root.Place(j.rel)
	if err != nil {
		return err
	}
	defer in.Dir.Close()
	target, err := in.Readlink()
	if err != nil {
		return err
	}
	out, err := j.outRoot.Place(j.outRel)
	if err != nil {
		return err
	}
	defer out.Dir.Close()
	return out.Dir.Symlink(target, out.Name)
}

// inputCloser closes the input files of the batch (given by the library:
// sframegen.Resources.CloseInput) on goroutines of its own (closers), while
// the workers go on: the last close of a file replaced frees its blocks,
// which on a file system that discards them as it frees them waits for
// the device (about 1 ms per MiB here; docs/performance.md). At most
// closeQueue files wait to be closed; a worker with one more waits.
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

// outputDirs are the directories this run made under --output-dir (and
// the output directory itself when it made it), mode 0700 while the batch
// runs, and the modes they get at its end (finish): their sources'
// (permission, set-group-ID and sticky bits), as cp -a gives them. A
// directory that was there keeps its mode: the run changes only what it
// made.
type outputDirs struct {
	dirs  []*sframegen.Dir
	modes []os.FileMode
	// rootDir is the output directory when this run made it, closed by
	// its opener; rootMode its mode.
	rootDir  *sframegen.Dir
	rootMode os.FileMode
}

// dirModeBits are the bits of a source directory's mode its copy gets.
const dirModeBits = os.ModePerm | os.ModeSetgid | os.ModeSticky

// makeOutputDirs makes the directory jobs' directories under
// --output-dir, in walk order (parents first), never through a symbolic
// link found there.
func makeOutputDirs(jobs []*job) (*outputDirs, error) {
	made := &outputDirs{}
	for _, j := range jobs {
		if j.kind != kindDir {
			continue
		}
		d, isNew, err := j.outRoot.MkdirBeneath(j.outRel)
		if err != nil {
			made.close()
			return nil, fmt.Errorf("%s: %w", j.out, unwrapPath(err))
		}
		if !isNew {
			d.Close()
			continue
		}
		made.dirs = append(made.dirs, d)
		made.modes = append(made.modes, j.mode&dirModeBits)
	}
	return made, nil
}

// root records the output directory d, made by this run: it gets the
// mode of the first directory among operands (as cp -a gives a copy its
// source's), or 0777 less the umask (as mkdir) when none is a directory.
func (m *outputDirs) root(d *sframegen.Dir, operands []string) {
	m.rootDir = d
	m.rootMode = 0o777 &^ umask()
	for _, op := range operands {
		if st, err := os.Stat(op); err == nil && st.IsDir() {
			m.rootMode = st.Mode() & dirModeBits
			break
		}
	}
}

// finish gives each directory made its source's mode and closes it.
func (m *outputDirs) finish() error {
	var first error
	for i, d := range m.dirs {
		if err := d.Chmod(m.modes[i]); err != nil && first == nil {
			first = err
		}
	}
	if m.rootDir != nil {
		if err := m.rootDir.Chmod(m.rootMode); err != nil && first == nil {
			first = err
		}
	}
	m.close()
	return first
}

func (m *outputDirs) close() {
	for _, d := range m.dirs {
		d.Close()
	}
	m.dirs = nil
}

// dirSyncer collects the directories files were renamed into, to sync
// each once at the end (sframegen.ReplaceOptions.DirSynced) rather than
// after every file: 0.5 ms per small file. Each is kept as a descriptor of
// its own (one per directory: device and inode), and synced through it:
// never reopened by path, where a directory swapped for a symbolic link to
// a FIFO or a device would be opened instead.
type dirSyncer struct {
	mu   sync.Mutex
	dirs map[[2]uint64]*sframegen.Dir
}

func newDirSyncer() *dirSyncer { return &dirSyncer{dirs: map[[2]uint64]*sframegen.Dir{}} }

func (d *dirSyncer) add(dir *sframegen.Dir) {
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

// summary counts the outcomes of a batch.
type summary struct {
	counts [statusFailed + 1]int
	fdes   int
}

func (s *summary) add(r *fileResult) {
	s.counts[r.status]++
	if r.status == statusPatched || r.status == statusUpToDate {
		s.fdes += r.fdes
	}
}

func (s summary) String() string {
	n := 0
	for _, k := range s.counts {
		n += k
	}
	return fmt.Sprintf("%s: %d patched, %d up to date, %d without CFI, %d skipped, %d failed; %s covered",
		plural(n, "file"), s.counts[statusPatched], s.counts[statusUpToDate], s.counts[statusNoCFI], s.counts[statusSkipped], s.counts[statusFailed], plural(s.fdes, "function"))
}

// isBatch reports whether the command line asks for the batch form:
// several paths, a directory, or a flag only the batch form has. One
// FILE without them keeps the single-file form (a file that is not ELF is
// then an error).
func isBatch(fs *pflag.FlagSet, b batchOptions) bool {
	if fs.NArg() != 1 || fs.Changed("jobs") || b.report != "" || b.outputDir != "" {
		return true
	}
	st, err := os.Stat(fs.Arg(0))
	return err == nil && st.IsDir()
}

// batchUsage checks the flags that go with one FILE only.
func batchUsage(fs *pflag.FlagSet, o generateOptions, b batchOptions) error {
	switch {
	case o.output != "":
		return usageError{msg: "-o goes with one FILE; for several, --output-dir DIR"}
	case o.raw:
		return usageError{msg: "--raw goes with one FILE"}
	case b.jobs < 1:
		return usageError{msg: fmt.Sprintf("--jobs %d: want at least 1", b.jobs)}
	}
	return nil
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
