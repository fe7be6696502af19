package jit

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// normPlan is the fused kernel's plan for rows of n contiguous f32
// elements, with the given post-ops (their operands contiguous along the
// row).
func normPlan(t *testing.T, rows, n int64, post []plan.PostOp) *plan.Plan {
	t.Helper()
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{rows, n}, SrcStrides: []int64{n, 1}, Reduce: []bool{false, true}, DstStrides: []int64{n, 1}, PostOps: post})
	if err != nil || len(pl.Reduced) != 1 || pl.HasInner {
		t.Fatalf("plan of %dx%d: %v %v", rows, n, pl, err)
	}
	pl.Reduced[0].DstStride = 1
	pl.Reduced[0].BinStrides = make([]int64, len(post))
	for i := range post {
		pl.Reduced[0].BinStrides[i] = 1
	}
	return pl
}

// TestNormKernelRunTimeEpsResidualStats: the fused normalization
// kernel reads its epsilon from the argument block at each call (RMS
// norm, layer norm, L2 norm with eps as a floor and added), forms a
// residual sum x + skip into src (bit for bit the f32 sum) before
// normalizing it, and writes a layer norm's kept mean and variance, on
// every JIT ISA this machine runs, against float64.
func TestNormKernelRunTimeEpsResidualStats(t *testing.T) {
	const rows = 3
	t.Logf("ISAs: %v", argISAs())
	for _, isa := range argISAs() {
		prev := SetMaxISA(isa)
		r := rand.New(rand.NewPCG(5, uint64(isa)))
		for _, n := range []int64{3, 17, 64, 100} {
			vals := func() []float32 {
				v := make([]float32, rows*n)
				for i := range v {
					v[i] = float32(r.Float64()*8 - 4)
				}
				return v
			}
			for _, c := range []struct {
				kind     kernelshape.NormKind
				added    bool
				residual bool
			}{{kernelshape.NormRMS, false, false}, {kernelshape.NormLayer, false, false}, {kernelshape.NormL2, false, false},
				{kernelshape.NormL2, true, false}, {kernelshape.NormLayer, false, true}, {kernelshape.NormRMS, false, true}} {
				var post []plan.PostOp
				nres := 0
				if c.residual {
					add := plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{n, 1}}
					post, nres = []plan.PostOp{add, add}, 2
				}
				stats := c.kind == kernelshape.NormLayer
				if stats {
					stat := plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{1, 0}}
					post = append(post, stat, stat)
				}
				pl := normPlan(t, rows, n, post)
				if stats {
					pl.Reduced[0].BinStrides[nres], pl.Reduced[0].BinStrides[nres+1] = 0, 0
				}
				k, why, err := CompileNorm(&kernelshape.Norm{Kind: c.kind, Plan: pl, EpsArg: true,
					EpsAdded: c.added, Epsilon: 123, Residual: nres, KeepMean: stats, KeepVar: stats})
				if err != nil || k == nil {
					t.Fatalf("%v: %v %s", isa, err, why)
				}
				x, skip := vals(), vals()
				src := x
				var bins [][]byte
				if c.residual {
					src = make([]float32, rows*n) // receives the sum
					bins = [][]byte{f32Bytes(x), f32Bytes(skip)}
				}
				mean, vr := make([]byte, 4*rows), make([]byte, 4*rows)
				if stats {
					bins = append(bins, mean, vr)
				}
				srcB := f32Bytes(src)
				for _, eps := range []float32{0.5, 1e-5} {
					dst := make([]byte, 4*rows*n)
					if err := k.Run(srcB, dst, bins, eps); err != nil {
						t.Fatal(err)
					}
					for row := range int64(rows) {
						sum := make([]float64, n)
						for j := range n {
							i := row*n + j
							sum[j] = float64(x[i])
							if c.residual {
								s := x[i] + skip[i]
								if got := dtypes.LoadF32(dtypes.F32, srcB, i); got != s {
									t.Fatalf("%v %v n=%d: sum[%d] = %v, want %v", isa, c.kind, n, i, got, s)
								}
								sum[j] = float64(s)
							}
						}
						want := normRef(c.kind, c.added, sum, float64(eps))
						if stats {
							m, v := meanVar(sum)
							gm, gv := float64(dtypes.LoadF32(dtypes.F32, mean, row)), float64(dtypes.LoadF32(dtypes.F32, vr, row))
							if math.Abs(gm-m) > 1e-6 || math.Abs(gv-v) > 1e-6*v+1e-6 {
								t.Fatalf("%v layer norm (residual %v) n=%d: row %d's mean and variance %v %v, want %v %v",
									isa, c.residual, n, row, gm, gv, m, v)
							}
						}
						for j := range n {
							got := float64(dtypes.LoadF32(dtypes.F32, dst, row*n+j))
							if math.Abs(got-want[j]) > 1e-5*math.Abs(want[j])+1e-6 {
								t.Fatalf("%v %v (added %v, residual %v) n=%d eps %v: dst[%d] = %v, want %v",
									isa, c.kind, c.added, c.residual, n, eps, row*n+j, got, want[j])
							}
						}
					}
				}
			}
		}
		SetMaxISA(prev)
	}
}

// meanVar is x's mean and variance in float64.
func meanVar(x []float64) (mean, v float64) {
	n := float64(len(x))
	for _, e := range x {
		mean += e / n
	}
	for _, e := range x {
		v += (e - mean) * (e - mean) / n
	}
	return mean, v
}

// normRef normalizes one row in float64.
func normRef(k kernelshape.NormKind, added bool, x []float64, eps float64) []float64 {
	n := float64(len(x))
	mean, ss := 0.0, 0.0
	for _, v := range x {
		mean += v / n
		ss += v * v
	}
	var shift, div float64
	switch k {
	case kernelshape.NormLayer:
		m, v := meanVar(x)
		shift, div = m, math.Sqrt(v+eps)
	case kernelshape.NormRMS:
		div = math.Sqrt(ss/n + eps)
	case kernelshape.NormL2:
		div = math.Max(math.Sqrt(ss), eps)
		if added {
			div = math.Sqrt(ss) + eps
		}
	case kernelshape.NormL1:
		l1 := 0.0
		for _, v := range x {
			l1 += math.Abs(v)
		}
		div = math.Max(l1, eps)
		if added {
			div = l1 + eps
		}
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = (v - shift) / div
	}
	return out
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		dtypes.StoreF32(dtypes.F32, b, int64(i), x)
	}
	return b
}

// TestNormKernelResidualRefusals checks that a residual sum CompileNorm
// cannot emit (a kind other than layer or RMS norm, a count of operands
// other than 2 or 3, operands that are not Adds) is an InvalidArguments
// error, not a kernel that drops post-ops.
func TestNormKernelResidualRefusals(t *testing.T) {
	add := plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{8, 1}}
	mul := plan.PostOp{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{8, 1}}
	for _, c := range []struct {
		name     string
		kind     kernelshape.NormKind
		post     []plan.PostOp
		residual int
	}{
		{"softmax", kernelshape.NormSoftmax, []plan.PostOp{add, add}, 2},
		{"l2", kernelshape.NormL2, []plan.PostOp{add, add}, 2},
		{"one operand", kernelshape.NormRMS, []plan.PostOp{add, add}, 1},
		{"more operands than post-ops", kernelshape.NormLayer, []plan.PostOp{add, add}, 3},
		{"four operands", kernelshape.NormLayer, []plan.PostOp{add, add, add, add}, 4},
		{"a multiply", kernelshape.NormRMS, []plan.PostOp{add, mul}, 2},
	} {
		_, _, err := CompileNorm(&kernelshape.Norm{Kind: c.kind, Plan: normPlan(t, 4, 8, c.post), Residual: c.residual})
		if !errors.Is(err, status.InvalidArguments) {
			t.Errorf("%s: CompileNorm = %v, want InvalidArguments", c.name, err)
		}
	}
}

// TestNormKernelStatsRefusals checks that kept statistics CompileNorm
// cannot store (a kind other than layer norm, more than the post-ops
// hold, an operand that is not an f32 Add broadcast along the row) are
// an InvalidArguments error, and that a layer norm's are not.
func TestNormKernelStatsRefusals(t *testing.T) {
	stat := plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{1, 0}}
	add := plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{8, 1}}
	bf16 := stat
	bf16.BinDT = dtypes.BF16
	mul := stat
	mul.Kind = ops.Multiply
	for _, c := range []struct {
		name     string
		kind     kernelshape.NormKind
		post     []plan.PostOp
		along    []int64 // the operands' strides along the row
		mean, vr bool
		residual int
		refused  bool
	}{
		{"layer norm", kernelshape.NormLayer, []plan.PostOp{add, stat, stat}, []int64{1, 0, 0}, true, true, 0, false},
		{"variance alone", kernelshape.NormLayer, []plan.PostOp{stat}, []int64{0}, false, true, 0, false},
		{"rms norm", kernelshape.NormRMS, []plan.PostOp{stat}, []int64{0}, true, false, 0, true},
		{"softmax", kernelshape.NormSoftmax, []plan.PostOp{stat, stat}, []int64{0, 0}, true, true, 0, true},
		{"no operand", kernelshape.NormLayer, nil, nil, true, false, 0, true},
		{"one operand for two", kernelshape.NormLayer, []plan.PostOp{stat}, []int64{0}, true, true, 0, true},
		{"the residual's operands", kernelshape.NormLayer, []plan.PostOp{add, add}, []int64{1, 1}, true, false, 2, true},
		{"along the row", kernelshape.NormLayer, []plan.PostOp{stat}, []int64{1}, true, false, 0, true},
		{"bf16", kernelshape.NormLayer, []plan.PostOp{bf16}, []int64{0}, true, false, 0, true},
		{"a multiply", kernelshape.NormLayer, []plan.PostOp{mul}, []int64{0}, true, false, 0, true},
	} {
		pl := normPlan(t, 4, 8, c.post)
		pl.Reduced[0].BinStrides = c.along
		_, _, err := CompileNorm(&kernelshape.Norm{Kind: c.kind, Plan: pl, Residual: c.residual, KeepMean: c.mean, KeepVar: c.vr})
		if c.refused != errors.Is(err, status.InvalidArguments) || !c.refused && err != nil {
			t.Errorf("%s: CompileNorm = %v, want refused %v", c.name, err, c.refused)
		}
	}
}

// TestNormKernelStagedOnlyWhereTheCodeStages checks that a kernel over
// columns takes a scratch a call (plan.NormArgs.Stage) where its code
// stages its tiles, a softmax whose tile's rows fit the stage, and not
// where it does not (too many channels, or a norm), and that each
// computes the normalization, on the effective ISA, against float64.
func TestNormKernelStagedOnlyWhereTheCodeStages(t *testing.T) {
	if EffectiveISA() == None {
		t.Skip("no JIT ISA here")
	}
	const outer, inner = 2, 96
	for _, c := range []struct {
		kind   kernelshape.NormKind
		C      int64
		staged bool
	}{
		{kernelshape.NormSoftmax, 21, true},
		{kernelshape.NormSoftmax, 1000, false},
		{kernelshape.NormLayer, 21, false},
	} {
		C := c.C
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{outer, C, inner}, Reduce: []bool{false, true, false},
			SrcStrides: []int64{C * inner, inner, 1}, DstStrides: []int64{C * inner, inner, 1}})
		if err != nil || !pl.HasInner {
			t.Fatalf("plan of %dx%dx%d: %v %v", outer, C, inner, pl, err)
		}
		pl.Reduced[0].DstStride = inner
		n := &kernelshape.Norm{Kind: c.kind, Plan: pl, Epsilon: 1e-5}
		k, why, err := CompileNorm(n)
		if err != nil || k == nil {
			t.Fatalf("kind %v, %d channels: %v %s", c.kind, C, err, why)
		}
		if k.staged != c.staged {
			t.Errorf("kind %v, %d channels on %s: staged %v, want %v", c.kind, C, k.ISA(), k.staged, c.staged)
		}
		r := rand.New(rand.NewPCG(uint64(C), 5))
		x := make([]float32, outer*C*inner)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 3)
		}
		dst := make([]byte, 4*len(x))
		if err := k.Run(f32Bytes(x), dst, nil, 0); err != nil {
			t.Fatal(err)
		}
		for o := range int64(outer) {
			for i := range int64(inner) {
				col := make([]float64, C)
				for ch := range C {
					col[ch] = float64(x[(o*C+ch)*inner+i])
				}
				want := normRef(c.kind, false, col, 1e-5)
				if c.kind == kernelshape.NormSoftmax {
					want = softmaxRef(c.kind, false, col)
				}
				for ch := range C {
					got := float64(dtypes.LoadF32(dtypes.F32, dst, (o*C+ch)*inner+i))
					if math.Abs(got-want[ch]) > 1e-5*math.Max(1, math.Abs(want[ch])) {
						t.Fatalf("kind %v, %d channels on %s: [%d,%d,%d] = %g, want %g", c.kind, C, k.ISA(), o, ch, i, got, want[ch])
					}
				}
			}
		}
	}
}
