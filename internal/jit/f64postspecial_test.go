package jit

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vf64"
)

// f64Specials are f64 values at the edges of the f64 post-ops: signed
// zeros, infinities, NaN, subnormals, halves (Round), values whose
// square or cube overflows or underflows, HardSwish's bends at +-3.
var f64Specials = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
	5e-324, -5e-324, 1e-310, -1e-310, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3, -3, 6, -6, 1e200, -1e200,
	1e-200, -1e-200, 4503599627370497, -4503599627370497.5, 0.49999999999999994, math.MaxFloat64, -math.MaxFloat64, 1, -1}

// TestNativeF64PostSpecials: the native kernel's f64 post-ops after an
// f64 sum of one element (the element itself) over the values above,
// with parameters at their edges (NaN, infinite and signed zero bounds,
// alphas and betas) and binary operands of every type the native kernel
// reads, per element and broadcast, at their extremes: on every ISA, the
// interpreter's bits (any NaN matching any NaN), into f64 and f32 dsts,
// or, for the post-ops built on the exp and the log (not Exp and Log
// themselves, which the sweeps hold), within vf64.Tolerance of them;
// then random chains of two to four of those post-ops over row counts
// that leave every tail of a vector.
func TestNativeF64PostSpecials(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	nz := float32(math.Copysign(0, -1))
	params := [][2]float32{{0, 0}, {nan, 1}, {-1, nan}, {nan, nan}, {inf, -inf}, {-inf, inf}, {nz, 0}, {0, nz},
		{1e-45, -1e-45}, {0.2, 0.5}, {-0.125, 3}, {math.MaxFloat32, -math.MaxFloat32}, {2, 1}}
	var postOps, nearOps []plan.PostOp
	for _, k := range kernelshape.NativeF64PostOpKinds() {
		if k.IsBinary() || k == ops.Exp || k == ops.Log {
			continue
		}
		// The post-ops built on the exp and the log are within a few
		// ulps of the interpreter's, not its bits (vf64.Tolerance):
		// they run alone, held to that, and stay out of the chains,
		// where a later op could magnify the difference. The wide
		// sweeps and internal/vf64's tests bound them, Exp and Log too.
		if vf64.Tolerance(k) > 0 {
			for _, p := range params {
				nearOps = append(nearOps, plan.PostOp{Kind: k, Alpha: p[0], Beta: p[1]})
			}
			continue
		}
		if k == ops.Pow {
			for _, b := range ops.PowBetas {
				postOps = append(postOps, plan.PostOp{Kind: k, Beta: b})
			}
			continue
		}
		for _, p := range params {
			postOps = append(postOps, plan.PostOp{Kind: k, Alpha: p[0], Beta: p[1]})
		}
	}
	n := int64(len(f64Specials))
	for _, k := range kernelshape.NativeF64PostOpKinds() {
		if !k.IsBinary() {
			continue
		}
		for _, dt := range kernelshape.NativeF64Operands {
			for _, bcast := range []bool{false, true} {
				s := []int64{1, 0}
				if bcast {
					s = []int64{0, 0}
				}
				postOps = append(postOps, plan.PostOp{Kind: k, BinDT: dt, BinStrides: s})
			}
		}
	}
	// operand fills each operand with its type's extremes and specials.
	operand := func(dt dtypes.DataType, b []byte) {
		vals := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 3, 0.5, -2.5, 1e-40, 65504, 6e-8, 1e38, 1e300, 5e-324}
		switch dt {
		case dtypes.S8:
			vals = []float64{-128, 127, 0, -1, 1, 3}
		case dtypes.U8:
			vals = []float64{0, 255, 1, 128}
		case dtypes.S32:
			vals = []float64{math.MinInt32, math.MaxInt32, 0, -1, 1 << 24, 1<<24 + 1, -(1<<24 + 1)}
		}
		for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
			plan.StoreF64(dt, b, i, vals[(i*7+3)%int64(len(vals))])
		}
	}
	ran := 0
	// check runs post after the sum of each of n elements, src0(i), alone,
	// into dst.
	check := func(n int64, src0 func(i int64) float64, dst dtypes.DataType, post []plan.PostOp, near bool) {
		p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dst, Dims: []int64{n, 1},
			SrcStrides: []int64{1, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: post}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		src, want, bins := kerneltest.Buffers(t, p, 0xa5, func(_ dtypes.DataType, b []byte) {
			for i := range n {
				plan.StoreF64(dtypes.F64, b, i, src0(i))
			}
		}, operand)
		if err := interp.Run(pl, src, want, bins); err != nil {
			t.Fatalf("interp: %v", err)
		}
		for _, isa := range testISAs() {
			prev := SetMaxISA(isa)
			k, err := Compile(pl)
			SetMaxISA(prev)
			if err != nil {
				t.Fatalf("%v: %v", p, err)
			}
			if k.Impl() != "interp" {
				if !kernelshape.IsNative(pl) {
					t.Fatalf("%v: not the native kernel", pl)
				}
				ran++
			}
			got := kerneltest.Dst(t, p, 0xa5)
			if err := k.Run(src, got, bins); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%v %v %+v into %v", isa, k.Impl(), post, dst)
			msg := kerneltest.SameWide(dst, got, want)
			if near {
				msg = kerneltest.WideInterpMismatch(p, got, want)
			}
			if msg != "" {
				i := int64(-1)
				fmt.Sscanf(msg, "dst element %d", &i)
				x := 0.0
				if i >= 0 {
					x = src0(i)
				}
				t.Errorf("%s: x = %v: %s", name, x, msg)
			}
		}
	}
	special := func(i int64) float64 { return f64Specials[i%int64(len(f64Specials))] }
	for _, dst := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
		for _, op := range postOps {
			check(n, special, dst, []plan.PostOp{op}, false)
		}
		for _, op := range nearOps {
			check(n, special, dst, []plan.PostOp{op}, true)
		}
	}
	// Chains of two to four of them over row counts that leave every
	// tail of a vector, the specials in a shuffled order.
	r := rand.New(rand.NewSource(3))
	for range 300 {
		chain := make([]plan.PostOp, 2+r.Intn(3))
		nb := 0
		for i := range chain {
			for {
				chain[i] = postOps[r.Intn(len(postOps))]
				if !chain[i].Kind.IsBinary() || nb < plan.MaxBinary {
					break
				}
			}
			if chain[i].Kind.IsBinary() {
				nb++
			}
		}
		off := r.Int63n(n)
		check(1+r.Int63n(40), func(i int64) float64 { return special(i*5 + off) }, []dtypes.DataType{dtypes.F64, dtypes.F32}[r.Intn(2)], chain, false)
	}
	t.Logf("%d runs of machine code", ran)
	if ran == 0 && testISAs()[0] != None {
		t.Fatal("no machine code ran")
	}
}
