package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBatchInterrupt kills a batch run over a tree with SIGINT or SIGTERM
// at random points and checks that every file is then the old or the new
// one (never anything else), that hard links are still one file, and that
// no temporary file is left; the run's exit status is 1 (0 if it ended
// first).
func TestBatchInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills batch runs at random points (runs in make test-long)")
	}
	bin := filepath.Join(t.TempDir(), "sframe-gen")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	td := testdataDir()
	orig := filepath.Join(t.TempDir(), "tree")
	for i, from := range []string{"link/x86_64/pie.exe", "link/x86_64/lazy.so", "link/aarch64/gc.exe",
		"link/s390x/now.so", "link/x86_64/demo.pic.o", "link/aarch64/demo.pic.o", "cc/x86_64/O2/leveldb.o",
		"link/x86_64/tree-sitter.exe", "link/s390x/tree-sitter.exe", "gas/aarch64_be/basic.o"} {
		for k := range 3 {
			p := filepath.Join(orig, fmt.Sprint(k), fmt.Sprintf("%d-%s", i, filepath.Base(from)))
			os.MkdirAll(filepath.Dir(p), 0o755)
			copyFile(t, filepath.Join(td, from), p)
		}
	}
	os.Link(filepath.Join(orig, "0", "1-lazy.so"), filepath.Join(orig, "2", "hard.so"))
	// Big files, whose copy takes long enough to be interrupted in.
	pad := bytes.Repeat([]byte("sframe-gen padding "), 1<<15)
	for k := range 3 {
		p := filepath.Join(orig, fmt.Sprint(k), "big.exe")
		copyFile(t, filepath.Join(td, "link/x86_64/pie.exe"), p)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 24<<20; n += len(pad) {
			f.Write(pad)
		}
		f.Close()
	}
	copyTree := func() string {
		d := filepath.Join(t.TempDir(), "tree")
		if out, err := exec.Command("cp", "-a", orig, d).CombinedOutput(); err != nil {
			t.Fatalf("cp -a: %v\n%s", err, out)
		}
		return d
	}
	hashes := func(dir string) map[string][32]byte {
		m := map[string][32]byte{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(dir, p)
				m[rel] = hashFile(t, p)
			}
			return nil
		})
		return m
	}
	old := hashes(orig)
	full := copyTree()
	start := time.Now()
	if out, err := exec.Command(bin, "-q", "-j", "2", full).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	took := time.Since(start)
	patched := hashes(full)
	changed := 0
	for rel := range old {
		if patched[rel] != old[rel] {
			changed++
		}
	}
	if changed < len(old)/2 {
		t.Fatalf("only %d of %d files patched by the uninterrupted run", changed, len(old))
	}

	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d; an uninterrupted run takes %v", seed, took)
	interrupted := 0
	for round := range 8 {
		dir := copyTree()
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[round%2]
		delay := time.Duration(rng.Int63n(int64(took)))
		cmd := exec.Command(bin, "-q", "-j", "2", dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.ExitCode() == exitFailure && strings.Contains(stderr.String(), "sframe-gen: "+sig.String()):
			interrupted++
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() && ee.Sys().(syscall.WaitStatus).Signal() == sig:
			// Killed before main installed its handler (a loaded
			// machine can take that long to start): no file was opened.
		default:
			t.Errorf("round %d (%v after %v): %v\n%s", round, sig, delay, err, stderr.String())
		}
		got := hashes(dir)
		nNew := 0
		for rel, h := range got {
			if strings.Contains(rel, ".sframe-gen-") {
				t.Errorf("round %d: temporary file %s left", round, rel)
				continue
			}
			switch h {
			case patched[rel]:
				if h != old[rel] {
					nNew++
				}
			case old[rel]:
			default:
				t.Errorf("round %d (%v after %v): %s is neither the old nor the new file", round, sig, delay, rel)
			}
		}
		if len(got) != len(old) {
			t.Errorf("round %d: %d files, want %d", round, len(got), len(old))
		}
		a, _ := os.Stat(filepath.Join(dir, "0", "1-lazy.so"))
		b, _ := os.Stat(filepath.Join(dir, "2", "hard.so"))
		if !os.SameFile(a, b) {
			t.Errorf("round %d: the hard links are no longer one file", round)
		}
		t.Logf("round %d: %v after %v: %d of %d files new", round, sig, delay, nNew, changed)
	}
	if interrupted == 0 {
		t.Errorf("no run was interrupted (all ended before the signal)")
	}
}
