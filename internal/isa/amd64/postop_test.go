package amd64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vfn"
)

// specialValues covers the cases where vector instructions and the Go
// reference part ways if the emitter is careless: NaN, infinities, signed
// zeros, ties for rounding, subnormals, values that overflow f16.
var specialValues = []float32{
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
	1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e-40, -1e-40, 65504, 70000, 1e30, -1e30, 0.1,
}

// TestPostOpSpecials runs every supported post-op over specialValues as
// the mean and (for binary ops) as the operand, for every dtype pair and
// operand type, and demands bit-equal results with plan.Eltwise and
// plan.Binary followed by gdnn's rounding (any NaN matches any NaN);
// the results of Exp, Log and vfn's kinds within vfn.Tolerance.
// The problem is an identity ([A, B], nothing reduced) with src varying
// along A and the operand along B, so every pair meets once.
func TestPostOpSpecials(t *testing.T) {
	tgs := targets(t)
	type opCase struct {
		kind        ops.Kind
		alpha, beta float32
	}
	var cases []opCase
	for _, k := range genKinds {
		switch k {
		case ops.Clamp:
			cases = append(cases, opCase{k, -1, 2}, opCase{k, 0, 0}, opCase{k, 3, -3})
		case ops.LeakyReLU:
			cases = append(cases, opCase{k, 0.1, 0}, opCase{k, -2, 0}, opCase{k, 0, 0})
		case ops.HardSigmoid:
			cases = append(cases, opCase{k, 0.2, 0.5}, opCase{k, -1.7, 0.3}, opCase{k, 0, 0.25}, opCase{k, 1e30, -1})
		default:
			cases = append(cases, opCase{k, 0, 0})
		}
	}
	for _, beta := range ops.PowBetas {
		cases = append(cases, opCase{ops.Pow, 0, beta})
	}
	cases = append(cases, opCase{ops.Exp, 0, 0}, opCase{ops.Log, 0, 0}, opCase{ops.Sigmoid, 0, 0},
		opCase{ops.Tanh, 0, 0}, opCase{ops.Mish, 0, 0}, opCase{ops.GELUTanh, 0, 0}, opCase{ops.Elu, 1, 0}, opCase{ops.Elu, -0.5, 0},
		opCase{ops.Elu, 0, 0}, opCase{ops.SoftPlus, 0, 1}, opCase{ops.SoftPlus, 0, -3}, opCase{ops.SoftPlus, 0, 1e-3})
	A := int64(len(specialValues))
	for _, c := range cases {
		for _, pair := range dtPairs {
			for _, bdt := range dtPairs[:3] {
				B := int64(1)
				op := plan.PostOp{Kind: c.kind, Alpha: c.alpha, Beta: c.beta}
				if c.kind.IsBinary() {
					B = A
					op.BinDT, op.BinStrides = bdt[0], []int64{0, 1}
				} else if bdt != dtPairs[0] {
					continue
				}
				p := &plan.Problem{
					SrcDT: pair[0], DstDT: pair[1], Dims: []int64{A, B},
					SrcStrides: []int64{1, 0}, Reduce: []bool{false, false}, DstStrides: []int64{B, 1},
					PostOps: []plan.PostOp{op},
				}
				src := kerneltest.Store(p.SrcDT, specialValues)
				var bins [][]byte
				if c.kind.IsBinary() {
					bins = [][]byte{kerneltest.Store(op.BinDT, specialValues)}
				}
				dst0 := make([]byte, A*B*int64(p.DstDT.Size()))
				want, written := kerneltest.Reference(p, src, dst0, bins)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				for _, tg := range tgs {
					got := tg.Run(t, pl, src, dst0, bins)
					if d := kerneltest.CompareNear(p.DstDT, got, want, written, false, vfn.Tolerance(p.PostOps)); d != "" {
						t.Errorf("%s %v(%v,%v) %v:%v operand %v: %s", tg.Name, c.kind, c.alpha, c.beta,
							pair[0], pair[1], op.BinDT, d)
					}
				}
			}
		}
	}
}
