package plan

import "github.com/gdnn/gdnn/internal/ops"

// Kind is the kind of a fused post-op. Package ops is the table that
// describes every kind (names, parameters and their rules); the names
// here let plans and the code that builds them say plan.ReLU.
type Kind = ops.Kind

// The post-op kinds (see package ops).
const (
	Abs         = ops.Abs
	Clamp       = ops.Clamp
	Elu         = ops.Elu
	Exp         = ops.Exp
	GELUErf     = ops.GELUErf
	GELUTanh    = ops.GELUTanh
	HardSigmoid = ops.HardSigmoid
	HardSwish   = ops.HardSwish
	LeakyReLU   = ops.LeakyReLU
	Log         = ops.Log
	Mish        = ops.Mish
	Pow         = ops.Pow
	Sigmoid     = ops.Sigmoid
	SoftPlus    = ops.SoftPlus
	ReLU        = ops.ReLU
	Round       = ops.Round
	Sqrt        = ops.Sqrt
	Square      = ops.Square
	Tanh        = ops.Tanh

	Add      = ops.Add
	Multiply = ops.Multiply
	Maximum  = ops.Maximum
	Minimum  = ops.Minimum
	Divide   = ops.Divide
	Subtract = ops.Subtract
)
