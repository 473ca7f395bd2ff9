package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// progress draws one status line on a terminal while a batch runs: files
// and bytes done out of the total, the file being processed and the time
// left. On anything but a terminal, or with -q, it only passes messages
// through.
type progress struct {
	mu         sync.Mutex
	w          io.Writer
	tty        *os.File // nil: no status line
	files      int
	total      int64
	done       int
	doneBytes  int64
	current    string
	started    time.Time
	drawn      bool
	stopTicker chan struct{}
	tickerDone chan struct{}
}

// progressEvery is how often the status line is redrawn.
const progressEvery = 150 * time.Millisecond

func newProgress(w io.Writer, quiet bool, files int, total int64) *progress {
	p := &progress{w: w, files: files, total: total, started: time.Now()}
	if f, ok := w.(*os.File); ok && !quiet && isTerminal(f) {
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

// start notes the file a worker begins.
func (p *progress) start(path string) {
	p.mu.Lock()
	p.current = displayName(path)
	p.mu.Unlock()
}

// finish counts a file done.
func (p *progress) finish(path string, size int64) {
	p.mu.Lock()
	p.done++
	p.doneBytes += size
	p.mu.Unlock()
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
	if el := time.Since(p.started); p.doneBytes > 0 && p.doneBytes < p.total {
		left := time.Duration(float64(el) * float64(p.total-p.doneBytes) / float64(p.doneBytes))
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

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return isTerminalFD(int(f.Fd())) }

// isTerminalFD reports whether the descriptor fd is a terminal (TCGETS
// succeeds).
func isTerminalFD(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// terminalWidth is f's width in columns (80 when unknown).
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 80
	}
	return int(ws.Col)
}
