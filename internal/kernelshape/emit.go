package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// Built is a generated kernel: its first generation error, its machine
// code, and whether it is called with a LongArgs block.
type Built interface {
	Err() error
	Text() ([]byte, error)
	UsesTotals() bool
}

// Emit is the skeleton of every emitter's Emit: pl is checked against
// what the emitter covers (cov), then build generates it (choosing its
// configuration and running Generate) and the result is assembled. A
// plan not covered, an error while generating and one while assembling
// all give no code.
func Emit(pl *plan.Plan, cov Covers, build func() Built) (plan.Code, error) {
	if err := Check(pl, cov); err != nil {
		return plan.Code{}, err
	}
	b := build()
	text, err := Assemble(b)
	if err != nil {
		return plan.Code{}, err
	}
	return plan.Code{Text: text, Totals: b.UsesTotals()}, nil
}

// Assembled is a generated kernel to assemble: its first generation
// error and its machine code.
type Assembled interface {
	Err() error
	Text() ([]byte, error)
}

// Assemble returns b's machine code, or its first generation error
// (then nothing is assembled), or the assembler's.
func Assemble(b Assembled) ([]byte, error) {
	if err := b.Err(); err != nil {
		return nil, err
	}
	return b.Text()
}

// FirstErr keeps a kernel's first generation error: generation goes on
// harmlessly after a failure, and Emit returns that error. Both
// emitters embed it.
type FirstErr struct{ err error }

// Fail records err unless an error was recorded before.
func (f *FirstErr) Fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// Err is the first error recorded, nil when none.
func (f *FirstErr) Err() error { return f.err }
