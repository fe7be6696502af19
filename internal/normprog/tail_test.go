package normprog

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestQuantizedDst: every kind into s8 and u8, after post-ops that
// divide by a scale and add a zero point (a fused Quantize), gives the
// float64 result rounded to nearest and saturated, within the f32
// tolerance of the value rounded.
func TestQuantizedDst(t *testing.T) {
	eachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(11, uint64(isa)))
		for ci, c := range cases() {
			if ci%4 != 0 {
				continue
			}
			d := c.d
			d.DstDT = []dtypes.DataType{dtypes.S8, dtypes.U8}[ci/4%2]
			zero := make([]int64, len(d.Dims))
			d.PostOps = append(append([]plan.PostOp(nil), d.PostOps...),
				plan.PostOp{Kind: ops.Divide, BinDT: dtypes.F32, BinStrides: zero},
				plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: zero})
			p, err := Compile(&d)
			if err != nil {
				t.Fatalf("%s: Compile: %v", c.name, err)
			}
			if isa != jit.None && p.Why() != "" {
				t.Errorf("%s: runs in the interpreter on %v: %s", c.name, isa, p.Why())
			}
			src := fill(r, d.SrcDT, spanElems(d.Dims, d.SrcStrides), 4)
			gamma, beta, bins := fillOperands(r, &d)
			// A scale that spreads the results over the integers and
			// a zero point that centres them.
			scale, zp := float32(1.0/64), float32(map[dtypes.DataType]float64{dtypes.S8: 3, dtypes.U8: 128}[d.DstDT])
			if d.Kind == LayerNorm || d.Kind == RMSNorm {
				scale = 1.0 / 32
			}
			bins[len(bins)-2], bins[len(bins)-1] = f32Bytes(scale), f32Bytes(zp)
			dst := make([]byte, spanElems(d.Dims, d.DstStrides))
			if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins}); err != nil {
				t.Fatalf("%s: Run: %v", c.name, err)
			}
			ref := d
			ref.DstDT = dtypes.F32
			want := reference(&ref, src, gamma, beta, bins)
			lo, hi := -128.0, 127.0
			if d.DstDT == dtypes.U8 {
				lo, hi = 0, 255
			}
			for i, w := range want {
				got := float64(dtypes.LoadF32(d.DstDT, dst, int64(i)))
				sat := math.Min(math.Max(w, lo), hi)
				if math.Abs(got-sat) > 0.5+tolerance(&ref, w)/float64(scale) || got != math.Round(got) {
					t.Fatalf("%s into %v on %v: element %d is %v, want %v rounded", c.name, d.DstDT, p.Impl(), i, got, w)
				}
			}
		}
	})
}

// TestManyBinaryPostOps: a layer norm with gamma and beta and six
// binary post-ops (ten binary operands after its statistics, more than
// a kernel takes) runs its post-ops over two passes and matches the
// float64 reference.
func TestManyBinaryPostOps(t *testing.T) {
	dims := []int64{9, 70}
	s := []int64{70, 1}
	d := Desc{Kind: LayerNorm, SrcDT: dtypes.F32, DstDT: dtypes.BF16, Dims: dims, Norm: []bool{false, true},
		SrcStrides: s, DstStrides: s, Epsilon: 1e-5,
		Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1}}, Beta: &Operand{DT: dtypes.BF16, Strides: []int64{0, 1}}}
	for i := range 6 {
		k := []ops.Kind{ops.Add, ops.Multiply, ops.Divide}[i%3]
		d.PostOps = append(d.PostOps, plan.PostOp{Kind: k, BinDT: dtypes.F32, BinStrides: []int64{1, 0}}, plan.PostOp{Kind: ops.ReLU})
	}
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		p, err := Compile(&d)
		if err != nil {
			t.Fatalf("%v: %v", isa, err)
		}
		r := rand.New(rand.NewPCG(21, 22))
		src := fill(r, d.SrcDT, 9*70, 4)
		gamma, beta, bins := fillOperands(r, &d)
		for _, b := range bins {
			for i := range int64(9) { // divisors away from 0
				dtypes.StoreF32(dtypes.F32, b, i, 1.5+float32(i)/8)
			}
		}
		dst := make([]byte, 9*70*2)
		if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins}); err != nil {
			t.Fatalf("%v: %v", isa, err)
		}
		for i, w := range reference(&d, src, gamma, beta, bins) {
			if got := float64(dtypes.LoadF32(d.DstDT, dst, int64(i))); math.Abs(got-w) > tolerance(&d, w) {
				t.Fatalf("%v (%s): element %d is %g, want %g", isa, p.Impl(), i, got, w)
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestQuantizedFused: into s8 and u8 after a fused Quantize, every kind
// the fused kernel computes keeps it wherever an f32 dst does, on every
// JIT ISA, also after a residual sum and with a run-time epsilon; its
// integers are the passes' (one apart at most where the two f32 results
// straddle a rounding boundary: the kernel multiplies by a reciprocal
// where the passes divide) and the float64 result rounded and saturated.
func TestQuantizedFused(t *testing.T) {
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			r := rand.New(rand.NewPCG(23, uint64(isa)))
			var descs []Desc
			for ci, c := range cases() {
				if c.d.Kind == L1Norm || ci%2 != 0 {
					continue
				}
				descs = append(descs, c.d)
			}
			for i, k := range []Kind{LayerNorm, RMSNorm} {
				d := residualCase(k, []int64{6, 100}, 1, dtypes.BF16, dtypes.F32, dtypes.F32, i == 0, i == 1, false)
				d.EpsDT = dtypes.F16
				descs = append(descs, *d)
			}
			tested := 0
			for di, d := range descs {
				asF32, err := Compile(&d)
				if err != nil {
					t.Fatal(err)
				}
				d.DstDT = []dtypes.DataType{dtypes.S8, dtypes.U8}[di%2]
				zero := make([]int64, len(d.Dims))
				d.PostOps = append(append([]plan.PostOp(nil), d.PostOps...),
					plan.PostOp{Kind: ops.Divide, BinDT: dtypes.F32, BinStrides: zero},
					plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: zero})
				fused, err := Compile(&d)
				if err != nil {
					t.Fatal(err)
				}
				if (fused.full.fused != nil) != (asF32.full.fused != nil) {
					t.Fatalf("%v %v into %v: fused %v, into f32 %v", d.Kind, d.Dims, d.DstDT, fused.full.fused != nil, asF32.full.fused != nil)
				}
				if fused.full.fused == nil {
					continue
				}
				tested++
				useFused = false
				passes, err := Compile(&d)
				useFused = true
				if err != nil {
					t.Fatal(err)
				}
				src := fill(r, d.SrcDT, spanElems(d.Dims, d.SrcStrides), 4)
				var x, skip []byte
				var bias []byte
				if res := d.Residual; res != nil {
					x = fill(r, res.X.DT, spanElems(d.Dims, res.X.Strides), 3)
					skip = fill(r, res.Skip.DT, spanElems(d.Dims, res.Skip.Strides), 3)
					if res.Bias != nil {
						bias = fill(r, res.Bias.DT, spanElems(d.Dims, res.Bias.Strides), 1)
					}
					if !res.KeepSum {
						src = nil
					}
				}
				gamma, beta, bins := fillOperands(r, &d)
				scale, zp := float32(1.0/64), float32(map[dtypes.DataType]float64{dtypes.S8: 3, dtypes.U8: 128}[d.DstDT])
				if d.Kind == LayerNorm || d.Kind == RMSNorm {
					scale = 1.0 / 32
				}
				bins[len(bins)-2], bins[len(bins)-1] = f32Bytes(scale), f32Bytes(zp)
				eps := f32Bytes(0)
				if d.EpsDT != dtypes.Undef {
					eps = make([]byte, 2)
					dtypes.StoreF32(d.EpsDT, eps, 0, 0.01)
				}
				run := func(p *Program) ([]byte, []byte) {
					dst := make([]byte, spanElems(d.Dims, d.DstStrides))
					sum := append([]byte(nil), src...)
					if err := p.Run(Buffers{Src: sum, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins, Eps: eps, X: x, Skip: skip, Bias: bias}); err != nil {
						t.Fatalf("%v %v: Run: %v", d.Kind, d.Dims, err)
					}
					return dst, sum
				}
				got, sum := run(fused)
				pass, _ := run(passes)
				ref := d
				ref.DstDT = dtypes.F32
				if d.EpsDT != dtypes.Undef {
					ref.Epsilon = dtypes.LoadF32(d.EpsDT, eps, 0)
				}
				normed := src
				if d.Residual != nil {
					normed = residualSum(&d, x, skip, bias)
					if d.Residual.KeepSum && !slices.Equal(sum, normed) {
						t.Fatalf("%v %v into %v: the sum kept differs from x + skip [+ bias]", d.Kind, d.Dims, d.DstDT)
					}
				}
				want := reference(&ref, normed, gamma, beta, bins)
				lo, hi := -128.0, 127.0
				if d.DstDT == dtypes.U8 {
					lo, hi = 0, 255
				}
				for i, w := range want {
					g := float64(dtypes.LoadF32(d.DstDT, got, int64(i)))
					pv := float64(dtypes.LoadF32(d.DstDT, pass, int64(i)))
					sat := math.Min(math.Max(w, lo), hi)
					if math.Abs(g-pv) > 1 || math.Abs(g-sat) > 0.5+tolerance(&ref, w)/float64(scale) {
						t.Fatalf("%v %v into %v: element %d is %v, the passes give %v, float64 %v",
							d.Kind, d.Dims, d.DstDT, i, g, pv, w)
					}
				}
			}
			if tested < 20 {
				t.Errorf("%d descriptions took the fused kernel", tested)
			}
		})
	}
}
