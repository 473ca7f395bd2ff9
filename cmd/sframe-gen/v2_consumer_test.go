package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/testdata/sysfiles"
)

// stripAddrs matches the absolute addresses of a dump: function starts
// and FRE start addresses.
var stripAddrs = regexp.MustCompile(`(?m)pc = 0x[0-9a-f]+|^    [0-9a-f]{16}`)

// TestV2Consumers writes version 2 (default mode) into real objects and
// linked files and has the GNU tools that read that layout look at the
// result: binutils 2.44 (Debian 13's objdump, readelf and libsframe) for
// the 2.44 layout, the reference binutils (which dump version 2 too) for
// the 2.45 layout. Neither may warn, their dump must be sframe-gen's own,
// and verify must find no problem.
func TestV2Consumers(t *testing.T) {
	td := testdataDir()
	inputs := []struct{ arch, file string }{
		{"x86_64", "link/x86_64/lazy.so"},
		{"x86_64", "link/x86_64/ibt.so"},
		{"x86_64", "link/x86_64/nopie.exe"},
		{"x86_64", "link/x86_64/leveldb.exe"},
		{"x86_64", "link/x86_64/gasmix.so"},
		{"x86_64", "cc/x86_64/O2/tree-sitter.o"},
		{"x86_64", "cc/x86_64/O2-stackrealign/drap.o"},
		{"x86_64", "cc/x86_64/O0/leveldb.o"},
		{"aarch64", "link/aarch64/lazy.so"},
		{"aarch64", "link/aarch64/tree-sitter.exe"},
		{"aarch64", "link/aarch64/gasmix.so"},
		{"aarch64", "cc/aarch64/O2-pac-ret-b-key/tree-sitter.o"},
		{"aarch64", "cc/aarch64/O2-be/tree-sitter.o"},
		{"s390x", "link/s390x/lazy.so"},
		{"s390x", "link/s390x/tree-sitter.exe"},
		{"s390x", "cc/s390x/O2/tree-sitter.o"},
	}
	tmp := t.TempDir()
	for _, in := range inputs {
		for _, layout := range []string{"2.45", "2.44"} {
			if layout == "2.44" && in.arch == "s390x" {
				continue // binutils 2.44 has no s390x SFrame
			}
			t.Run(in.file+"/"+layout, func(t *testing.T) {
				src := filepath.Join(td, in.file)
				out := filepath.Join(tmp, strings.ReplaceAll(in.file, "/", "_")+"."+layout)
				if _, stderr, code := runCLI("--sframe-version", "2", "--v2-layout", layout, "-o", out, src); code != 0 {
					t.Fatalf("generate: exit %d: %s", code, stderr)
				}
				objdump, readelf := sysfiles.GNURef.Tool(t, in.arch, "objdump"), sysfiles.GNURef.Tool(t, in.arch, "readelf")
				if layout == "2.44" {
					objdump, readelf = sysfiles.GNUOld.Tool(t, in.arch, "objdump"), sysfiles.GNUOld.Tool(t, in.arch, "readelf")
				}
				var o, e bytes.Buffer
				cmd := exec.Command(objdump, "--sframe", out)
				cmd.Stdout, cmd.Stderr = &o, &e
				if err := cmd.Run(); err != nil || e.Len() > 0 {
					t.Fatalf("%s --sframe: %v: %s", objdump, err, e.String())
				}
				text := o.String()
				if i := strings.Index(text, "Contents of the SFrame section .sframe:"); i >= 0 {
					text = text[i:]
				} else {
					t.Fatalf("%s --sframe printed no SFrame section:\n%s", objdump, text)
				}
				if !strings.Contains(text, "Version: SFRAME_VERSION_2") {
					t.Fatalf("%s does not see version 2", objdump)
				}
				ours, stderr, code := runCLI("dump", out)
				if code != 0 {
					t.Fatalf("dump: exit %d: %s", code, stderr)
				}
				if layout == "2.44" && strings.HasSuffix(in.file, ".o") {
					// objdump 2.44 does not apply an object's
					// relocations: its start addresses are all 0.
					ours, text = stripAddrs.ReplaceAllString(ours, "ADDR"), stripAddrs.ReplaceAllString(text, "ADDR")
				}
				if ours != text {
					t.Errorf("%s --sframe differs from sframe-gen dump: %s", objdump, diffLine(ours, text))
				}
				e.Reset()
				cmd = exec.Command(readelf, "--sframe=.sframe", "-W", out)
				cmd.Stdout, cmd.Stderr = nil, &e
				if err := cmd.Run(); err != nil || e.Len() > 0 {
					t.Errorf("%s --sframe: %v: %s", readelf, err, e.String())
				}
				if _, stderr, code := runCLI("verify", out); code != 0 {
					t.Errorf("verify: exit %d: %s", code, stderr)
				}
			})
		}
	}
}
