package normprog

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestFusedColumns runs softmax and log-softmax over dim 1 of [N, C, H,
// W] (a normalized dim that is not innermost) as the column kernel on
// every JIT ISA: channel counts from 1 to 1000, inner extents that are
// and are not a multiple of a vector or a tile, -Inf entries, an all
// -Inf column, every float type pair, a dst apart from src's layout, its
// tensors next to guard pages, against the float64 oracle, the
// reference executor and the passes in the interpreter, and bit for bit
// the same on 1 and 2 threads.
func TestFusedColumns(t *testing.T) {
	dts := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32}, {dtypes.F32, dtypes.BF16}}
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(11, uint64(isa)))
		columns := 0
		for _, k := range []norm.Kind{norm.Softmax, norm.LogSoftmax} {
			for _, C := range []int64{1, 2, 21, 64, 1000} {
				for _, hw := range [][2]int64{{1, 7}, {3, 17}, {4, 64}, {5, 61}, {2, 200}, {8, 1000}} {
					if C == 1000 && hw[0]*hw[1] > 64 || C != 21 && hw[0]*hw[1] > 1000 {
						continue
					}
					for li := range 3 {
						if li > 0 && hw[0]*hw[1] > 1000 {
							continue // the long one cut into chunks along it
						}
						dt := dts[r.IntN(len(dts))]
						dims := []int64{2, C, hw[0], hw[1]}
						if li == 2 {
							dims[0] = 1
						}
						p := &norm.Problem{Kind: k, Dims: dims, Axis: 1}
						srcStr := denseStrides(dims, identity(4))
						dstStr := denseStrides(dims, identity(4))
						if li == 1 {
							// dst's channels and images apart.
							dstStr[1] = dims[2]*dims[3] + 5
							dstStr[0] = dstStr[1]*C + 3
						}
						p.Src = norm.Operand{DT: dt[0], Strides: srcStr}
						p.Dst = norm.Operand{DT: dt[1], Strides: dstStr}
						if k == norm.Softmax {
							p.InfAsZero = r.IntN(2) == 0
						}
						var b norm.Buffers
						b.Src = fillAround(r, dt[0], spanElems(dims, srcStr), 0, 20)
						hwn := dims[2] * dims[3]
						if C > 2 {
							dtypes.StoreF32(dt[0], b.Src, 1, float32(math.Inf(-1)))
							dtypes.StoreF32(dt[0], b.Src, hwn+2, float32(math.Inf(-1)))
						}
						if hwn > 3 {
							// Column 3 of image 0 is all -Inf.
							for c := range C {
								dtypes.StoreF32(dt[0], b.Src, c*srcStr[1]+3, float32(math.Inf(-1)))
							}
						}
						b.Dst = make([]byte, spanElems(dims, dstStr)*int64(dt[1].Size()))
						name := fmt.Sprintf("%v %v %v:%v inf_as_zero %v layout %d on %v", k, dims, dt[0], dt[1], p.InfAsZero, li, isa)
						e, err := New(p, nil)
						if err != nil {
							t.Fatal(err)
						}
						if hwn == 8000 && C > 1 && (e.prog == nil || e.prog.chunkDim != 2) {
							t.Fatalf("%s: not cut along the inner dim", name)
						}
						column := e.prog != nil && e.prog.full.fused != nil && C > 1 && hwn > 1
						if C > 1 && hwn > 1 && column != (isa != jit.None) {
							t.Fatalf("%s: column kernel %v", name, column)
						}
						if column {
							columns++
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
						// The passes in the interpreter.
						ib := b
						ib.Dst = make([]byte, len(b.Dst))
						jit.SetMaxISA(jit.None)
						ie, err := New(p, nil)
						if err == nil {
							err = ie.Run(ib, nil, 1)
						}
						jit.SetMaxISA(isa)
						if err != nil {
							t.Fatal(err)
						}
						var outs [][]byte
						for _, threads := range []int{1, 2} {
							prevT := jit.SetThreads(threads)
							f := kerneltest.NewFence(t, threads == 1)
							fb := norm.Buffers{Src: f.Place(b.Src), Dst: f.Place(b.Dst)}
							err := e.Run(fb, nil, threads)
							jit.SetThreads(prevT)
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							for off, w := range want.Dst {
								got := float64(dtypes.LoadF32(dt[1], fb.Dst, off))
								tol := oracle.NormTolerance(dt[1], w, want.Bound[off])
								refv := float64(dtypes.LoadF32(dt[1], rb.Dst, off))
								iv := float64(dtypes.LoadF32(dt[1], ib.Dst, off))
								if math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) &&
									(math.Abs(got-w) > tol || math.Abs(got-refv) > 2*tol || math.Abs(got-iv) > 2*tol) {
									t.Fatalf("%s: dst[%d] = %v, want %v (reference executor %v, interpreter %v, tolerance %g)",
										name, off, got, w, refv, iv, tol)
								}
							}
							outs = append(outs, bytes.Clone(fb.Dst))
							f.Free()
						}
						if !bytes.Equal(outs[0], outs[1]) {
							t.Fatalf("%s: 1 and 2 threads differ", name)
						}
					}
				}
			}
		}
		t.Logf("%v: %d problems ran the column kernel", isa, columns)
		jit.SetMaxISA(prev)
	}
}

// TestFusedColumnsNorm runs L2, L1, RMS and layer normalization over
// dim 1 of [N, C, H, W] as the column kernel on every JIT ISA: channel
// counts from 2 to 1000 (the sums cut into runs), inner extents that are
// and are not a multiple of a vector or a tile, every float type pair,
// the epsilon a constant (L2's a floor or added to the norm) and read at
// run time, gamma and beta per channel, a column of zeros (where the
// epsilon decides) and a NaN, a per-row operand, a dst apart
// from src's layout, its tensors next to guard pages; against the
// float64 reference (the oracle's bound for a row of C), the passes and
// the interpreter, bit for bit the same on 1 and 2 threads, and in place
// the same as out of place.
func TestFusedColumnsNorm(t *testing.T) {
	dts := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32}, {dtypes.F32, dtypes.BF16}}
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(17, uint64(isa)))
		columns := 0
		for _, k := range []Kind{L2Norm, L1Norm, RMSNorm, LayerNorm} {
			for _, C := range []int64{2, 3, 21, 64, 1000} {
				for _, hw := range [][2]int64{{1, 7}, {3, 17}, {4, 64}, {5, 61}, {2, 200}, {8, 1000}} {
					if C == 1000 && hw[0]*hw[1] > 64 || C != 21 && hw[0]*hw[1] > 1000 {
						continue
					}
					for li := range 3 {
						if li > 0 && hw[0]*hw[1] > 1000 {
							continue
						}
						dt := dts[r.IntN(len(dts))]
						dims := []int64{2, C, hw[0], hw[1]}
						if li == 2 {
							dims[0] = 1
						}
						hwn := dims[2] * dims[3]
						d := Desc{Kind: k, SrcDT: dt[0], DstDT: dt[1], Dims: dims, Norm: []bool{false, true, false, false},
							SrcStrides: denseStrides(dims, identity(4)), DstStrides: denseStrides(dims, identity(4)),
							Epsilon: []float32{1e-12, 0.5, 0}[r.IntN(3)]}
						if li == 1 {
							// dst's channels and images apart.
							d.DstStrides[1] = hwn + 5
							d.DstStrides[0] = d.DstStrides[1]*C + 3
						}
						switch r.IntN(4) {
						case 0:
							d.EpsAdded = k == L2Norm
						case 1:
							d.EpsDT = dtypes.F32
						}
						if r.IntN(2) == 0 {
							// An operand per row (broadcast over the
							// channels), then ReLU.
							d.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{C * hwn, 0, dims[3], 1}}, {Kind: ops.ReLU}}
						}
						if (k == RMSNorm || k == LayerNorm) && r.IntN(2) == 0 {
							d.Gamma = &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0, 0}}
							d.Beta = &Operand{DT: dt[0], Strides: []int64{0, 1, 0, 0}}
						}
						center := 0.0
						if k == LayerNorm && r.IntN(2) == 0 {
							center = 3
						}
						name := fmt.Sprintf("%v %v %v:%v eps %v added %v run-time %v gamma %v post-ops %d layout %d center %v on %v",
							k, dims, dt[0], dt[1], d.Epsilon, d.EpsAdded, d.EpsDT != dtypes.Undef, d.Gamma != nil, len(d.PostOps), li, center, isa)
						src := fillAround(r, dt[0], spanElems(dims, d.SrcStrides), center, 4)
						if hwn > 3 {
							// Column 3 of image 0 is all zeros.
							for c := range C {
								dtypes.StoreF32(dt[0], src, c*d.SrcStrides[1]+3, 0)
							}
						}
						if hwn > 5 {
							dtypes.StoreF32(dt[0], src, d.SrcStrides[1]+5, float32(math.NaN()))
						}
						gamma, beta, bins := fillOperands(r, &d)
						var eps []byte
						if d.EpsDT != dtypes.Undef {
							eps = f32Bytes(d.Epsilon)
						}
						p, err := Compile(&d)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						column := p.full.fused != nil
						if column != (isa != jit.None) {
							t.Fatalf("%s: column kernel %v", name, column)
						}
						if hwn == 8000 && p.chunkDim != 2 {
							t.Fatalf("%s: not cut along the inner dim", name)
						}
						if column {
							columns++
						}
						dstLen := spanElems(dims, d.DstStrides) * int64(dt[1].Size())
						run := func(p *Program, b Buffers) []byte {
							t.Helper()
							if err := p.Run(b); err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							return b.Dst
						}
						// The passes, and the passes in the interpreter.
						useFused = false
						passes, err := Compile(&d)
						useFused = true
						if err != nil {
							t.Fatal(err)
						}
						pass := run(passes, Buffers{Src: src, Dst: make([]byte, dstLen), Gamma: gamma, Beta: beta, Eps: eps, Bins: bins})
						jit.SetMaxISA(jit.None)
						ip, err := Compile(&d)
						jit.SetMaxISA(isa)
						if err != nil {
							t.Fatal(err)
						}
						interp := run(ip, Buffers{Src: src, Dst: make([]byte, dstLen), Gamma: gamma, Beta: beta, Eps: eps, Bins: bins})
						want := reference(&d, src, gamma, beta, bins)
						scale := columnScales(&d, src, gamma, want)
						bound := float64(4*math.Ceil(math.Log2(float64(C+1)))+16) / (1 << 24)
						var outs [][]byte
						for _, threads := range []int{1, 2} {
							prevT := jit.SetThreads(threads)
							f := kerneltest.NewFence(t, threads == 1)
							got := run(p, Buffers{Src: f.Place(src), Dst: f.Place(make([]byte, dstLen)), Gamma: f.Place(gamma), Beta: f.Place(beta),
								Eps: f.Place(eps), Bins: f.PlaceEach(bins)})
							jit.SetThreads(prevT)
							for i, w := range want {
								g := float64(dtypes.LoadF32(dt[1], got, int64(i)))
								pv := float64(dtypes.LoadF32(dt[1], pass, int64(i)))
								iv := float64(dtypes.LoadF32(dt[1], interp, int64(i)))
								tol := oracle.NormTolerance(dt[1], w, bound*scale[i])
								if !math.IsNaN(w) && math.IsNaN(tol) {
									t.Fatalf("%s: dst[%d]: no tolerance for %v", name, i, w)
								}
								if math.IsNaN(w) != math.IsNaN(g) || !math.IsNaN(w) &&
									(math.Abs(g-w) > tol || math.Abs(g-pv) > 2*tol || math.Abs(g-iv) > 2*tol) {
									t.Fatalf("%s: dst[%d] = %v, want %v (passes %v, interpreter %v, tolerance %g)", name, i, g, w, pv, iv, tol)
								}
							}
							outs = append(outs, bytes.Clone(got))
							f.Free()
						}
						if !bytes.Equal(outs[0], outs[1]) {
							t.Fatalf("%s: 1 and 2 threads differ", name)
						}
						if li != 1 && dt[0] == dt[1] {
							in := bytes.Clone(src)
							if run(p, Buffers{Src: in, Dst: in, Gamma: gamma, Beta: beta, Eps: eps, Bins: bins}); !bytes.Equal(in, outs[0]) {
								t.Fatalf("%s: in place differs from out of place", name)
							}
						}
					}
				}
			}
		}
		t.Logf("%v: %d problems ran the column kernel", isa, columns)
		jit.SetMaxISA(prev)
	}
}

// columnScales is, by dst offset, the scale the oracle's bound relates
// to (oracle.NormResult.Magnitude) for a normalization over dim 1 of
// [N, C, H, W]: the largest magnitude of the column's results, and for
// layer norm of its inputs in result units, max|x|·max|gamma|/σ; at
// least 1.
func columnScales(d *Desc, src, gamma []byte, want []float64) []float64 {
	scale := make([]float64, len(want))
	for n := range d.Dims[0] {
		for h := range d.Dims[2] {
			for w := range d.Dims[3] {
				at := func(s []int64, c int64) int64 { return n*s[0] + c*s[1] + h*s[2] + w*s[3] }
				m, mean, g := 1.0, 0.0, 1.0
				xs := make([]float64, d.Dims[1])
				for c := range d.Dims[1] {
					xs[c] = float64(dtypes.LoadF32(d.SrcDT, src, at(d.SrcStrides, c)))
					mean += xs[c] / float64(len(xs))
					m = math.Max(m, math.Abs(want[at(d.DstStrides, c)]))
					if d.Gamma != nil {
						g = math.Max(g, math.Abs(float64(dtypes.LoadF32(d.Gamma.DT, gamma, at(d.Gamma.Strides, c)))))
					}
				}
				if d.Kind == LayerNorm {
					v, big := 0.0, 0.0
					for _, x := range xs {
						v += (x - mean) * (x - mean) / float64(len(xs))
						big = math.Max(big, math.Abs(x))
					}
					m = math.Max(m, big*g/math.Sqrt(v+float64(d.Epsilon)))
				}
				for c := range d.Dims[1] {
					scale[at(d.DstStrides, c)] = m
				}
			}
		}
	}
	return scale
}
