package interp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// fill writes values from gen into every element a tensor of dt with the
// given byte length holds.
func fill(dt dtypes.DataType, b []byte, gen func() float32) {
	for i := range int64(len(b) / dt.Size()) {
		dtypes.StoreF32(dt, b, i, gen())
	}
}

// sentinel marks dst bytes so that bytes Run must not write can be checked.
const sentinel = 0xA5

// runCase runs p through RunProblem with exactly sized buffers and returns
// the buffers for checking.
func runCase(t *testing.T, r *rand.Rand, p *plan.Problem, gen func() float32, misalign bool) (src, dst []byte, bins [][]byte) {
	t.Helper()
	need, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	src = buffer(need, misalign && r.IntN(2) == 0)
	fill(p.SrcDT, src, gen)
	for _, op := range p.PostOps {
		if !op.Kind.IsBinary() {
			continue
		}
		need, err := p.BinBytes(len(bins))
		if err != nil {
			t.Fatal(err)
		}
		b := buffer(need, misalign && r.IntN(2) == 0)
		// Operands are dyadic too (m/16, |m| <= 64) so f32 results of
		// the binary ops stay comparable bit for bit.
		fill(op.BinDT, b, func() float32 { return float32(r.IntN(129)-64) / 16 })
		bins = append(bins, b)
	}
	need, err = p.DstBytes()
	if err != nil {
		t.Fatal(err)
	}
	dst = buffer(need, misalign && r.IntN(2) == 0)
	for i := range dst {
		dst[i] = sentinel
	}
	if err := RunProblem(p, src, dst, bins); err != nil {
		t.Fatalf("RunProblem: %v\nproblem %+v", err, p)
	}
	return src, dst, bins
}

// describe prints a problem and its plan for failure messages.
func describe(p *plan.Problem) string {
	pl, _ := plan.Canonicalize(p)
	return fmt.Sprintf("%v->%v dims %v src %v reduce %v dst %v post %+v\nplan %v",
		p.SrcDT, p.DstDT, p.Dims, p.SrcStrides, p.Reduce, p.DstStrides, p.PostOps, pl)
}

// sameValue reports whether got and want are the same value, NaN equal to
// NaN and -0 distinct from +0.
func sameValue(got, want float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	return got == want && math.Signbit(got) == math.Signbit(want)
}

// checkUntouched fails if a dst byte outside the written elements changed.
func checkUntouched(t *testing.T, dst []byte, size int, outs []refOut, what string) {
	t.Helper()
	written := make([]bool, len(dst))
	for _, o := range outs {
		for k := range size {
			written[int(o.off)*size+k] = true
		}
	}
	for i, b := range dst {
		if !written[i] && b != sentinel {
			t.Fatalf("dst byte %d (not an output) was overwritten\n%s", i, what)
		}
	}
}

// TestInterpDifferential runs a few thousand random problems (rank 0-6,
// dims including 0 and 1, permuted, padded and broadcast layouts, random
// axes, every dtype pair, random post-op chains with scalar, per-channel
// and full operands, aligned and misaligned buffers) against the oracle.
//
// Tolerance. Src values are dyadic (see dyadic), so every sum is exact in
// float64 in any order: the f32 mean of interpreter and oracle is the
// same bits. Post-ops that are one correctly rounded f32 operation (Abs,
// Clamp, LeakyReLU, ReLU, Round, Sqrt, Square and the binary ops) and the
// final round-to-nearest-even to bf16/f16 are then deterministic, so
// chains made only of them must match exactly. A chain with a
// transcendental (or HardSigmoid/HardSwish, evaluated in float64) may
// differ where two float64 evaluations of the same function straddle an
// f32 rounding boundary: 1 ulp of the f32 result, which after rounding to
// bf16/f16 is at most 1 ulp of that type. The bound allowed is 2 ulps of
// the dst type at the expected value.
func TestInterpDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const cases = 3000
	var exact, inexact, outputs int
	for c := range cases {
		p := randProblem(r, 2000, true)
		specials, zeros := r.IntN(10) == 0, r.IntN(20) == 0
		gen := func() float32 {
			if zeros { // signed zeros: a mean of only -0 values is +0
				return float32(math.Copysign(0, float64(r.IntN(2)-1)))
			}
			if specials && r.IntN(50) == 0 {
				return []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}[r.IntN(3)]
			}
			return dyadic(r)
		}
		src, dst, bins := runCase(t, r, p, gen, c%3 == 0)
		outs := reference(p, src, bins)
		size := p.DstDT.Size()
		for _, o := range outs {
			got := decode(p.DstDT, dst, o.off)
			ok := sameValue(got, o.val)
			if !ok && !o.exact && !math.IsNaN(o.val) && !math.IsInf(o.val, 0) {
				ok = math.Abs(got-o.val) <= 2*ulpOf(o.val, p.DstDT)
			}
			if !ok {
				t.Fatalf("case %d: dst[%d] = %v, want %v (exact %v)\n%s", c, o.off, got, o.val, o.exact, describe(p))
			}
			if o.exact {
				exact++
			} else {
				inexact++
			}
		}
		outputs += len(outs)
		checkUntouched(t, dst, size, outs, describe(p))
	}
	t.Logf("%d problems, %d outputs (%d exact, %d within tolerance)", cases, outputs, exact, inexact)
}

// TestInterpRandomData checks means of arbitrary f32/bf16/f16 data (not
// exactly summable) without post-ops against float64 means.
//
// Tolerance. Both sides sum in float64 in different orders; each sum is
// within n*2^-53*sum|x| of the exact one, so the interpreter's sum/N is
// within 2*n*2^-53*sum|x|/N of the oracle's. Rounding that to f32 adds
// half an f32 ulp of the result; rounding on to bf16/f16 adds half an ulp
// of that type, and the two roundings together stay within one ulp of it.
func TestInterpRandomData(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for c := range 1500 {
		p := randProblem(r, 4000, false)
		gen := func() float32 { return float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))) }
		src, dst, _ := runCase(t, r, p, gen, c%4 == 0)
		outs := reference(p, src, nil)
		for _, o := range outs {
			got := decode(p.DstDT, dst, o.off)
			if math.IsNaN(o.val) {
				if !math.IsNaN(got) {
					t.Fatalf("case %d: dst[%d] = %v, want NaN\n%s", c, o.off, got, describe(p))
				}
				continue
			}
			sumErr := 2 * float64(o.n) * 0x1p-53 * o.sumAbs / float64(o.n)
			tol := sumErr + ulpOf(got, dtypes.F32)/2
			if p.DstDT != dtypes.F32 {
				tol = sumErr + ulpOf(got, p.DstDT)
			}
			if d := math.Abs(got - o.val); d > tol {
				t.Fatalf("case %d: dst[%d] = %v, want %v (diff %g > %g)\n%s", c, o.off, got, o.val, d, tol, describe(p))
			}
		}
	}
}
