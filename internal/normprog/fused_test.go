package normprog

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestFusedChosen: the anchor shapes run as a fused kernel (over rows,
// or S3's over columns) on every JIT ISA, S6's layer norm that keeps its
// statistics too, and the passes elsewhere.
func TestFusedChosen(t *testing.T) {
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		for _, s := range benchShapes {
			for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
				p, err := Compile(benchShapeDesc(s, dt))
				if err != nil {
					t.Fatal(err)
				}
				if fused := p.full.fused != nil; fused != (isa != jit.None) {
					t.Errorf("%s %v on %v: fused %v", s.label, dt, isa, fused)
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestFusedGuarded runs the fused kernel over every tail length of a
// vector and more, rows back to back and apart, every kind and float type
// pair, half of the layer norms keeping their mean and variance and half
// of the softmaxes their stats, with
// its tensors next to guard pages (at their end and at their start),
// against the float64 oracle and the reference executor.
func TestFusedGuarded(t *testing.T) {
	kinds := []norm.Kind{norm.Softmax, norm.LogSoftmax, norm.LayerNorm, norm.RMSNorm}
	dts := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32}, {dtypes.F32, dtypes.BF16}}
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(7, uint64(isa)))
		for _, k := range kinds {
			for _, n := range []int64{1, 2, 3, 7, 15, 16, 17, 33, 64, 100, 257} {
				for li, dims := range [][]int64{{5, n}, {1, n}, {2, 3, n}} {
					dt := dts[r.IntN(len(dts))]
					p := &norm.Problem{Kind: k, Dims: dims, Axis: -1, Eps: 1e-5}
					if k == norm.LayerNorm && li == 2 {
						p.Axis = -2 // the last two dims: one run of 3n
					}
					rank := len(dims)
					srcStr := denseStrides(dims, identity(rank))
					if li == 0 {
						srcStr[0] = n + 3 // rows apart
					}
					p.Src = norm.Operand{DT: dt[0], Strides: srcStr}
					p.Dst = norm.Operand{DT: dt[1], Strides: denseStrides(dims, identity(rank))}
					axis, _ := norm.AxisIn(p.Axis, rank)
					pd := norm.ParamDims(k, dims, axis)
					if k.HasEpsilon() {
						p.Gamma = norm.Operand{DT: dtypes.F32, Strides: denseStrides(pd, identity(len(pd)))}
						if k == norm.LayerNorm {
							p.Beta = norm.Operand{DT: dt[0], Strides: denseStrides(pd, identity(len(pd)))}
						}
					}
					if k == norm.Softmax {
						p.InfAsZero = r.IntN(2) == 0
					}
					sd := norm.StatsDims(k, dims, axis, 0)
					keepStats := (k == norm.LayerNorm || k == norm.Softmax) && (int64(li)+n)%2 == 0
					statOp := norm.Operand{DT: dtypes.F32, Strides: denseStrides(sd, identity(len(sd)))}
					if keepStats && k == norm.Softmax {
						p.Stats = statOp
					} else if keepStats {
						p.Mean, p.Var = statOp, statOp
					}
					center, spread := 0.0, 20.0
					if k == norm.LayerNorm && r.IntN(2) == 0 {
						center, spread = 1e4, 1
					}
					var b norm.Buffers
					b.Src = fillAround(r, dt[0], spanElems(dims, srcStr), center, spread)
					if k == norm.Softmax && n > 2 {
						dtypes.StoreF32(dt[0], b.Src, 1, float32(math.Inf(-1)))
					}
					if li == 0 && n > 3 {
						// Row 1 holds a NaN; softmax's row 3 is all -Inf.
						dtypes.StoreF32(dt[0], b.Src, srcStr[0]+2, float32(math.NaN()))
						if k == norm.Softmax {
							for j := range n {
								dtypes.StoreF32(dt[0], b.Src, 3*srcStr[0]+j, float32(math.Inf(-1)))
							}
						}
					}
					b.Dst = make([]byte, spanElems(dims, p.Dst.Strides)*int64(dt[1].Size()))
					if p.Mean.Present() {
						b.Mean = make([]byte, 4*spanElems(sd, p.Mean.Strides))
						b.Var = make([]byte, len(b.Mean))
					}
					if p.Stats.Present() {
						b.Stats = make([]byte, 4*spanElems(sd, p.Stats.Strides))
					}
					if p.Gamma.Present() {
						b.Gamma = fillAround(r, dtypes.F32, spanElems(pd, p.Gamma.Strides), 1, 0.5)
					}
					if p.Beta.Present() {
						b.Beta = fillAround(r, dt[0], spanElems(pd, p.Beta.Strides), 0, 0.5)
					}
					e, err := New(p, nil)
					if err != nil {
						t.Fatal(err)
					}
					if fused := e.prog != nil && e.prog.full.fused != nil; fused != (isa != jit.None) {
						t.Fatalf("%v %v on %v: fused %v", k, dims, isa, fused)
					}
					want := oracle.Norm(p, b)
					ref, err := norm.New(p)
					if err != nil {
						t.Fatal(err)
					}
					rb := b
					rb.Dst = make([]byte, len(b.Dst))
					if err := ref.Run(rb, 1); err != nil {
						t.Fatal(err)
					}
					for _, atEnd := range []bool{true, false} {
						f := kerneltest.NewFence(t, atEnd)
						fb := norm.Buffers{Src: f.Place(b.Src), Dst: f.Place(b.Dst), Gamma: f.Place(b.Gamma), Beta: f.Place(b.Beta),
							Mean: f.Place(b.Mean), Var: f.Place(b.Var), Stats: f.Place(b.Stats)}
						if err := e.Run(fb, nil, 1); err != nil {
							t.Fatalf("%v %v on %v: %v", k, dims, isa, err)
						}
						for _, st := range []struct {
							name string
							want map[int64]float64
							got  []byte
						}{{"mean", want.Mean, fb.Mean}, {"variance", want.Var, fb.Var}, {"stats", want.Stats, fb.Stats}} {
							if st.got != nil && len(st.want) != int(spanElems(sd, statOp.Strides)) {
								t.Fatalf("%v %v: the oracle gives %d of %s", k, dims, len(st.want), st.name)
							}
							for off, w := range st.want {
								got := float64(dtypes.LoadF32(dtypes.F32, st.got, off))
								if math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) && math.Abs(got-w) > oracle.NormStatTolerance(w) {
									t.Fatalf("%v %v %v on %v: %s[%d] = %v, want %v", k, dims, dt[0], isa, st.name, off, got, w)
								}
							}
						}
						for off, w := range want.Dst {
							got := float64(dtypes.LoadF32(dt[1], fb.Dst, off))
							tol := oracle.NormTolerance(dt[1], w, want.Bound[off])
							refv := float64(dtypes.LoadF32(dt[1], rb.Dst, off))
							if math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) && (math.Abs(got-w) > tol || math.Abs(got-refv) > 2*tol) {
								t.Fatalf("%v %v %v:%v on %v: dst[%d] = %v, want %v (reference executor %v, tolerance %g)",
									k, dims, dt[0], dt[1], isa, off, got, w, refv, tol)
							}
						}
						f.Free()
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// fillAround returns n elements of dt around center, spread either side.
func fillAround(r *rand.Rand, dt dtypes.DataType, n int64, center, spread float64) []byte {
	b := make([]byte, n*int64(dt.Size()))
	for i := range n {
		dtypes.StoreF32(dt, b, i, float32(center+(r.Float64()*2-1)*spread))
	}
	return b
}

// TestFusedMatchesPasses: with post-ops (an operand per row, one per
// element, and a ReLU) the fused kernel gives what the passes give, on
// every JIT ISA, and so do a layer norm's kept mean and variance and a
// softmax's stats.
func TestFusedMatchesPasses(t *testing.T) {
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(9, uint64(isa)))
		tested := 0
		for _, c := range cases() {
			d := c.d
			rank := len(d.Dims)
			if !slices.Equal(d.SrcStrides, denseStrides(d.Dims, identity(rank))) {
				continue
			}
			perRow := make([]int64, rank)
			n := int64(1)
			for i := rank - 1; i >= 0; i-- {
				if !d.Norm[i] {
					perRow[i] = n
					n *= d.Dims[i]
				}
			}
			d.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: perRow},
				{Kind: ops.Multiply, BinDT: dtypes.BF16, BinStrides: d.DstStrides}, {Kind: ops.ReLU}}
			switch d.Kind {
			case LayerNorm:
				d.Mean = &Operand{DT: dtypes.F32, Strides: perRow}
				d.Var = d.Mean
			case Softmax:
				d.Stats = &Operand{DT: dtypes.F32, Strides: perRow}
			}
			fused, err := Compile(&d)
			if err != nil {
				t.Fatal(err)
			}
			useFused = false
			passes, err := Compile(&d)
			useFused = true
			if err != nil {
				t.Fatal(err)
			}
			if fused.full.fused == nil {
				continue // normalized dims not innermost
			}
			if passes.full.fused != nil {
				t.Fatalf("%s: the passes run the fused kernel", c.name)
			}
			tested++
			src := fill(r, d.SrcDT, spanElems(d.Dims, d.SrcStrides), 20)
			var gamma, beta []byte
			if d.Gamma != nil {
				gamma = fill(r, d.Gamma.DT, spanElems(d.Dims, d.Gamma.Strides), 2)
				beta = fill(r, d.Beta.DT, spanElems(d.Dims, d.Beta.Strides), 2)
			}
			bins := [][]byte{fill(r, dtypes.F32, spanElems(d.Dims, perRow), 1), fill(r, dtypes.BF16, spanElems(d.Dims, d.DstStrides), 2)}
			stats := func() []byte {
				if d.Mean == nil && d.Stats == nil {
					return nil
				}
				return make([]byte, 4*spanElems(d.Dims, perRow))
			}
			gotMean, gotVar, wantMean, wantVar := stats(), stats(), stats(), stats()
			out := func(p *Program, mean, vr []byte) []byte {
				dst := make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
				b := Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins, Mean: mean, Var: vr}
				if d.Stats != nil {
					b.Mean, b.Var, b.Stats = nil, nil, mean
				}
				if err := p.Run(b); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				return dst
			}
			got, want := out(fused, gotMean, gotVar), out(passes, wantMean, wantVar)
			for i := range int64(len(gotMean)) / 4 {
				for _, st := range [][2][]byte{{gotMean, wantMean}, {gotVar, wantVar}} {
					g, w := float64(dtypes.LoadF32(dtypes.F32, st[0], i)), float64(dtypes.LoadF32(dtypes.F32, st[1], i))
					if math.Abs(g-w) > 2*oracle.NormStatTolerance(w) {
						t.Fatalf("%s on %v: statistic %d is %v, the passes give %v", c.name, isa, i, g, w)
					}
				}
			}
			for i := range spanElems(d.Dims, d.DstStrides) {
				g, w := float64(dtypes.LoadF32(d.DstDT, got, i)), float64(dtypes.LoadF32(d.DstDT, want, i))
				if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > 4*tolerance(&d, w) {
					t.Fatalf("%s on %v: element %d is %v, the passes give %v", c.name, isa, i, g, w)
				}
			}
		}
		if tested < 50 {
			t.Errorf("%v: %d cases took the fused kernel", isa, tested)
		}
		jit.SetMaxISA(prev)
	}
}

// TestFusedLongRows: rows long enough that the sums are cut into runs,
// of data whose rounding errors all lean one way (nearly constant), stay
// within the float64 oracle's bound on every ISA.
func TestFusedLongRows(t *testing.T) {
	const n = 100003
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(11, uint64(isa)))
		for _, k := range []norm.Kind{norm.Softmax, norm.LogSoftmax, norm.LayerNorm, norm.RMSNorm} {
			dims := []int64{2, n}
			str := denseStrides(dims, identity(2))
			p := &norm.Problem{Kind: k, Dims: dims, Axis: -1, Eps: 1e-5, Src: norm.Operand{DT: dtypes.F32, Strides: str},
				Dst: norm.Operand{DT: dtypes.F32, Strides: str}}
			var b norm.Buffers
			spread := 0.0 // a constant row: every rounding of a sum leans the same way
			if k == norm.Softmax || k == norm.LogSoftmax {
				spread = 1
			}
			b.Src = fillAround(r, dtypes.F32, 2*n, 0.1, spread)
			b.Dst = make([]byte, 8*n)
			e, err := New(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Run(b, nil, 1); err != nil {
				t.Fatal(err)
			}
			want := oracle.Norm(p, b)
			for off, w := range want.Dst {
				got := float64(dtypes.LoadF32(dtypes.F32, b.Dst, off))
				if tol := oracle.NormTolerance(dtypes.F32, w, want.Bound[off]); math.IsNaN(got) || math.Abs(got-w) > tol {
					t.Fatalf("%v on %v: dst[%d] = %v, want %v (tolerance %g)", k, isa, off, got, w, tol)
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestFusedSoftmaxExpRange: the softmax's exp (kernelshape's
// ExpShifted) over the whole range of x - m, from 0 down past where e^x
// leaves f32 (-104) to -Inf, on every ISA and each way the kernel keeps
// its exps (in registers, in an f32 dst, in the stage for a bf16 dst,
// computed again for a bf16 dst past the stage):
// every result within the oracle's tolerance, a -Inf element exactly +0
// and a NaN row NaN; log-softmax's over the same rows.
func TestFusedSoftmaxExpRange(t *testing.T) {
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		prev := jit.SetMaxISA(isa)
		for _, k := range []norm.Kind{norm.Softmax, norm.LogSoftmax} {
			for _, c := range []struct {
				n   int64
				dst dtypes.DataType
			}{{150, dtypes.F32}, {203, dtypes.F32}, {203, dtypes.BF16}, {500, dtypes.BF16}, {4203, dtypes.BF16}} {
				dims := []int64{3, c.n}
				p := &norm.Problem{Kind: k, Dims: dims, Axis: -1, Src: norm.Operand{DT: dtypes.F32, Strides: denseStrides(dims, identity(2))},
					Dst: norm.Operand{DT: c.dst, Strides: denseStrides(dims, identity(2))}}
				var b norm.Buffers
				b.Src = make([]byte, 4*3*c.n)
				for j := range c.n {
					// Row 0 from 3 down to 3 - 0.6 (n-1), row 1 the same
					// shifted by 50, row 2 with a NaN.
					x := 3 - 0.6*float32(j)
					dtypes.StoreF32(dtypes.F32, b.Src, j, x)
					dtypes.StoreF32(dtypes.F32, b.Src, c.n+j, x+50)
					dtypes.StoreF32(dtypes.F32, b.Src, 2*c.n+j, x)
				}
				ninf := []int64{5, c.n - 1, c.n + 7}
				for _, o := range ninf {
					dtypes.StoreF32(dtypes.F32, b.Src, o, float32(math.Inf(-1)))
				}
				dtypes.StoreF32(dtypes.F32, b.Src, 2*c.n+9, float32(math.NaN()))
				b.Dst = make([]byte, 3*c.n*int64(c.dst.Size()))
				runFused(t, p, b, isa)
				want := oracle.Norm(p, b)
				for off, w := range want.Dst {
					got := float64(dtypes.LoadF32(c.dst, b.Dst, off))
					if off >= 2*c.n {
						if !math.IsNaN(got) {
							t.Fatalf("%v n=%d %v on %v: dst[%d] = %v in the row with a NaN", k, c.n, c.dst, isa, off, got)
						}
						continue
					}
					if slices.Contains(ninf, off) {
						if k == norm.Softmax && (got != 0 || math.Signbit(got)) || k == norm.LogSoftmax && !math.IsInf(got, -1) {
							t.Fatalf("%v n=%d %v on %v: dst[%d] = %v for -Inf", k, c.n, c.dst, isa, off, got)
						}
						continue
					}
					if tol := oracle.NormTolerance(c.dst, w, want.Bound[off]); math.IsNaN(got) || math.Abs(got-w) > tol {
						t.Fatalf("%v n=%d %v on %v: dst[%d] = %v, want %v (tolerance %g)", k, c.n, c.dst, isa, off, got, w, tol)
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// runFused runs p over b on one thread, failing t unless the fused kernel
// runs it.
func runFused(t *testing.T, p *norm.Problem, b norm.Buffers, isa jit.ISA) {
	t.Helper()
	e, err := New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.prog == nil || e.prog.full.fused == nil {
		t.Fatalf("%v on %v: not the fused kernel", p.Kind, isa)
	}
	if err := e.Run(b, nil, 1); err != nil {
		t.Fatal(err)
	}
}
