package amd64

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// kindReductions are oracle.Reductions the emitter covers, but
// log-sum-exp: a kernel computes it only unshifted (lse_test.go).
var kindReductions = func() []plan.Reduction {
	var out []plan.Reduction
	for _, r := range oracle.Reductions() {
		if kernelshape.VectorReduction(r) && !r.IsLogSumExp() {
			out = append(out, r)
		}
	}
	return out
}()

// randKindProblem is randProblem with one of kindReductions.
func randKindProblem(r *rand.Rand, maxElems int64) *plan.Problem {
	p := randProblem(r, maxElems)
	p.Reduction = kindReductions[r.Intn(len(kindReductions))]
	return p
}

// TestRandomKinds is TestRandomPlans for every covered reduction: each
// emitted kernel, on every ISA, whole and in blocks, bit for bit against
// the reference and the interpreter (fillExact makes every combined value
// exact, products included).
func TestRandomKinds(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 400
	}
	r := rand.New(rand.NewSource(11))
	for i := 0; i < n; i++ {
		checkProblem(t, r, randKindProblem(r, 3000), i%4 == 0)
	}
}

// TestKindStages runs plans of every covered reduction as a split
// reduction's stages: stage 1 (SkipFinalize: transform and combine, f32
// partials out, no post-ops) and stage 2 (SkipTransform: partials
// combined and finalized), against the reference of the problem with the
// skipped part taken out.
func TestKindStages(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	for i := 0; i < 600; i++ {
		p := randKindProblem(r, 3000)
		stage := plan.SkipTransform
		ref := *p
		ref.Transform = plan.TransformNone
		if i%2 == 0 {
			stage = plan.SkipFinalize
			p.DstDT, p.PostOps = dtypes.F32, nil
			ref = *p
			ref.Finalize = plan.FinalizeNone
			if ref.Combine == plan.CombineAdd && ref.Transform == plan.TransformNone {
				ref = *p
				ref.Reduction = plan.AlgSum.Reduction(0, 0)
			}
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		// A stage takes the problem's parts as they are: Canonicalize's
		// rewrite of a whole reduction of one element (OfOne) is not one.
		pl.Stage, pl.Reduction = stage, p.Reduction
		src, dst0, bins := buffers(t, r, p, i%3 == 0)
		want, written := kerneltest.Reference(&ref, src, dst0, bins)
		viaInterp := append([]byte(nil), dst0...)
		if err := interp.Run(pl, src, viaInterp, bins); err != nil {
			t.Fatal(err)
		}
		if d := kerneltest.CompareExact(p.DstDT, viaInterp, want, written, true); d != "" {
			t.Fatalf("interpreter, stage %d: %s\nplan %v", stage, d, pl)
		}
		for _, tg := range targets(t) {
			got := tg.Run(t, pl, src, dst0, bins)
			if d := kerneltest.CompareExact(p.DstDT, got, want, written, false); d != "" {
				t.Fatalf("%s, stage %d: %s\nplan %v", tg.Name, stage, d, pl)
			}
		}
	}
}

// TestKindGuardPages runs every kernel shape of every covered reduction
// with tails of 0..2V+1 (guardTail) next to guard pages: no combine may
// read past a tensor, and masked tails must not let the lanes past them
// in.
func TestKindGuardPages(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(13))
	for tail := int64(0); tail <= 33; tail++ {
		if !guardTail(tail) {
			continue
		}
		for i, pair := range dtPairs {
			for j, p := range guardShapes(tail, pair[0], pair[1]) {
				p.Reduction = kindReductions[(int(tail)+i+j)%len(kindReductions)]
				runGuarded(t, r, p, isaList)
			}
		}
	}
}

// TestKindSpecials pins NaN, infinities and signed zeros through max and
// min on every kernel shape: NaN wins wherever it is, +0 is above -0,
// whatever the order, the lanes and the tails.
func TestKindSpecials(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	for _, isa := range isas(t) {
		for _, red := range []plan.Reduction{plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0)} {
			for _, n := range []int64{1, 3, 8, 15, 16, 17, 33, 100} {
				for pos := int64(0); pos < n; pos += max(1, n/5) {
					for _, special := range []float32{nan, inf, -inf, negZero, 0} {
						for _, cols := range []bool{false, true} {
							// n values, all -0 or +0 (the other sign of
							// the special's zero) but one special at pos.
							fillZero := float32(0)
							if special == 0 {
								fillZero = negZero
							}
							vals := make([]float32, n)
							for i := range vals {
								vals[i] = fillZero
							}
							vals[pos] = special
							checkSpecial(t, isa, red, vals, cols)
						}
					}
				}
			}
		}
	}
}

// checkSpecial reduces vals (as rows: [1, n] over axis 1; as columns:
// [n, 3] over axis 0, each column the same values) and compares every
// output with the reference bit for bit.
func checkSpecial(t *testing.T, isa isaCase, red plan.Reduction, vals []float32, cols bool) {
	t.Helper()
	n := int64(len(vals))
	p := &plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{1, n},
		SrcStrides: []int64{n, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 1}}
	if cols {
		p.Dims, p.SrcStrides, p.Reduce, p.DstStrides = []int64{n, 3}, []int64{3, 1}, []bool{true, false}, []int64{0, 1}
	}
	sb, _ := p.SrcBytes()
	db, _ := p.DstBytes()
	src, dst := make([]byte, sb), make([]byte, db)
	for i := int64(0); i < sb/4; i++ {
		v := vals[i%n]
		if cols {
			v = vals[i/3]
		}
		dtypes.StoreF32(dtypes.F32, src, i, v)
	}
	want, written := kerneltest.Reference(p, src, dst, nil)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	k := compile(t, pl, isa.o)
	defer k.Release()
	k.RunBlocks(pl, src, dst, nil, 0)
	for i := range written {
		a, b := dtypes.LoadF32(dtypes.F32, dst, i), dtypes.LoadF32(dtypes.F32, want, i)
		if a != a && b != b {
			continue
		}
		if math.Float32bits(a) != math.Float32bits(b) {
			t.Fatalf("%s %v of %v (columns %v): output %d = %v, want %v", isa.name, red, vals, cols, i, a, b)
		}
	}
}

// TestUncoveredReductions checks that reductions without vector code
// (|x|^p for p other than 1 and 2, a root of such a p) are Unimplemented
// (the runtime runs them in the interpreter), never miscompiled.
func TestUncoveredReductions(t *testing.T) {
	for _, red := range []plan.Reduction{plan.AlgNormLpSum.Reduction(3, 0), plan.AlgNormLpPowerPSum.Reduction(0.5, 0)} {
		pl := &plan.Plan{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Reduced: []plan.Loop{{Size: 8, SrcStride: 1}}, N: 8, Outputs: 1, Div: 8}
		if _, err := Emit(pl, Options{AVX512: true}); !errors.Is(err, status.Unimplemented) {
			t.Errorf("%v: got %v, want Unimplemented", red, err)
		}
	}
}

// FuzzKinds drives TestRandomKinds from fuzzer-chosen seeds, the plans
// topped up to operands%7 binary operands (TestManyBinaryOperands).
func FuzzKinds(f *testing.F) {
	for i, s := range []int64{1, 2, 3, 4} {
		f.Add(s, i%2 == 0, uint8(2*i))
	}
	f.Fuzz(func(t *testing.T, seed int64, specials bool, operands uint8) {
		r := rand.New(rand.NewSource(seed))
		p := randKindProblem(r, 6000)
		withBinaries(r, p, int(operands)%(plan.MaxBinary+1))
		if p.BinaryCount() > 0 && !fitsRegisters(t, p) {
			t.Skip("the emitter refuses the plan for its general registers")
		}
		checkProblem(t, r, p, specials)
	})
}

// TestL1OfOneValue: rows of ±0 with one f32 of random bits (any mantissa,
// subnormals and ±Inf included) at a random place: the L1 sum is that
// value's |x| exactly, whatever the order, so every way the kernels take
// |x| (two shifts, an AND with the sign mask from memory, the bf16
// split) is checked bit for bit, in whole vectors and tails.
func TestL1OfOneValue(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	red := plan.AlgNormLpPowerPSum.Reduction(1, 0)
	for _, isa := range isas(t) {
		for _, sdt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
			for _, n := range []int64{5, 8, 24, 100, 240, 1000} {
				for _, colsFirst := range []bool{false, true} {
					rows := int64(37)
					p := twoD(red, sdt, dtypes.F32, rows, n, colsFirst)
					outs, per := rows, n
					if colsFirst {
						outs, per = n, rows
					}
					pl, err := plan.Canonicalize(p)
					if err != nil {
						t.Fatal(err)
					}
					k := compile(t, pl, isa.o)
					src := make([]byte, rows*n*int64(sdt.Size()))
					want := make([]float32, outs)
					for o := int64(0); o < outs; o++ {
						bits := r.Uint32() &^ 0x00400000 // no NaN: a quiet bit off keeps Inf and numbers
						if sdt == dtypes.BF16 {
							bits &= 0xFFFF0000
						}
						v := math.Float32frombits(bits)
						for i := int64(0); i < per; i++ {
							at := o*n + i // row o, element i
							if colsFirst {
								at = i*n + o
							}
							dtypes.StoreF32(sdt, src, at, float32(math.Copysign(0, float64(r.Intn(2)*2-1))))
						}
						at := o*n + r.Int63n(per)
						if colsFirst {
							at = r.Int63n(per)*n + o
						}
						dtypes.StoreF32(sdt, src, at, v)
						want[o] = float32(math.Abs(float64(v)))
					}
					dst := make([]byte, outs*4)
					k.RunBlocks(pl, src, dst, nil, 0)
					k.Release()
					for o := range outs {
						if got := dtypes.LoadF32(dtypes.F32, dst, o); math.Float32bits(got) != math.Float32bits(want[o]) && !(got != got && want[o] != want[o]) {
							t.Fatalf("%s %v [%d %d] columns %v: output %d = %#08x, want %#08x", isa.name, sdt, rows, n, colsFirst, o,
								math.Float32bits(got), math.Float32bits(want[o]))
						}
					}
				}
			}
		}
	}
}

// TestManyBinaryOperands runs random problems of every covered reduction
// whose post-op chains carry 5 or 6 (plan.MaxBinary) binary operands of
// random kinds, types and broadcasts, with unary ops between them: one
// pointer register per operand on every ISA, whole and in blocks,
// against the reference and the interpreter.
func TestManyBinaryOperands(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 100
	}
	r := rand.New(rand.NewSource(31))
	refused := 0
	for i := 0; i < n; i++ {
		p := randKindProblem(r, 3000)
		withBinaries(r, p, plan.MaxBinary-r.Intn(2))
		if !fitsRegisters(t, p) {
			refused++
			continue
		}
		checkProblemPaced(t, r, p, i%4 == 0, i%5 == 0)
	}
	t.Logf("%d of %d plans refused for their general registers", refused, n)
	if refused > n/10 {
		t.Errorf("%d of %d plans refused for their general registers", refused, n)
	}
}

// fitsRegisters reports whether p's plan has the general registers its
// operands and loops need (kernelshape.RegistersNeeded): the emitter
// refuses one that does not, and the runtime runs its post-ops in a pass
// of their own (jit's TestSixBinariesDeep).
func fitsRegisters(t *testing.T, p *plan.Problem) bool {
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize(%+v): %v", p, err)
	}
	return kernelshape.RegistersNeeded(pl) <= Covers(Options{}).Registers
}

// withBinaries appends post-ops to p, a random unary one before each
// binary one half of the time, until p has nbin binary post-ops.
func withBinaries(r *rand.Rand, p *plan.Problem, nbin int) {
	var unary, binary []ops.Kind
	for _, k := range genKinds {
		if k.IsBinary() {
			binary = append(binary, k)
		} else if k != ops.Clamp && k != ops.LeakyReLU && k != ops.HardSigmoid {
			unary = append(unary, k)
		}
	}
	for p.BinaryCount() < nbin {
		if r.Intn(2) == 0 {
			p.PostOps = append(p.PostOps, plan.PostOp{Kind: unary[r.Intn(len(unary))]})
		}
		p.PostOps = append(p.PostOps, plan.PostOp{Kind: binary[r.Intn(len(binary))],
			BinDT: kerneltest.OperandTypes[r.Intn(len(kerneltest.OperandTypes))], BinStrides: binStrides(r, p)})
	}
}
