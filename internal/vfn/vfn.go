// Package vfn describes the vector code of the post-ops built on the
// exp (Sigmoid, Tanh, Elu, SoftPlus, Mish and both GELUs) once, as
// straight-line programs over f32 lanes, so that every emitter lowers the
// same steps and Model runs them in scalar Go: one table of functions
// feeds amd64 (AVX-512, AVX2), arm64 (NEON) and the tests.
//
// A Program is a list of Steps; value 0 is the post-op's input x and
// step i defines value i+1. The ops are a handful of IEEE operations
// (each rounded once), compare-and-select, sign-bit moves, a Horner
// polynomial, and package vexp's exp. Emitters add what every program
// shares: a NaN x is returned as it is (its bits), as plan.Eltwise does,
// so programs may compute garbage in NaN lanes but must give no NaN from
// a non-NaN x. Min and Max never see a NaN or two zeros in other lanes,
// where instruction sets disagree.
//
// Each function is held to a per-kind accuracy (MaxULP) against
// plan.Eltwise, its float64 reference: the tests sweep the f32 bit
// patterns through Model and through every emitter.
package vfn

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
)

// Op is what a Step computes.
type Op uint8

const (
	Const  Op = iota // the bits Bits
	Add              // A + B
	Sub              // A - B
	Mul              // A * B
	Div              // A / B
	FMA              // A*B + C, rounded once
	Abs              // |A| (the sign bit cleared)
	Neg              // -A (the sign bit flipped)
	Min              // the smaller of A and B (see the package doc)
	Max              // the larger of A and B
	OrSign           // A with B's sign bit ORed in
	Poly             // Coef[0] + A*(Coef[1] + A*(...)), Horner's rule with FMAs
	SelLT            // A < B ? C : D (false where either is a NaN)
	SelLE            // A <= B ? C : D (false where either is a NaN)
	Exp              // vexp's exp of A
)

// Val names a value of a Program: 0 is the input, i+1 the result of
// Steps[i].
type Val int

// X is the program's input.
const X Val = 0

// Step is one operation; operands it does not use are 0.
type Step struct {
	Op         Op
	A, B, C, D Val
	Bits       uint32   // Const's value
	Coef       []uint32 // Poly's coefficients, c0 first, as f32 bits
}

// Program computes one post-op from x; its result is its last value.
type Program struct {
	Kind  ops.Kind
	Steps []Step
}

// Result is the value the program returns.
func (p *Program) Result() Val { return Val(len(p.Steps)) }

// Operands returns the values step s reads, in order.
func (s Step) Operands() []Val {
	switch s.Op {
	case Const:
		return nil
	case Abs, Neg, Poly, Exp:
		return []Val{s.A}
	case FMA:
		return []Val{s.A, s.B, s.C}
	case SelLT, SelLE:
		return []Val{s.A, s.B, s.C, s.D}
	}
	return []Val{s.A, s.B}
}

// LastUse returns, for each value, the index of the last step that reads
// it (-1 if none does; the result is read after the last step, at
// len(Steps)), for emitters that give a value's register back after it.
func (p *Program) LastUse() []int {
	last := make([]int, len(p.Steps)+1)
	for i := range last {
		last[i] = -1
	}
	for i, s := range p.Steps {
		for _, v := range s.Operands() {
			last[v] = i
		}
	}
	last[p.Result()] = len(p.Steps)
	return last
}

func f32(b uint32) float32 { return math.Float32frombits(b) }

func bits(f float32) uint32 { return math.Float32bits(f) }
