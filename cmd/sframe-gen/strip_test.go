package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// TestStripOrder checks the strip rule of docs/integration.md#strip with
// Debian's strip (binutils 2.40 here) and the reference strip of each
// architecture: patched then stripped, a PIE and a Go program keep their
// SFrame and run; stripped first, a Go program has no call-frame
// information left and gets no SFrame. The exception the rule names: a
// static executable of aarch64 or s390x (sframe-gen moves its program
// header table into a new PT_LOAD) no longer runs once stripped, so it is
// stripped first, and then gets SFrame and runs. If an outcome changes,
// the rule in the docs must change with it.
func TestStripOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and strips programs for three ABIs (runs in make test-long)")
	}
	bin := buildCommand(t)
	src := filepath.Join(t.TempDir(), "hello.c")
	if err := os.WriteFile(src, []byte("#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"x86_64", "aarch64", "s390x"} {
		strips := map[string]string{"debian": debianStrip(t, arch), "reference": sysfiles.GNURef.Tool(t, arch, "strip")}
		for _, kind := range []string{"pie", "static", "go"} {
			if kind == "go" && arch == "s390x" {
				continue // s390x Go code has no SFrame representation (see docs/lower.md)
			}
			t.Run(arch+"/"+kind, func(t *testing.T) {
				prog := buildStripSubject(t, arch, kind, src)
				staticCross := kind == "static" && arch != "x86_64"
				for name, strip := range strips {
					f := filepath.Join(t.TempDir(), "patched-then-stripped")
					copyFile(t, prog, f)
					runOK(t, bin, f)
					runOK(t, strip, f)
					runs := runsOK(t, arch, f)
					switch {
					case staticCross && runs:
						t.Errorf("patched, then %s strip: runs; the strip rule's exception (docs/integration.md#strip) no longer holds", name)
					case !staticCross && !runs:
						t.Errorf("patched, then %s strip: does not run", name)
					}
					if !hasSFrameSegment(t, f) {
						t.Errorf("patched, then %s strip: no PT_GNU_SFRAME", name)
					}
				}
				f := filepath.Join(t.TempDir(), "stripped-then-patched")
				copyFile(t, prog, f)
				runOK(t, strips["debian"], f)
				out, _ := exec.Command(bin, "-v", f).CombinedOutput()
				switch {
				case kind == "go" && hasSFrameSegment(t, f):
					t.Errorf("stripped, then patched: a Go program has SFrame without its .debug_frame?\n%s", out)
				case kind != "go" && !hasSFrameSegment(t, f):
					t.Errorf("stripped, then patched: no PT_GNU_SFRAME\n%s", out)
				}
				if !runsOK(t, arch, f) {
					t.Errorf("stripped, then patched: does not run")
				}
			})
		}
	}
}

// TestStripRuleSaidOnce checks that the order of sframe-gen and strip is
// stated in one place, docs/integration.md#strip, and that the README and
// the other docs only point to it.
func TestStripRuleSaidOnce(t *testing.T) {
	order := regexp.MustCompile(`(?i)before (any )?strip\b|strip\W*\s+before\s+sframe-gen|after\s+(any\s+)?strip\b`)
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if filepath.Base(path) == "integration.md" {
			_, rule, ok := strings.Cut(text, "\n## Strip\n")
			if !ok {
				t.Fatalf("%s: no \"## Strip\" section", path)
			}
			rule, _, _ = strings.Cut(rule, "\n## ")
			if !order.MatchString(rule) {
				t.Errorf("%s: the Strip section states no order", path)
			}
			text = strings.Replace(text, rule, "", 1)
		}
		for _, m := range order.FindAllString(text, -1) {
			t.Errorf("%s: %q: the strip order is stated outside docs/integration.md#strip (link to it instead)", path, m)
		}
	}
}

// debianStrip is Debian's strip for arch.
func debianStrip(t *testing.T, arch string) string {
	if arch == runtimeArch() {
		return sysfiles.NeedProgram(t, "strip")
	}
	return sysfiles.NeedProgram(t, arch+"-linux-gnu-strip")
}

// runtimeArch is the machine's architecture in the ELF spelling.
func runtimeArch() string {
	if runtime.GOARCH == "amd64" {
		return "x86_64"
	}
	return runtime.GOARCH
}

// buildStripSubject builds the program of kind (pie, static, go) for arch.
func buildStripSubject(t *testing.T, arch, kind, src string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), kind)
	var cmd *exec.Cmd
	switch kind {
	case "go":
		dir := t.TempDir()
		goarch := map[string]string{"x86_64": "amd64", "aarch64": "arm64"}[arch]
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOARCH="+goarch, "CGO_ENABLED=0", "GOTOOLCHAIN=local")
	default:
		cc := "gcc"
		if arch != runtimeArch() {
			cc = arch + "-linux-gnu-gcc"
		}
		flag := "-pie"
		if kind == "static" {
			flag = "-static"
		}
		cmd = exec.Command(sysfiles.NeedProgram(t, cc), "-O2", flag, "-o", out, src)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	return out
}

// runOK runs a command that must succeed.
func runOK(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// runsOK reports whether the program prog of arch runs with status 0
// (under qemu-user for another architecture).
func runsOK(t *testing.T, arch, prog string) bool {
	t.Helper()
	cmd := exec.Command(prog)
	if arch != runtimeArch() {
		cmd = exec.Command(sysfiles.NeedProgram(t, "qemu-"+arch), "-L", qemuPrefix(t, arch), prog)
	}
	return cmd.Run() == nil
}

// hasSFrameSegment reports whether the file at path has PT_GNU_SFRAME.
func hasSFrameSegment(t *testing.T, path string) bool {
	t.Helper()
	out, err := exec.Command(sysfiles.NeedProgram(t, "readelf"), "-lW", path).Output()
	if err != nil {
		t.Fatalf("readelf -lW %s: %v", path, err)
	}
	return strings.Contains(string(out), "GNU_SFRAME")
}
