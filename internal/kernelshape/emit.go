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
	if err := b.Err(); err != nil {
		return plan.Code{}, err
	}
	text, err := b.Text()
	if err != nil {
		return plan.Code{}, err
	}
	return plan.Code{Text: text, Totals: b.UsesTotals()}, nil
}
