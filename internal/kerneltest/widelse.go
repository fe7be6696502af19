package kerneltest

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vf64"
)

// The f64 log-sum-exp of the native kernels against the interpreter and
// the oracle (WideBounds), on every instruction set that runs it.

// WideLSEModes is how many kinds of data FillWideLSE draws.
const WideLSEModes = 6

// FillWideLSE fills f64 src b with data of kind mode (0 to
// WideLSEModes-1): 0, moderate values in [-20, 20]; 1, those with one
// element in 16 NaN, +Inf or -Inf; 2, huge ranges: values near ±700
// (whose exp over- or underflows unshifted), beyond the f32 range (to
// ±MaxFloat64) and -Inf, mixed; 3, -Inf but for one element in 32, so
// that many outputs are all -Inf; 4, all -Inf; 5, one large value a
// row apart from the rest (a sum of one term and underflows).
func FillWideLSE(r *rand.Rand, b []byte, mode int) {
	for i := int64(0); i < int64(len(b)/8); i++ {
		v := 40*r.Float64() - 20
		switch mode {
		case 1:
			if r.Intn(16) == 0 {
				v = [...]float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.Intn(3)]
			}
		case 2:
			switch r.Intn(8) {
			case 0:
				v = 700 + 20*r.Float64()
			case 1:
				v = -700 - 50*r.Float64()
			case 2:
				v = math.Ldexp(r.Float64()+1, 130+r.Intn(893))
			case 3:
				v = -math.Ldexp(r.Float64()+1, 130+r.Intn(893))
			case 4:
				v = [...]float64{math.MaxFloat64, -math.MaxFloat64, math.Inf(-1), 1e308, -1e308}[r.Intn(5)]
			case 5:
				v = 1e300 * (2*r.Float64() - 1)
			}
		case 3:
			if r.Intn(32) != 0 {
				v = math.Inf(-1)
			}
		case 4:
			v = math.Inf(-1)
		case 5:
			v = -1000 * r.Float64()
			if r.Intn(64) == 0 {
				v = 745 * r.Float64()
			}
		}
		plan.StoreF64(dtypes.F64, b, i, v)
	}
}

// WideLSEProblem draws an f64 log-sum-exp as WideNativeProblem does:
// any layout (rows, columns of non-innermost reduced axes, tails), f64
// or f32 dst, post-ops of kinds (none where kinds is empty).
func WideLSEProblem(r *rand.Rand, maxElems int64, kinds []ops.Kind) *plan.Problem {
	if len(kinds) == 0 {
		p := WideNativeProblem(r, maxElems, []plan.Reduction{plan.LogSumExp}, []ops.Kind{ops.ReLU})
		p.PostOps = nil
		return p
	}
	return WideNativeProblem(r, maxElems, []plan.Reduction{plan.LogSumExp}, kinds)
}

// LSEULP and LSEAbs bound the distance of a native f64 log-sum-exp from
// the interpreter's: LSEULP float64 ulps of the result, or LSEAbs where
// the result is near 0 (log(sum) and the shift cancel, and the
// absolute error of log(sum) remains: the exp's ulps of each term, the
// sum's roundings in another order and the log's ulps of a log(sum)
// up to about 9 for the tests' rows). An f32 dst may differ by one f32
// ulp, where the two f64 results round to neighbours.
const (
	LSEULP = 4 * vf64.MaxULP
	LSEAbs = 0x1p-44
)

// WideLSEMismatch compares got, the dst of the f64 log-sum-exp p from
// machine code, with want, the interpreter's: every element within
// LSEULP or LSEAbs (NaN matching NaN, infinities equal), or one f32 ulp
// for an f32 dst. With post-ops it says nothing (a later op may magnify
// the difference): WideBounds holds those outputs.
func WideLSEMismatch(p *plan.Problem, got, want []byte) string {
	if len(p.PostOps) > 0 {
		return ""
	}
	dt := p.DstDT
	sz := int64(dt.Size())
	for i := int64(0); i < int64(len(got))/sz; i++ {
		x, y := oracle.Get(dt, got, i), oracle.Get(dt, want, i)
		switch {
		case x == y, x != x && y != y:
			continue
		case math.IsInf(x, 0) || math.IsInf(y, 0) || x != x || y != y:
		case dt == dtypes.F32:
			if math.Float32bits(float32(x)) == math.Float32bits(float32(y))+1 || math.Float32bits(float32(y)) == math.Float32bits(float32(x))+1 {
				continue
			}
		case vf64.ULPs(x, y) <= LSEULP || math.Abs(x-y) <= LSEAbs:
			continue
		}
		return fmt.Sprintf("dst element %d is %v, the interpreter's %v (%d ulps)", i, x, y, vf64.ULPs(x, y))
	}
	return ""
}
