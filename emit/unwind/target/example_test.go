package target_test

import (
	"fmt"
	"log"

	"github.com/sframe-gen/sframe-gen/emit/unwind/target"
)

// Walk every thread of a core (TestStackExample compares with stack --json).
func Example() {
	core := "core" // a core file (ulimit -c unlimited; kill -ABRT PID)
	p, err := target.OpenCore(core, target.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	stacks, err := p.Walk()
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range stacks {
		for _, f := range s.Frames {
			fmt.Printf("%d %#x sp %#x %s+%#x (%v) signal=%v\n", s.TID, f.PC, f.SP, f.Function, f.Offset, f.Module, f.Signal)
		}
		fmt.Printf("%d end: %s\n", s.TID, s.Detail)
	}
}
