package arm64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vfn"
)

// specialValues are where vector instructions and the Go reference part
// ways if the emitter is careless: NaN, infinities, signed zeros, ties
// for rounding (to integers, to bf16 and to f16), subnormals of f32 and
// f16, values past the f16 range and near the f32 one, and HardSwish's
// ends (x/6 + 0.5 exactly 0 and 1).
var specialValues = []float32{
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
	1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 3, -3, 3.7, -3.7, 1e-40, -1e-40, 3e-5, 65504, 65520, 70000,
	1e30, -1e30, 3e38, 0.1, 1.00390625, 1.01171875, math.Float32frombits(0x3f808000),
}

// TestPostOpSpecials runs every supported post-op over specialValues as
// the mean and (for binary ops) as the operand, for every dtype pair and
// operand type, and demands bit-equal results with plan.Eltwise and
// plan.Binary followed by gdnn's rounding (any NaN matches any NaN;
// the results of Exp, Log and the kinds of package vfn within
// vfn.Tolerance). The
// problem is an identity ([A, B], nothing reduced) with src varying along
// A and the operand along B, so every pair meets once; B is the inner,
// vectorised dim (full vectors and a tail).
func TestPostOpSpecials(t *testing.T) {
	needARM64(t)
	type opCase struct {
		kind        ops.Kind
		alpha, beta float32
	}
	var cases []opCase
	for _, k := range kinds {
		switch k {
		case ops.Clamp:
			cases = append(cases, opCase{k, -1, 2}, opCase{k, 0, 0}, opCase{k, float32(math.Copysign(0, -1)), 1},
				opCase{k, 3, -3})
		case ops.LeakyReLU:
			cases = append(cases, opCase{k, 0.1, 0}, opCase{k, -2, 0}, opCase{k, 0, 0})
		case ops.HardSigmoid:
			// 1e30 sends every special but 0 and -0 outside [0, 1],
			// 1e30*x far past f32's range (f64 holds it); -1.7 reverses the
			// slope; 0 gives beta, or NaN for ±Inf. Alpha 1 with
			// beta -0 is the identity on [0, 1], so -0, 0 and 1 reach
			// the clamp as they are.
			cases = append(cases, opCase{k, 0.2, 0.5}, opCase{k, -1.7, 0.3}, opCase{k, 0, 0.25}, opCase{k, 1e30, -1},
				opCase{k, 1, float32(math.Copysign(0, -1))}, opCase{k, -1, 0}, opCase{k, 1.0 / 6, 0.5})
		default:
			cases = append(cases, opCase{k, 0, 0})
		}
	}
	for _, beta := range ops.PowBetas {
		cases = append(cases, opCase{ops.Pow, 0, beta})
	}
	cases = append(cases, opCase{ops.Exp, 0, 0}, opCase{ops.Log, 0, 0})
	for _, op := range vfn.SweepOps() {
		cases = append(cases, opCase{op.Kind, op.Alpha, op.Beta})
	}
	A := int64(len(specialValues))
	for _, c := range cases {
		for _, pr := range pairs {
			for _, bdt := range floatTypes {
				// Binary ops take the specials as operand; unary ones
				// get them twice: as the mean, and as the product of the
				// mean and an operand (which also makes -0 means).
				B := A
				op := plan.PostOp{Kind: c.kind, Alpha: c.alpha, Beta: c.beta}
				ops := []plan.PostOp{{Kind: ops.Multiply, BinDT: bdt, BinStrides: []int64{0, 1}}, op}
				if c.kind.IsBinary() {
					op.BinDT, op.BinStrides = bdt, []int64{0, 1}
					ops = []plan.PostOp{op}
				}
				p := &plan.Problem{
					SrcDT: pr[0], DstDT: pr[1], Dims: []int64{A, B},
					SrcStrides: []int64{1, 0}, Reduce: []bool{false, false}, DstStrides: []int64{B, 1},
					PostOps: ops,
				}
				src := kerneltest.Store(p.SrcDT, specialValues)
				bins := [][]byte{kerneltest.Store(bdt, specialValues)}
				dst0 := make([]byte, A*B*int64(p.DstDT.Size()))
				want, outs := kerneltest.Reference(p, src, dst0, bins)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				got := neon.Run(t, pl, src, dst0, bins)
				if d := kerneltest.CompareNear(p.DstDT, got, want, outs, false, vfn.Tolerance(p.PostOps)); d != "" {
					t.Errorf("%v(%v,%v) %v:%v operand %v: %s", c.kind, c.alpha, c.beta, pr[0], pr[1], bdt, d)
				}
			}
		}
	}
}

// TestConversionSpecials carries every special value (and its
// neighbours) into the conversion to bf16 and f16, and checks the
// rounding against the dtypes conversions: the integer sequence for
// bf16 and FCVTN for f16, including ties, overflow, subnormals and NaN.
// The values come from an f32 operand added to a zero src (a bf16 or
// f16 src cannot hold them).
func TestConversionSpecials(t *testing.T) {
	needARM64(t)
	var vals []float32
	for _, v := range specialValues {
		b := math.Float32bits(v)
		vals = append(vals, v, math.Float32frombits(b+1), math.Float32frombits(b-1), math.Float32frombits(b^0x8000))
	}
	// bf16 and f16 ties and their neighbours, the largest finite values
	// and the smallest subnormals of each.
	for _, b := range []uint32{0x3f808000, 0x3f818000, 0x7f7f8000, 0x7f7fffff, 0x00008000, 0x3f801000, 0x3f803000,
		0x477fe000, 0x477ff000, 0x33800000, 0x33000000, 0x33c00000} {
		vals = append(vals, math.Float32frombits(b), math.Float32frombits(b+1), math.Float32frombits(b-1))
	}
	n := int64(len(vals))
	f32 := floatTypes[0]
	for _, dt := range floatTypes[1:] {
		p := &plan.Problem{SrcDT: dt, DstDT: dt, Dims: []int64{n}, SrcStrides: []int64{1},
			Reduce: []bool{false}, DstStrides: []int64{1},
			PostOps: []plan.PostOp{{Kind: ops.Add, BinDT: f32, BinStrides: []int64{1}}}}
		src := make([]byte, n*int64(dt.Size()))
		bins := [][]byte{kerneltest.Store(f32, vals)}
		dst0 := make([]byte, n*int64(dt.Size()))
		want, outs := kerneltest.Reference(p, src, dst0, bins)
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		got := neon.Run(t, pl, src, dst0, bins)
		if d := kerneltest.CompareExact(dt, got, want, outs, false); d != "" {
			t.Errorf("conversion to %v: %s", dt, d)
		}
	}
}
