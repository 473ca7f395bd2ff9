package target

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/sframe-gen/sframe-gen/emit"
)

// TestReport walks a process of two threads and two modules, one of them
// not found: the Report says what Walk says, the frames' functions and
// modules named, the modules with why they have no SFrame.
func TestReport(t *testing.T) {
	exe := &Module{Name: "/bin/pie.exe", Path: "/sysroot/bin/pie.exe", Start: 0x55550000, End: 0x55560000, Bias: 0x55550000,
		NoSFrame: fmt.Errorf("pie.exe: %w", emit.ErrNoSFrame), Symbols: NewSymbols(openTestdata(t, "pie.exe"))}
	gone := &Module{Name: "/lib/gone.so", Path: "/lib/gone.so", NoSFrame: fmt.Errorf("open: %w", fs.ErrNotExist)}
	p := &Process{ABI: emit.ABIAMD64LittleEndian, Mem: bytes.NewReader(nil), Modules: []*Module{exe, gone}}
	p.Threads = []Thread{{TID: 7}, {TID: 8}}
	p.Threads[0].Regs.PC = 0x55550000 + 0x10e0 + 5 // in main
	p.Threads[0].Regs.Set(7, 0x7ff0)
	p.Threads[1].Regs.PC = 0x1234 // in no module
	rep, err := p.Report()
	if err != nil {
		t.Fatal(err)
	}
	stacks, err := p.Walk()
	if err != nil {
		t.Fatal(err)
	}
	wantModules := []ModuleReport{
		{Name: exe.Name, Path: exe.Path, Start: exe.Start, End: exe.End, NoSFrame: exe.NoSFrame.Error()},
		{Name: gone.Name, Path: gone.Path, NoSFrame: gone.NoSFrame.Error()},
	}
	if fmt.Sprint(rep.Modules) != fmt.Sprint(wantModules) {
		t.Errorf("modules %+v, want %+v", rep.Modules, wantModules)
	}
	if len(rep.Threads) != 2 || len(stacks) != 2 {
		t.Fatalf("%d threads reported, %d walked", len(rep.Threads), len(stacks))
	}
	for i, st := range stacks {
		want := ThreadReport{TID: st.TID, End: EndReport{Reason: st.End.Reason.String(), Complete: st.End.Reason.Complete(), Detail: st.Detail}}
		for _, f := range st.Frames {
			want.Frames = append(want.Frames, FrameReport{PC: f.PC, SP: f.SP, Function: f.Function, Offset: f.Offset, Module: f.Module.String(), Signal: f.Signal})
		}
		if fmt.Sprint(rep.Threads[i]) != fmt.Sprint(want) {
			t.Errorf("thread %d: %+v, want %+v", i, rep.Threads[i], want)
		}
	}
	if f := rep.Threads[0].Frames; len(f) != 1 || f[0].Function != "main" || f[0].Offset != 5 || f[0].Module != exe.Name || f[0].SP != 0x7ff0 {
		t.Errorf("thread 7's frames %+v, want main+0x5 in %s at SP 0x7ff0", f, exe.Name)
	}
	if d := rep.Threads[0].End.Detail; !strings.Contains(d, "give it SFrame") {
		t.Errorf("thread 7 ends %q, without what would give pie.exe SFrame", d)
	}
	if d := rep.Threads[1].End.Detail; len(rep.Threads[1].Frames) != 1 || !strings.Contains(d, "/lib/gone.so") {
		t.Errorf("thread 8: %+v ends %q, without the file not on this host", rep.Threads[1].Frames, d)
	}
}

// TestReportWriteText checks the text form, as gdb's bt prints: a
// function's offset when not 0, ?? for a PC no symbol holds, signal
// frames, modules, a blank line between threads.
func TestReportWriteText(t *testing.T) {
	r := &Report{Threads: []ThreadReport{
		{TID: 7, Frames: []FrameReport{
			{PC: 0x401000, Function: "main", Module: "/bin/a"},
			{PC: 0x7f0000001234, Function: "__restore_rt", Offset: 0x4, Signal: true, Module: "/lib/libc.so.6"},
			{PC: 0x10},
		}, End: EndReport{Detail: "no module maps the PC"}},
		{TID: 8, End: EndReport{Detail: "the outermost frame"}},
	}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `TID 7:
#0  0x0000000000401000 main (/bin/a)
#1  0x00007f0000001234 <signal handler called> __restore_rt+0x4 (/lib/libc.so.6)
#2  0x0000000000000010 ??
    end: no module maps the PC

TID 8:
    end: the outermost frame
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
