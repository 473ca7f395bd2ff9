package target

import (
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// FuzzCoreNotes reads arbitrary PT_NOTE contents as a core's notes, for
// every ABI: an error or a process, never a panic.
func FuzzCoreNotes(f *testing.F) {
	f.Add(uint8(0), []byte("\x05\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00CORE\x00\x00\x00\x00"))
	f.Add(uint8(3), []byte("\x00\x00\x00\x05\x00\x00\x00\x30FILECORE\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		abis := []emit.ABI{emit.ABIAMD64LittleEndian, emit.ABIAArch64LittleEndian, emit.ABIAArch64BigEndian, emit.ABIS390XBigEndian}
		abi := abis[int(which)%len(abis)]
		p := &core{abi: abi, auxv: map[uint64]uint64{}}
		p.readNotes(data, abi.ByteOrder())
	})
}
