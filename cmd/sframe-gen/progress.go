package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/sframe-gen/sframe-gen/elfpatch/replace"
	"golang.org/x/sys/unix"
)

// progress draws one status line on a terminal while a batch runs: files
// and bytes done out of the total, the file being processed and the time
// left. On anything but a terminal, or with -q, it only passes messages
// through.
//
// The time left is the bytes left at the measured rate: the bytes done,
// files in progress included, over the time since the first file began. A
// file in progress counts the bytes a worker does in the time it has had,
// at the rate of the finished files (up to its size): with the big files
// done first and several at once, counting finished files only would see
// almost nothing done while the workers are busy with the biggest files.
type progress struct {
	mu         sync.Mutex
	w          io.Writer
	tty        *os.File // nil: no status line
	files      int
	total      int64
	done       int
	doneBytes  int64
	current    string
	running    map[string]runningFile
	began      time.Time     // when the first file began
	busy       time.Duration // the time the finished files took, together
	drawn      bool
	stopTicker chan struct{}
	tickerDone chan struct{}
}

// runningFile is a file in progress: its size and when it began.
type runningFile struct {
	size    int64
	started time.Time
}

// progressEvery is how often the status line is redrawn.
const progressEvery = 150 * time.Millisecond

// newProgress makes the status line of a batch of files regular files of
// total bytes.
func newProgress(w io.Writer, quiet bool, files int, total int64) *progress {
	p := &progress{w: w, files: files, total: total, running: map[string]runningFile{}}
	if f, ok := w.(*os.File); ok && !quiet && replace.IsTerminal(int(f.Fd())) {
		p.tty = f
		p.stopTicker, p.tickerDone = make(chan struct{}), make(chan struct{})
		p.draw()
		go p.tick()
	}
	return p
}

func (p *progress) tick() {
	defer close(p.tickerDone)
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stopTicker:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// start notes the file of size bytes a worker begins.
func (p *progress) start(path string, size int64) {
	p.mu.Lock()
	p.current = displayName(path)
	now := time.Now()
	if p.began.IsZero() {
		p.began = now
	}
	p.running[path] = runningFile{size: size, started: now}
	p.mu.Unlock()
}

// finish counts a file done.
func (p *progress) finish(path string, size int64) {
	p.mu.Lock()
	p.done++
	p.doneBytes += size
	if r, ok := p.running[path]; ok {
		p.busy += time.Since(r.started)
		delete(p.running, path)
	}
	p.mu.Unlock()
}

// left estimates the time the batch still needs at now; false before a
// file is finished (nothing measured yet).
func (p *progress) left(now time.Time) (time.Duration, bool) {
	if p.busy <= 0 || p.doneBytes <= 0 {
		return 0, false
	}
	perWorker := float64(p.doneBytes) / p.busy.Seconds() // bytes per second
	done := float64(p.doneBytes)
	for _, r := range p.running {
		done += min(float64(r.size), perWorker*now.Sub(r.started).Seconds())
	}
	elapsed := now.Sub(p.began).Seconds()
	if elapsed <= 0 {
		return 0, false
	}
	rest := max(float64(p.total)-done, 0)
	return time.Duration(rest / (done / elapsed) * float64(time.Second)), true
}

// print writes messages above the status line.
func (p *progress) print(msgs []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.w.Write(msgs)
	if p.tty != nil {
		p.draw()
	}
}

// stop removes the status line for good.
func (p *progress) stop() {
	if p.tty == nil {
		return
	}
	close(p.stopTicker)
	<-p.tickerDone
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}

func (p *progress) clear() {
	if p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// draw writes the status line (the lock held).
func (p *progress) draw() {
	if p.tty == nil {
		return
	}
	line := fmt.Sprintf("%d/%d files, %s/%s", p.done, p.files, mib(p.doneBytes), mib(p.total))
	if left, ok := p.left(time.Now()); ok && p.done < p.files {
		line += fmt.Sprintf(", %s left", left.Round(time.Second))
	}
	if p.current != "" {
		line += ": "
		room := terminalWidth(p.tty) - len(line) - 1
		cur := p.current
		if room < 8 {
			cur = ""
		} else if len(cur) > room {
			cur = "..." + cur[len(cur)-room+3:]
		}
		line += cur
	}
	io.WriteString(p.w, "\r\x1b[K"+line)
	p.drawn = true
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// terminalWidth is f's width in columns (80 when unknown).
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 80
	}
	return int(ws.Col)
}
