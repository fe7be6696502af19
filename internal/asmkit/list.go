// Package asmkit is an instruction list over golang-asm (Go's own
// cmd/internal/obj) that either encodes exactly the instructions asked
// for or returns an error.
//
// golang-asm's stock Builder prints diagnostics and silently leaves out
// instructions it cannot encode. A List builds its own obj.Link context
// instead and turns every diagnostic, and every relocation (a kernel must
// be position independent and self-contained), into an error. It knows
// nothing of any instruction set beyond the obj.LinkArch it is given:
// operand layouts, raw encodings and backend quirks stay with the
// emitters.
package asmkit

import (
	"fmt"
	"sync"

	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/objabi"
)

// archInits holds one *sync.Once per *obj.LinkArch: a backend's first
// Init call fills global encoding tables and must not race with another
// first call.
var archInits sync.Map

// List collects one kernel's instructions as a linked Prog list.
type List struct {
	arch        *obj.LinkArch
	prefix      string // starts every error message, e.g. "amd64"
	ctxt        *obj.Link
	first, last *obj.Prog
	diags       []string
	// cursor, when set, makes Add insert after it instead of appending;
	// emitters use it to hoist constants into the prologue while
	// emitting the body.
	cursor *obj.Prog
}

// New returns an empty list with its own assembler context for arch.
// Error messages start with prefix and a colon. The first Prog added is
// what the backend receives as the function's first instruction (the
// arm64 backend, for one, takes it as the TEXT header and never encodes
// it).
func New(arch *obj.LinkArch, prefix string) *List {
	ctxt := obj.Linknew(arch)
	ctxt.Headtype = objabi.Hlinux
	// IsAsm turns off the jump padding and the other rewrites the
	// compiler would apply: this is hand-written assembly.
	ctxt.IsAsm = true
	l := &List{arch: arch, prefix: prefix, ctxt: ctxt}
	ctxt.DiagFunc = l.Diag
	once, _ := archInits.LoadOrStore(arch, new(sync.Once))
	once.(*sync.Once).Do(func() { arch.Init(ctxt) })
	return l
}

// Diag records a problem; Assemble then fails. The assembler reports
// through it, and emitters may too (a suffix that does not parse).
func (l *List) Diag(format string, args ...interface{}) {
	l.diags = append(l.diags, fmt.Sprintf(format, args...))
}

// Add appends p to the list, or inserts it after the cursor (see
// InsertAfter), and returns it.
func (l *List) Add(p *obj.Prog) *obj.Prog {
	p.Ctxt = l.ctxt
	if c := l.cursor; c != nil {
		p.Link = c.Link
		c.Link = p
		if l.last == c {
			l.last = p
		}
		l.cursor = p
		return p
	}
	if l.first == nil {
		l.first = p
	} else {
		l.last.Link = p
	}
	l.last = p
	return p
}

// Last returns the last instruction of the list (nil when empty).
func (l *List) Last() *obj.Prog { return l.last }

// InsertAfter runs emit with every new instruction inserted after *at,
// in order, and moves *at to the last instruction inserted, so that a
// later call continues where this one stopped.
func (l *List) InsertAfter(at **obj.Prog, emit func()) {
	saved := l.cursor
	l.cursor = *at
	emit()
	*at = l.cursor
	l.cursor = saved
}

// NewLabel returns a new label, not yet placed: an ANOP, which encodes
// to nothing.
func (l *List) NewLabel() *obj.Prog { return &obj.Prog{As: obj.ANOP} }

// Place adds a label made by NewLabel.
func (l *List) Place(label *obj.Prog) { l.Add(label) }

// Jump adds a jump or conditional branch as to label. The target may be
// placed before or after the jump; the backend picks the short or long
// form.
func (l *List) Jump(as obj.As, label *obj.Prog) *obj.Prog {
	p := l.Add(&obj.Prog{As: as})
	p.To.Type = obj.TYPE_BRANCH
	p.To.SetTarget(label)
	return p
}

// Assemble encodes the list and returns the symbol holding the code in
// P. Any diagnostic and any relocation is an error with status
// graph.RuntimeError.
func (l *List) Assemble() (*obj.LSym, error) {
	if len(l.diags) == 0 {
		sym := &obj.LSym{Func: &obj.FuncInfo{Text: l.first}}
		l.arch.Assemble(l.ctxt, sym, l.ctxt.NewProg)
		if len(l.diags) == 0 {
			for _, r := range sym.R {
				if r.Siz > 0 {
					return nil, status.Errorf(status.RuntimeError,
						"%s: kernel needs a relocation of %d bytes at offset %d", l.prefix, r.Siz, r.Off)
				}
			}
			return sym, nil
		}
	}
	n := len(l.diags)
	shown := l.diags[:min(n, 3)]
	return nil, status.Errorf(status.RuntimeError, "%s: assembler reported %d problem(s): %v", l.prefix, n, shown)
}
