package vf64

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// PostOpULP returns how many float64 ulps the post-op of kind k (Has)
// may be from plan.EltwiseF64 (package math's functions, themselves
// within about an ulp of the exact values): the exp's or the log's
// MaxULP carried through a few roundings, Tanh, Elu and SoftPlus's
// expm1 or log1p against math's, and GELUErf's erfc (ErfcULP) times x/2.
// 0 for a kind not written here.
func PostOpULP(k ops.Kind) int64 {
	switch k {
	case ops.Sigmoid, ops.Tanh, ops.Elu:
		return 3
	case ops.GELUTanh:
		return 4
	case ops.SoftPlus:
		return 5
	case ops.Mish, ops.GELUErf:
		return 6
	}
	return 0
}

// Tolerance returns how many float64 ulps the native kernels' f64
// post-op of kind k may be from plan.EltwiseF64: MaxULP for Exp and Log,
// PostOpULP for the kinds written here, 0 (bit for bit) for the others.
func Tolerance(k ops.Kind) int64 {
	if k == ops.Exp || k == ops.Log {
		return MaxULP
	}
	return PostOpULP(k)
}

// PostOpNear reports whether got, a result of op (Has(op.Kind)) for x,
// keeps op's contract: a NaN for a NaN, the infinities exactly, a zero
// where plan.EltwiseF64 gives one with its sign, anything else within
// PostOpULP of plan.EltwiseF64, or within tailSlack of it. It returns
// the distance in ulps.
func PostOpNear(op plan.PostOp, x, got float64) (int64, bool) {
	want := plan.EltwiseF64(op.Kind, op.Alpha, op.Beta, x)
	switch {
	case x != x || want != want:
		return 0, got != got
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return 0, want == got
	case want == 0 && got == 0:
		return 0, math.Signbit(want) == math.Signbit(got)
	}
	d := ULPs(got, want)
	if d <= PostOpULP(op.Kind) {
		return d, true
	}
	return d, math.Abs(got-want) <= tailSlack(op, x)
}

// tailSlack is the absolute difference allowed where plan.EltwiseF64
// itself rounds an intermediate to a subnormal and scales it back up,
// so that neither it nor the machine code is within a few ulps of the
// exact value: Mish's x*e^x below x = -708 (e^x subnormal, a step of it
// times |x|), GELUErf's x/2 * erfc(-x/sqrt 2) below x = -37.5 (erfc
// subnormal, within two steps of math.Erfc, times |x|/2), SoftPlus's
// e^-|y|/beta (a step over |beta|), and GELUTanh's
// x/(1+e^v) where package math's exp overflows just before e^v does
// (OracleExp; the result is then below |x| * 2^-1020).
func tailSlack(op plan.PostOp, x float64) float64 {
	const step = 0x1p-1074
	switch op.Kind {
	case ops.Mish, ops.GELUErf:
		return 2 * step * math.Abs(x)
	case ops.SoftPlus:
		return 2 * step / math.Abs(float64(op.Beta))
	case ops.GELUTanh:
		return math.Abs(x) * 0x1p-1020
	}
	return 0
}

// PostOpSweep returns the post-ops the sweeps run: each kind written
// here, Elu and SoftPlus with parameters of both signs and several
// sizes (beta 1 is the APIs' default).
func PostOpSweep() []plan.PostOp {
	return []plan.PostOp{
		{Kind: ops.Sigmoid}, {Kind: ops.Tanh}, {Kind: ops.Mish}, {Kind: ops.GELUTanh}, {Kind: ops.GELUErf},
		{Kind: ops.Elu, Alpha: 1}, {Kind: ops.Elu, Alpha: 0.3}, {Kind: ops.Elu, Alpha: -2.5}, {Kind: ops.Elu, Alpha: 0},
		{Kind: ops.SoftPlus, Beta: 1}, {Kind: ops.SoftPlus, Beta: 0.37}, {Kind: ops.SoftPlus, Beta: -2.5},
		{Kind: ops.SoftPlus, Beta: 1e-3}, {Kind: ops.SoftPlus, Beta: 3e5},
		{Kind: ops.SoftPlus, Beta: 1e-30}, {Kind: ops.SoftPlus, Beta: -1e-38},
	}
}

// PostOpInputs returns Inputs(r, n) and the values around the post-ops'
// own edges: -Ln2, MishBig, atanh(1/2), the exp's overflow of GELUTanh's
// argument, GELUErf's ranges of erfc, and small and large values of both
// signs.
func PostOpInputs(xs []float64) []float64 {
	edges := []float64{-Ln2, Ln2, MishBig, -MishBig, 0.5493061443340549, -0.5493061443340549, 19.06, 18.5, -21.5, -21.6,
		1e-8, -1e-8, 1e-160, -1e-160, 37, -37, 40, -40, 708.4, -708.4, 745.2, -745.2, 1e150, -1e150, 1e300, -1e300}
	// GELUErf's: erfc's splits and clamp at -x/sqrt 2, and where its
	// result and erfc's turn subnormal and erfc's underflows.
	for _, e := range []float64{ErfcSplit1, ErfcSplit2, ErfcSplit3, 0.25, ErfcBig, 26.6, 26.9, 27.25} {
		edges = append(edges, e*math.Sqrt2, -e*math.Sqrt2)
	}
	for _, e := range edges {
		b := math.Float64bits(e)
		for d := uint64(0); d <= 8; d++ {
			xs = append(xs, math.Float64frombits(b+d), math.Float64frombits(b-d))
		}
	}
	return xs
}
