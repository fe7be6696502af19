package normprog

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/status"
)

// TestRunTimeEpsilon: a program whose epsilon is a run-time operand (of
// f32, bf16 or f16) computes what the float64 reference computes with
// that value, on every ISA, for each kind with an epsilon; L2Norm also
// with the epsilon added to the norm. Each Run reads the value anew.
func TestRunTimeEpsilon(t *testing.T) {
	eachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(7, uint64(isa)))
		for ci, c := range cases() {
			if c.d.Kind != LayerNorm && c.d.Kind != RMSNorm && c.d.Kind != L2Norm {
				continue
			}
			d := c.d
			d.EpsDT = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[ci%3]
			d.EpsAdded = d.Kind == L2Norm && ci%2 == 0
			d.Epsilon = 123 // ignored: the operand's value counts
			p, err := Compile(&d)
			if err != nil {
				t.Fatalf("%s: Compile: %v", c.name, err)
			}
			if isa != jit.None && p.Why() != "" {
				t.Errorf("%s: runs in the interpreter on %v: %s", c.name, isa, p.Why())
			}
			src := fill(r, d.SrcDT, spanElems(d.Dims, d.SrcStrides), 4)
			gamma, beta, bins := fillOperands(r, &d)
			for _, v := range []float32{1e-5, 0.5} {
				eps := make([]byte, d.EpsDT.Size())
				dtypes.StoreF32(d.EpsDT, eps, 0, v)
				dst := make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
				if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta, Eps: eps, Bins: bins}); err != nil {
					t.Fatalf("%s: Run: %v", c.name, err)
				}
				ref := d
				ref.Epsilon = dtypes.LoadF32(d.EpsDT, eps, 0)
				want := reference(&ref, src, gamma, beta, bins)
				for i, w := range want {
					got := float64(dtypes.LoadF32(d.DstDT, dst, int64(i)))
					if math.Abs(got-w) > tolerance(&d, w) || math.IsNaN(got) != math.IsNaN(w) {
						t.Fatalf("%s (eps %v, %v, added %v) on %v: element %d is %g, want %g",
							c.name, v, d.EpsDT, d.EpsAdded, p.Impl(), i, got, w)
					}
				}
			}
		}
	})
}

// TestRunTimeEpsilonRefused: a run-time epsilon that is NaN, infinite or
// negative, or a buffer too short for it, is an InvalidArguments error
// of Run that names it, and dst is left alone; descriptions that give an
// epsilon operand to a softmax, of an integer type, or add epsilon to
// anything but an L2 norm do not compile.
func TestRunTimeEpsilonRefused(t *testing.T) {
	d := &Desc{Kind: RMSNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2, 8}, Norm: []bool{false, true},
		SrcStrides: []int64{8, 1}, DstStrides: []int64{8, 1}, EpsDT: dtypes.F32}
	p, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 64)
	for _, c := range []struct {
		eps  []byte
		want string
	}{
		{f32Bytes(float32(math.NaN())), "NaN"},
		{f32Bytes(-1e-5), "negative"},
		{f32Bytes(float32(math.Inf(1))), "+Inf"},
		{[]byte{0, 0}, "holds 2 bytes"},
		{nil, "holds 0 bytes"},
	} {
		dst := make([]byte, 64)
		dst[0] = 7
		err := p.Run(Buffers{Src: src, Dst: dst, Eps: c.eps})
		if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("eps %v: %v, want InvalidArguments saying %q", c.eps, err, c.want)
		}
		if dst[0] != 7 {
			t.Errorf("eps %v: dst written after the refusal", c.eps)
		}
	}
	for _, c := range []struct {
		change func(d *Desc)
		want   status.Status
	}{
		{func(d *Desc) { d.Kind = Softmax }, status.InvalidArguments},
		{func(d *Desc) { d.EpsDT = dtypes.S8 }, status.Unimplemented},
		{func(d *Desc) { d.EpsAdded = true }, status.InvalidArguments},
	} {
		bad := *d
		c.change(&bad)
		if _, err := Compile(&bad); !errors.Is(err, c.want) {
			t.Errorf("%+v: Compile gives %v, want %v", bad, err, c.want)
		}
	}
}

func f32Bytes(v float32) []byte {
	b := make([]byte, 4)
	dtypes.StoreF32(dtypes.F32, b, 0, v)
	return b
}

// fillOperands returns random gamma, beta and binary operands for d
// (nil where it has none).
func fillOperands(r *rand.Rand, d *Desc) (gamma, beta []byte, bins [][]byte) {
	if d.Gamma != nil {
		gamma = fill(r, d.Gamma.DT, spanElems(d.Dims, d.Gamma.Strides), 2)
	}
	if d.Beta != nil {
		beta = fill(r, d.Beta.DT, spanElems(d.Dims, d.Beta.Strides), 2)
	}
	for _, op := range d.PostOps {
		if op.Kind.IsBinary() {
			bins = append(bins, fill(r, op.BinDT, spanElems(d.Dims, op.BinStrides), 1))
		}
	}
	return gamma, beta, bins
}

// eachISA runs f under each ISA cap this machine has, as a subtest.
func eachISA(t *testing.T, f func(t *testing.T, isa jit.ISA)) {
	for _, isa := range isas() {
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			f(t, isa)
		})
	}
}

// TestRunTimeEpsilonFused: a run-time epsilon (each type, and L2Norm's
// floor and added forms) keeps the fused kernel wherever the constant
// one takes it, on every JIT ISA, and the kernel gives what the passes
// give and the float64 reference gives with the value read at that Run.
// Rows of zeros (the floor and the added eps decide the result) and a
// NaN are among them.
func TestRunTimeEpsilonFused(t *testing.T) {
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			r := rand.New(rand.NewPCG(13, uint64(isa)))
			tested := 0
			for ci, c := range cases() {
				if c.d.Kind != LayerNorm && c.d.Kind != RMSNorm && c.d.Kind != L2Norm {
					continue
				}
				constant, err := Compile(&c.d)
				if err != nil {
					t.Fatal(err)
				}
				for _, added := range []bool{false, true} {
					if added && c.d.Kind != L2Norm {
						continue
					}
					d := c.d
					d.EpsDT = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[ci%3]
					d.EpsAdded = added
					d.Epsilon = 123 // ignored: the operand's value counts
					fused, err := Compile(&d)
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					if (fused.full.fused != nil) != (constant.full.fused != nil) {
						t.Fatalf("%s: fused %v with a run-time epsilon, %v with a constant one",
							c.name, fused.full.fused != nil, constant.full.fused != nil)
					}
					if fused.full.fused == nil {
						continue
					}
					useFused = false
					passes, err := Compile(&d)
					useFused = true
					if err != nil {
						t.Fatal(err)
					}
					tested++
					n := spanElems(d.Dims, d.SrcStrides)
					src := fill(r, d.SrcDT, n, 4)
					// The first row (of the first normalized dim's run)
					// zeros, and a NaN in the last element.
					for i := range min(n, d.Dims[len(d.Dims)-1]) {
						dtypes.StoreF32(d.SrcDT, src, i, 0)
					}
					if ci%4 == 0 {
						dtypes.StoreF32(d.SrcDT, src, n-1, float32(math.NaN()))
					}
					gamma, beta, bins := fillOperands(r, &d)
					for _, v := range []float32{1e-5, 0, 0.5} {
						eps := make([]byte, d.EpsDT.Size())
						dtypes.StoreF32(d.EpsDT, eps, 0, v)
						out := func(p *Program) []byte {
							dst := make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
							if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta, Eps: eps, Bins: bins}); err != nil {
								t.Fatalf("%s: Run: %v", c.name, err)
							}
							return dst
						}
						got, pass := out(fused), out(passes)
						ref := d
						ref.Epsilon = dtypes.LoadF32(d.EpsDT, eps, 0)
						want := reference(&ref, src, gamma, beta, bins)
						for i, w := range want {
							g := float64(dtypes.LoadF32(d.DstDT, got, int64(i)))
							pv := float64(dtypes.LoadF32(d.DstDT, pass, int64(i)))
							if math.IsNaN(g) != math.IsNaN(pv) || math.IsNaN(g) != math.IsNaN(w) ||
								!math.IsNaN(w) && (math.Abs(g-w) > tolerance(&d, w) || math.Abs(g-pv) > 2*tolerance(&d, w)) {
								t.Fatalf("%s (eps %v of %v, added %v): element %d is %g, the passes give %g, float64 %g",
									c.name, v, d.EpsDT, added, i, g, pv, w)
							}
						}
					}
				}
			}
			if tested < 20 {
				t.Errorf("%d cases took the fused kernel", tested)
			}
		})
	}
}
