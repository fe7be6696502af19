package normprog

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// dequantCases are normalizations of s8 and u8 src with a fused
// Dequantize: rows the fused kernel takes (every tail length class, held
// softmax rows and long ones), softmax over channels (the column
// kernel), and what runs as passes (GroupNorm, kept statistics, rows
// that are not innermost).
func dequantCases() []tcase {
	type shape struct {
		dims []int64
		norm []bool
	}
	shapes := []shape{
		{[]int64{5, 1}, []bool{false, true}},
		{[]int64{6, 7}, []bool{false, true}},
		{[]int64{4, 16}, []bool{false, true}},
		{[]int64{3, 33}, []bool{false, true}},
		{[]int64{9, 100}, []bool{false, true}},
		{[]int64{2, 1000}, []bool{false, true}},
		{[]int64{3, 5, 40}, []bool{false, true, false}}, // over channels
		{[]int64{4, 6, 3}, []bool{true, false, false}},  // passes
		{[]int64{2, 3, 4, 9}, []bool{false, false, true, true}},
	}
	dqs := []kernelshape.Dequant{{Scale: 0.25, Zero: 0}, {Scale: 0.0371, Zero: 5}, {Scale: -0.5, Zero: -3}, {Scale: 0.1, Zero: 128}}
	var out []tcase
	i := 0
	for _, k := range []Kind{Softmax, LogSoftmax, LayerNorm, RMSNorm, L2Norm} {
		for _, sh := range shapes {
			for _, src := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
				i++
				dq := dqs[i%len(dqs)]
				if src == dtypes.S8 && dq.Zero == 128 {
					dq.Zero = -128
				}
				dst := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F32}[i%3]
				d := Desc{Kind: k, SrcDT: src, DstDT: dst, Dims: sh.dims, Norm: sh.norm, Dequant: &dq,
					SrcStrides: denseStrides(sh.dims, identity(len(sh.dims))), DstStrides: denseStrides(sh.dims, identity(len(sh.dims)))}
				if k != Softmax && k != LogSoftmax {
					d.Epsilon = 1e-3
				}
				if k == LayerNorm && i%2 == 0 {
					rows := make([]int64, len(sh.dims)) // one mean and variance per row
					n := int64(1)
					for j := len(rows) - 1; j >= 0; j-- {
						if !sh.norm[j] {
							rows[j] = n
							n *= sh.dims[j]
						}
					}
					d.Mean = &Operand{DT: dtypes.F32, Strides: rows}
					d.Var = &Operand{DT: dtypes.F32, Strides: append([]int64(nil), rows...)}
				}
				if i%4 == 1 {
					d.PostOps = []plan.PostOp{{Kind: ops.ReLU}}
				}
				out = append(out, tcase{fmt.Sprintf("%s/%v/%v:%v/scale:%g/zp:%d", k, sh.dims, src, dst, dq.Scale, dq.Zero), d})
			}
		}
	}
	// A post-op that needs many temporaries: on AVX2 the kernel is
	// built again with its dequantize constants not held (amd64
	// EmitNorm).
	for i, k := range []Kind{Softmax, LayerNorm, LogSoftmax} {
		dims, norm := []int64{5, 100}, []bool{false, true}
		dq := dqs[i+1]
		d := Desc{Kind: k, SrcDT: dtypes.U8, DstDT: dtypes.F32, Dims: dims, Norm: norm, Dequant: &dq,
			SrcStrides: denseStrides(dims, identity(2)), DstStrides: denseStrides(dims, identity(2)),
			PostOps: []plan.PostOp{{Kind: ops.GELUErf}}}
		if k == LayerNorm {
			d.Epsilon = 1e-3
		}
		out = append(out, tcase{fmt.Sprintf("%s/%v/%v/many temporaries", k, dims, d.PostOps[0].Kind), d})
	}
	// GroupNorm: channels first and last.
	for gi, nxc := range []bool{false, true} {
		for _, src := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
			dims, norm, ch := []int64{2, 6, 5, 7}, []bool{false, false, true, true}, 1
			if nxc {
				dims, norm, ch = []int64{2, 5, 7, 6}, []bool{false, true, true, false}, 3
			}
			dq := dqs[gi+1]
			d := Desc{Kind: GroupNorm, SrcDT: src, DstDT: dtypes.F32, Dims: dims, Norm: norm, Groups: 3, ChanDim: ch, Epsilon: 1e-3,
				Dequant: &dq, SrcStrides: denseStrides(dims, identity(4)), DstStrides: denseStrides(dims, identity(4))}
			gs := make([]int64, 4)
			gs[ch] = 1
			d.Gamma, d.Beta = &Operand{DT: dtypes.F32, Strides: gs}, &Operand{DT: dtypes.F32, Strides: append([]int64(nil), gs...)}
			out = append(out, tcase{fmt.Sprintf("groupnorm/%v/%v", dims, src), d})
		}
	}
	return out
}

// fillInt8 returns n random elements of s8 or u8 over their whole range.
func fillInt8(r *rand.Rand, n int64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// dequantized is d's Dequantize applied to src in float64, rounded once
// to f32 (the Dequantize's output), and d as the normalization of that
// f32 tensor.
func dequantized(d *Desc, src []byte) (*Desc, []byte) {
	f := *d
	f.SrcDT, f.Dequant = dtypes.F32, nil
	out := make([]byte, 4*len(src))
	for i := range int64(len(src)) {
		x := float64(dtypes.LoadF32(d.SrcDT, src, i))
		dtypes.StoreF32(dtypes.F32, out, i, float32((x-float64(d.Dequant.Zero))*float64(d.Dequant.Scale)))
	}
	return &f, out
}

// TestDequantAgainstFloat64: each case on every ISA against the float64
// oracle of its dequantized src; where the fused kernel runs it, the
// passes agree with it; it runs the fused kernel wherever its f32 twin
// does; and 1, 2 and 3 threads give the same bits.
func TestDequantAgainstFloat64(t *testing.T) {
	eachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(11, uint64(isa)))
		fusedSeen := 0
		for _, c := range dequantCases() {
			d := &c.d
			p, err := Compile(d)
			if err != nil {
				t.Fatalf("%s: Compile: %v", c.name, err)
			}
			if isa != jit.None && p.Why() != "" {
				t.Errorf("%s: runs in the interpreter on %v: %s", c.name, isa, p.Why())
			}
			if p.full.fused != nil {
				fusedSeen++
			}
			// An int8 src keeps every fused kernel its f32 twin has.
			twin := *d
			twin.SrcDT, twin.Dequant = dtypes.F32, nil
			// (GroupNorm on channels last runs its own kernels for an f32
			// src, the passes for an int8 one.)
			if tp, err := Compile(&twin); err != nil || tp.cl == nil && (tp.full.fused != nil) != (p.full.fused != nil) {
				t.Errorf("%s on %v: fused %v, the f32 twin's %v (%v)", c.name, isa, p.full.fused != nil, tp != nil && tp.full != nil && tp.full.fused != nil, err)
			}
			src := fillInt8(r, spanElems(d.Dims, d.SrcStrides))
			gamma, beta, _ := fillOperands(r, d)
			run := func(p *Program) []byte {
				dst := make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
				b := Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta}
				if d.Mean != nil {
					b.Mean, b.Var = make([]byte, 4*spanElems(p.d.Dims, p.d.Mean.Strides)), make([]byte, 4*spanElems(p.d.Dims, p.d.Var.Strides))
				}
				if err := p.Run(b); err != nil {
					t.Fatalf("%s: Run: %v", c.name, err)
				}
				return dst
			}
			dst := run(p)
			fd, fsrc := dequantized(d, src)
			var want []float64
			if d.Kind == GroupNorm {
				want = groupNormRef(fd, fsrc, gamma, beta)
			} else {
				want = reference(fd, fsrc, gamma, beta, nil)
			}
			bad := 0
			for i, w := range want {
				got := float64(dtypes.LoadF32(d.DstDT, dst, int64(i)))
				if math.Abs(got-w) > tolerance(d, w)+2e-6 || math.IsNaN(got) != math.IsNaN(w) {
					if bad < 3 {
						t.Errorf("%s on %v: element %d is %g, want %g", c.name, p.Impl(), i, got, w)
					}
					bad++
				}
			}
			if bad > 0 {
				t.Fatalf("%s: %d of %d elements wrong", c.name, bad, len(want))
			}
			if p.full.fused != nil {
				useFused = false
				passes, err := Compile(d)
				useFused = true
				if err != nil {
					t.Fatal(err)
				}
				// The two sum in different orders: close, not the same bits.
				pass := run(passes)
				for i := range int64(len(dst)) / int64(d.DstDT.Size()) {
					g, q := float64(dtypes.LoadF32(d.DstDT, dst, i)), float64(dtypes.LoadF32(d.DstDT, pass, i))
					if math.IsNaN(g) != math.IsNaN(q) || math.Abs(g-q) > 2*tolerance(d, q) {
						t.Fatalf("%s on %v: element %d: fused %g, passes %g", c.name, isa, i, g, q)
					}
				}
			}
			for _, n := range []int{2, 3} {
				prev := jit.SetThreads(n)
				got := run(p)
				jit.SetThreads(prev)
				if string(got) != string(dst) {
					t.Errorf("%s on %v: %d threads differ from 1", c.name, isa, n)
				}
			}
		}
		if isa != jit.None && fusedSeen == 0 {
			t.Errorf("%v: no case ran the fused kernel", isa)
		}
	})
}

// groupNormRef is GroupNorm d in float64 over an f32 src, channels of
// gamma and beta in f32: the split LayerNorm's reference.
func groupNormRef(d *Desc, src, gamma, beta []byte) []float64 {
	s := splitGroups(d)
	return reference(&s, src, gamma, beta, nil)
}

// TestDequantRefusals: what a fused Dequantize does not take.
func TestDequantRefusals(t *testing.T) {
	ok := func() *Desc {
		return &Desc{Kind: Softmax, SrcDT: dtypes.S8, DstDT: dtypes.F32, Dims: []int64{2, 8}, Norm: []bool{false, true},
			SrcStrides: []int64{8, 1}, DstStrides: []int64{8, 1}, Dequant: &kernelshape.Dequant{Scale: 0.5, Zero: 1}}
	}
	if _, err := Compile(ok()); err != nil {
		t.Fatalf("the valid description: %v", err)
	}
	f32 := &Operand{DT: dtypes.F32, Strides: []int64{8, 1}}
	cases := []struct {
		name string
		mod  func(d *Desc)
		want status.Status
	}{
		{"f32 src", func(d *Desc) { d.SrcDT = dtypes.F32 }, status.InvalidArguments},
		{"s8 src, no dequantize", func(d *Desc) { d.Dequant = nil }, status.Unimplemented},
		{"NaN scale", func(d *Desc) { d.Dequant.Scale = float32(math.NaN()) }, status.InvalidArguments},
		{"infinite scale", func(d *Desc) { d.Dequant.Scale = float32(math.Inf(1)) }, status.InvalidArguments},
		{"residual sum", func(d *Desc) {
			d.Kind, d.Epsilon = LayerNorm, 1e-5
			d.Residual = &Residual{X: *f32, Skip: *f32}
		}, status.Unimplemented},
	}
	for _, c := range cases {
		d := ok()
		c.mod(d)
		_, err := Compile(d)
		var e *status.Error
		if !errors.As(err, &e) || e.Status != c.want {
			t.Errorf("%s: Compile gives %v, want a %v error", c.name, err, c.want)
		}
	}
}

// BenchmarkDequant times S1 (softmax) and S6 (layer norm) with an s8
// src dequantized in the kernel into an s8 dst (the int8 pattern
// Dequantize -> norm -> Quantize, its scale 1), beside the same shapes
// f32 into f32; bytes are src read plus dst written.
func BenchmarkDequant(b *testing.B) {
	for _, s := range benchShapes {
		if s.label != "S1" && s.label != "S6" && s.label != "S3" {
			continue
		}
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.S8} {
			b.Run(s.label+"/"+dt.String(), func(b *testing.B) {
				d := benchDesc(s.kind, s.dims, s.norm, s.after, dtypes.F32)
				if dt == dtypes.S8 {
					d.SrcDT, d.DstDT, d.Dequant = dtypes.S8, dtypes.S8, &kernelshape.Dequant{Scale: 0.05, Zero: 3}
				}
				p, err := Compile(d)
				if err != nil {
					b.Fatal(err)
				}
				n := spanElems(d.Dims, d.SrcStrides)
				var src []byte
				if dt == dtypes.S8 {
					src = fillInt8(rand.New(rand.NewPCG(1, 2)), n)
				} else {
					src = fill(rand.New(rand.NewPCG(1, 2)), dt, n, 4)
				}
				dst := make([]byte, len(src))
				var gamma []byte
				if d.Gamma != nil {
					gamma = fill(rand.New(rand.NewPCG(3, 4)), dtypes.F32, d.Dims[len(d.Dims)-1], 2)
				}
				b.SetBytes(int64(2 * len(src)))
				b.ResetTimer()
				timed(b, func() {
					if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma}); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}
