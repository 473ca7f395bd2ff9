package emit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestZZExplore(t *testing.T) {
	for _, arch := range []string{"x86_64", "s390x"} {
		as := gnuTool(t, arch, "as")
		objcopy := gnuTool(t, arch, "objcopy")
		objdump := gnuTool(t, arch, "objdump")
		dir := t.TempDir()
		carrier := filepath.Join(dir, "carrier.o")
		run(t, exec.Command(as, "-o", carrier, "/dev/null"))
		var seeds [][]byte
		for _, g := range goldenFiles(t) {
			_, rel, _, ok := sframeOf(t, g.elf)
			if ok && len(rel) < 2000 && filepath.Base(filepath.Dir(g.elf)) == arch {
				seeds = append(seeds, rel)
			}
		}
		r := rand.New(rand.NewPCG(3, 4))
		acceptMismatch, rejectBoth, weStricter := 0, 0, 0
		for it := 0; it < 400; it++ {
			b := bytes.Clone(seeds[r.IntN(len(seeds))])
			for k := r.IntN(3); k >= 0; k-- {
				b[r.IntN(len(b))] = byte(r.Uint32())
			}
			bin := filepath.Join(dir, "m.bin")
			os.WriteFile(bin, b, 0o644)
			obj := filepath.Join(dir, "m.o")
			run(t, exec.Command(objcopy, "--add-section", ".sframe="+bin, carrier, obj))
			cmd := exec.Command(objdump, "--sframe", obj)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			out := so.Bytes()
			i := bytes.Index(out, []byte("Contents of"))
			objOK := err == nil && i >= 0 && !bytes.Contains(out, []byte("decode failure"))
			sec, derr := Decode(b)
			switch {
			case objOK && derr == nil:
				var got bytes.Buffer
				Dump(&got, sec, 0, ".sframe")
				if !bytes.Equal(got.Bytes(), out[i:]) {
					acceptMismatch++
					if acceptMismatch < 4 {
						t.Logf("%s mismatch %x:\n%s", arch, b, firstDiff(got.String(), string(out[i:])))
					}
				}
			case !objOK && derr != nil:
				rejectBoth++
			case objOK && derr != nil:
				weStricter++
				if weStricter < 6 {
					t.Logf("%s we reject: %v", arch, derr)
				}
			default:
				t.Logf("%s objdump fails (%v %q %q), we accept %x", arch, err, se.String(), fmt.Sprint(bytes.Contains(out, []byte("decode failure"))), b)
			}
		}
		t.Logf("%s: mismatch %d, both reject %d, we stricter %d", arch, acceptMismatch, rejectBoth, weStricter)
	}
}
