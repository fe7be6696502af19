package kernelshape

import "github.com/twitchyliquid64/golang-asm/obj"

// Label is a branch target in the emitter's instruction list; this
// package only hands labels back to the emitter.
type Label = *obj.Prog

// Counters is what an instruction set supplies to Loop and CountLoop:
// counter registers, the pointers, labels and the count-down branch.
type Counters interface {
	// Counter takes a general register for a loop counter;
	// FreeCounter gives it back. Running out records an error, as Tmp
	// does.
	Counter() int16
	FreeCounter(c int16)
	// Pointers are the kernel's pointers and their pending moves.
	Pointers() *Pointers
	// Flush emits every pending pointer move.
	Flush()
	NewLabel() Label
	// PlaceLabel places l, nothing pending (control may arrive from
	// elsewhere).
	PlaceLabel(l Label)
	// EnterLoop sets counter c to n (n > 1) and places top, the head of
	// a Loop's iterations, with whatever the emitter keeps there;
	// LeaveLoop ends an iteration of that loop: it emits the pending
	// moves, counts c down and branches back to top while c is not 0.
	// Each LeaveLoop closes the innermost EnterLoop not yet closed.
	EnterLoop(c int16, n int64, top Label)
	LeaveLoop(c int16, top Label)
	// SkipUnlessPositive branches to done when c <= 0.
	SkipUnlessPositive(c int16, done Label)
	// Repeat emits the pending moves, counts c down and branches to top
	// while c is not 0.
	Repeat(c int16, top Label)
}

// Loop emits body n times (n known when the code is generated), moving
// the pointers by s after each iteration and back by n*s at the end (the
// rewind stays pending, so it merges into whatever move follows). n <= 0
// emits nothing; n == 1 emits body once, with no loop.
func Loop(e Counters, n int64, s Steps, body func()) {
	switch {
	case n <= 0:
		return
	case n == 1:
		body()
		return
	}
	c := e.Counter()
	e.Flush()
	top := e.NewLabel()
	e.EnterLoop(c, n, top)
	body()
	e.Pointers().Advance(s, 1)
	e.LeaveLoop(c, top)
	e.FreeCounter(c)
	e.Pointers().Advance(s, -n)
}

// CountLoop emits body Args.Count times (the outermost Outer loop), the
// counter having been loaded into c by the prologue. Nothing runs for a
// count <= 0. The pointers are not rewound: the kernel ends after it.
func CountLoop(e Counters, c int16, s Steps, body func()) {
	e.Flush()
	done := e.NewLabel()
	e.SkipUnlessPositive(c, done)
	top := e.NewLabel()
	e.Flush()
	e.PlaceLabel(top)
	body()
	e.Pointers().Advance(s, 1)
	e.Repeat(c, top)
	e.PlaceLabel(done)
}
