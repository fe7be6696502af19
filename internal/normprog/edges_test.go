package normprog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestResidualEpsManyPostOps: a residual LayerNorm / RMSNorm with
// a run-time eps and post-ops that need many temporaries (AVX2 keeps the
// eps in an accumulator-range register the post-ops must not touch).
func TestResidualEpsManyPostOps(t *testing.T) {
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(3, uint64(isa)))
		for _, k := range []Kind{LayerNorm, RMSNorm} {
			for _, dims := range [][]int64{{9, 37}, {4, 300}, {3, 5}} {
				for _, post := range [][]plan.PostOp{
					{{Kind: ops.GELUErf}, {Kind: ops.Tanh}},
					{{Kind: ops.Mish}, {Kind: ops.GELUTanh}, {Kind: ops.Multiply, BinDT: dtypes.BF16, BinStrides: []int64{1, 0}}, {Kind: ops.SoftPlus, Beta: 1}},
				} {
					for _, keep := range []bool{false, true} {
						d := residualCase(k, dims, 1, dtypes.BF16, dtypes.BF16, dtypes.F32, true, keep, false)
						d.EpsDT = dtypes.F32
						if len(post) == 2 {
							d.Beta = &Operand{DT: dtypes.F32, Strides: d.Gamma.Strides}
						}
						d.PostOps = post
						p, err := Compile(d)
						if err != nil {
							t.Fatal(err)
						}
						if p.full.fused == nil {
							t.Fatalf("%v %s %v %v: the passes run, not the fused kernel", isa, k, dims, post)
						}
						fusedVsPasses(t, r, fmt.Sprintf("%v/%s/%v/%v/keep=%v", isa, k, dims, post, keep), d)
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// fusedVsPasses compares the fused kernel with the passes (the
// float64 reference lacks these post-ops).
func fusedVsPasses(t *testing.T, r *rand.Rand, name string, d *Desc) {
	t.Helper()
	fused, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	useFused = false
	passes, err := Compile(d)
	useFused = true
	if err != nil {
		t.Fatal(err)
	}
	res := d.Residual
	x := fill(r, res.X.DT, spanElems(d.Dims, res.X.Strides), 3)
	skip := fill(r, res.Skip.DT, spanElems(d.Dims, res.Skip.Strides), 3)
	bias := fill(r, res.Bias.DT, spanElems(d.Dims, res.Bias.Strides), 1)
	gamma, beta, bins := fillOperands(r, d)
	eps := f32Bytes(0.01)
	run := func(p *Program) []byte {
		dst := make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
		var sum []byte
		if res.KeepSum {
			sum = make([]byte, spanElems(d.Dims, d.SrcStrides)*int64(d.SrcDT.Size()))
		}
		if err := p.Run(Buffers{Src: sum, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins, X: x, Skip: skip, Bias: bias, Eps: eps}); err != nil {
			t.Fatalf("%s: Run: %v", name, err)
		}
		return dst
	}
	got, pass := run(fused), run(passes)
	for i := range int64(len(got)) / int64(d.DstDT.Size()) {
		g, p := float64(dtypes.LoadF32(d.DstDT, got, i)), float64(dtypes.LoadF32(d.DstDT, pass, i))
		if math.IsNaN(g) != math.IsNaN(p) || math.Abs(g-p) > 1e-4+1e-4*math.Abs(p) {
			t.Fatalf("%s: element %d: fused %g, passes %g", name, i, g, p)
		}
	}
}

// TestHeldRowsExpRange: softmax / log-softmax rows short
// enough to be held in registers on AVX2 too (n <= 16), whose x - m
// reaches past the exp for sums' range and -Inf.
func TestHeldRowsExpRange(t *testing.T) {
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		prev := jit.SetMaxISA(isa)
		for _, k := range []norm.Kind{norm.Softmax, norm.LogSoftmax} {
			for _, n := range []int64{5, 12, 16, 17} {
				for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
					dims := []int64{3, n}
					p := &norm.Problem{Kind: k, Dims: dims, Axis: -1, Src: norm.Operand{DT: dtypes.F32, Strides: denseStrides(dims, identity(2))},
						Dst: norm.Operand{DT: dt, Strides: denseStrides(dims, identity(2))}}
					var b norm.Buffers
					b.Src = make([]byte, 4*3*n)
					vals := []float32{3, -40, -84.2, -84.4, -85, -86.9, -87.3, -87.5, -88, -90, -100, -104, -1e30, 2, 1, -3, -7}
					for j := range n {
						dtypes.StoreF32(dtypes.F32, b.Src, j, vals[j])
						dtypes.StoreF32(dtypes.F32, b.Src, n+j, vals[(j+3)%int64(len(vals))]+20)
						dtypes.StoreF32(dtypes.F32, b.Src, 2*n+j, vals[(j+1)%int64(len(vals))])
					}
					dtypes.StoreF32(dtypes.F32, b.Src, n+1, float32(math.Inf(-1)))
					b.Dst = make([]byte, 3*n*int64(dt.Size()))
					runFused(t, p, b, isa)
					want := oracle.Norm(p, b)
					for off, w := range want.Dst {
						got := float64(dtypes.LoadF32(dt, b.Dst, off))
						if off == n+1 {
							if k == norm.Softmax && (got != 0 || math.Signbit(got)) || k == norm.LogSoftmax && !math.IsInf(got, -1) {
								t.Errorf("%v n=%d %v on %v: dst[%d] = %v for -Inf", k, n, dt, isa, off, got)
							}
							continue
						}
						if tol := oracle.NormTolerance(dt, w, want.Bound[off]); math.IsNaN(got) || math.Abs(got-w) > tol {
							t.Errorf("%v n=%d %v on %v: dst[%d] = %v, want %v (tolerance %g)", k, n, dt, isa, off, got, w, tol)
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestInfAsZeroRowsEveryWay: inf_as_zero softmax of all -Inf rows that
// are not held (every way the kernel keeps its exps) gives +0s; a row
// with one finite element gives 1 there.
func TestInfAsZeroRowsEveryWay(t *testing.T) {
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		for _, n := range []int64{7, 17, 40, 203} {
			for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
				d := &Desc{Kind: Softmax, SrcDT: dtypes.F32, DstDT: dt, Dims: []int64{2, n},
					Norm: []bool{false, true}, SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}, InfAsZero: true}
				p, err := Compile(d)
				if err != nil {
					t.Fatal(err)
				}
				src := make([]byte, 4*2*n)
				for i := range 2 * n {
					dtypes.StoreF32(dtypes.F32, src, i, float32(math.Inf(-1)))
				}
				dtypes.StoreF32(dtypes.F32, src, n+n/2, -1e30)
				dst := make([]byte, 2*n*int64(dt.Size()))
				for i := range dst {
					dst[i] = 0x55
				}
				if err := p.Run(Buffers{Src: src, Dst: dst}); err != nil {
					t.Fatal(err)
				}
				for i := range 2 * n {
					want := 0.0
					if i == n+n/2 {
						want = 1
					}
					if got := float64(dtypes.LoadF32(dt, dst, i)); got != want || math.Signbit(got) {
						t.Errorf("%v n=%d %v (fused %v): element %d is %v, want %v", isa, n, dt, p.full.fused != nil, i, got, want)
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}
