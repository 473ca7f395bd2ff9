package sframegen_test

import (
	"log"
	"os"

	sframegen "github.com/sframe-gen/sframe-gen"
	"github.com/sframe-gen/sframe-gen/elfpatch/elfread"
)

// Print the statistics of a shared library's .sframe section as
// "sframe-gen stats FILE" prints them: its objects read within a memory
// budget (of an archive: each member), each one's statistics charged to
// the same Meter.
func ExampleGenerator_ObjectStats() {
	g, err := sframegen.NewGenerator(sframegen.Options{}, sframegen.Resources{})
	if err != nil {
		log.Fatal(err)
	}
	path := "testdata/link/x86_64/lazy.gs.so"
	m := elfread.NewMeter(elfread.NewMemoryBudget(256 << 20))
	defer m.Release()
	_, err = m.ObjectsAt(path, func(o elfread.Object) bool {
		st, err := g.ObjectStats(path, &o, m, false)
		if err == nil {
			err = st.WriteText(os.Stdout, st.File)
		}
		if err != nil {
			log.Fatal(err)
		}
		return true
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// testdata/link/x86_64/lazy.gs.so: .sframe section (SFRAME_ABI_AMD64_ENDIAN_LITTLE, version 3)
	//   functions   10 of 10 described by the CFI covered (100.0%), 0 not covered
	//   text bytes  1569 of 1569 covered (100.0%)
	//   FDEs        11: 2 PCMASK, 0 flex, 0 signal, 0 without FREs
	//   FREs        78: start address 1/2/4 bytes 41/37/0; data words 1/2/4 bytes 71/7/0; 0/1/2/3/4/5/6 words 0/31/47/0/0/0/0; mangled RA 0
	//   size        589 bytes; .eh_frame 504 + .eh_frame_hdr 92 = 596 (.sframe is 98.8% of that)
	//   bytes       header 28, FDE index 176, FDE attributes 55, FRE start addresses 115, FRE info 78, data words 137, other 0
	//   sharing     0 FDEs repeat an earlier FDE's FRE data (0 bytes): 589 bytes with one block per function, 589 with each block once (98.8% of .eh_frame + .eh_frame_hdr); 0 FDEs share in this section
	//   written     one block of FREs per function
}
