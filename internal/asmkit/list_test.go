package asmkit

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// newX86 returns an x86-64 list headed by an ANOP, as the amd64 emitter
// starts its lists.
func newX86() *List {
	l := New(&x86.Linkamd64, "test")
	l.Add(&obj.Prog{As: obj.ANOP})
	return l
}

// byteOp adds the literal byte b.
func byteOp(l *List, b byte) *obj.Prog {
	return l.Add(&obj.Prog{As: x86.ABYTE, From: Imm(int64(b))})
}

// code assembles l and fails the test on an error.
func code(t *testing.T, l *List) []byte {
	t.Helper()
	sym, err := l.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	return sym.P
}

func TestEncodes(t *testing.T) {
	l := newX86()
	l.Add(&obj.Prog{As: x86.AMOVQ, From: Mem(x86.REG_DI, 8), To: Reg(x86.REG_SI)})
	l.Add(&obj.Prog{As: obj.ARET})
	// MOVQ 8(DI), SI; RET
	if got, want := code(t, l), []byte{0x48, 0x8b, 0x77, 0x08, 0xc3}; !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
}

func TestDiagnosticIsError(t *testing.T) {
	// A constant is no destination: the backend reports it and would
	// otherwise leave the instruction out.
	l := newX86()
	l.Add(&obj.Prog{As: x86.AMOVQ, From: Reg(x86.REG_AX), To: Imm(1)})
	l.Add(&obj.Prog{As: obj.ARET})
	_, err := l.Assemble()
	if !errors.Is(err, status.RuntimeError) || !strings.Contains(err.Error(), "test: assembler reported 1 problem(s)") {
		t.Errorf("unencodable instruction: got %v, want a RuntimeError naming one problem", err)
	}

	// Diag from the emitter: Assemble does not even run the backend.
	l = newX86()
	l.Add(&obj.Prog{As: obj.ARET})
	for i := 0; i < 5; i++ {
		l.Diag("bad suffix %d", i)
	}
	_, err = l.Assemble()
	if !errors.Is(err, status.RuntimeError) || !strings.Contains(err.Error(), "test: assembler reported 5 problem(s): [bad suffix 0 bad suffix 1 bad suffix 2]") {
		t.Errorf("recorded problems: got %v, want the count and the first three", err)
	}
}

func TestRelocationIsError(t *testing.T) {
	// LEAQ f(SB), AX needs the address of f: a PC-relative relocation.
	l := newX86()
	f := &obj.LSym{Name: "f"}
	l.Add(&obj.Prog{As: x86.ALEAQ, From: obj.Addr{Type: obj.TYPE_MEM, Name: obj.NAME_EXTERN, Sym: f}, To: Reg(x86.REG_AX)})
	l.Add(&obj.Prog{As: obj.ARET})
	_, err := l.Assemble()
	if !errors.Is(err, status.RuntimeError) || !strings.Contains(err.Error(), "test: kernel needs a relocation of 4 bytes") {
		t.Errorf("relocation: got %v, want a RuntimeError naming the relocation", err)
	}
}

func TestInsertAfter(t *testing.T) {
	l := newX86()
	byteOp(l, 1)
	at := byteOp(l, 2)
	byteOp(l, 3)
	// Inserted in order after at, and at moves on, so a second insertion
	// continues after the first.
	l.InsertAfter(&at, func() { byteOp(l, 10); byteOp(l, 11) })
	byteOp(l, 4) // appended again once the insertion is over
	l.InsertAfter(&at, func() { byteOp(l, 12) })
	// Inserting after the last instruction makes the insertion the end
	// of the list.
	end := l.Last()
	l.InsertAfter(&end, func() { byteOp(l, 20) })
	byteOp(l, 5)
	if got, want := code(t, l), []byte{1, 2, 10, 11, 12, 3, 4, 20, 5}; !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
}

func TestLabels(t *testing.T) {
	l := newX86()
	top, done := l.NewLabel(), l.NewLabel()
	l.Place(top)
	byteOp(l, 0x90)
	l.Jump(x86.AJEQ, done) // forward, to a label placed later
	l.Jump(obj.AJMP, top)  // backward
	l.Place(done)
	l.Add(&obj.Prog{As: obj.ARET})
	// Labels encode to nothing; short forms: JEQ +2, JMP -5.
	if got, want := code(t, l), []byte{0x90, 0x74, 0x02, 0xeb, 0xfb, 0xc3}; !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
}

// TestArchesConcurrently builds lists for two instruction sets from many
// goroutines: each backend's first Init runs once, and every list gets
// the same bytes.
func TestArchesConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 16; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			l := newX86()
			l.Add(&obj.Prog{As: obj.ARET})
			if sym, err := l.Assemble(); err != nil || !bytes.Equal(sym.P, []byte{0xc3}) {
				errs <- errors.New("x86 RET did not encode alone")
			}
		}()
		go func() {
			defer wg.Done()
			l := New(&arm64.Linkarm64, "test")
			l.Add(&obj.Prog{As: obj.ATEXT, To: obj.Addr{Type: obj.TYPE_TEXTSIZE}})
			l.Add(&obj.Prog{As: obj.ARET, To: Reg(arm64.REGLINK)})
			// RET is d65f03c0, padded to 16 bytes.
			if sym, err := l.Assemble(); err != nil || !bytes.Equal(sym.P[:4], []byte{0xc0, 0x03, 0x5f, 0xd6}) {
				errs <- errors.New("arm64 RET did not encode")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
