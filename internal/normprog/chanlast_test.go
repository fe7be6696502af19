package normprog

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// chanLastCase is a GroupNorm of NHWC data [N, C, H, W] with its data's
// centre per image (0: data around 0, where a block's statistics take one
// sweep; 1e4 with spread 1: the sweeps of deviations from a rounded mean).
type chanLastCase struct {
	name    string
	d       Desc
	centres []float64 // per image, cycled
	spread  float64
	tol     float64 // relative to 1 + |want| (an s8 dst: 1)
	passTol float64 // the passes' (0: 2 tol)
	eps1    bool    // a run-time epsilon of 1e-3
}

func nhwcGroupNorm(n, c, h, w, g int64, src, dst dtypes.DataType) Desc {
	s := []int64{h * w * c, 1, w * c, c}
	return Desc{Kind: GroupNorm, SrcDT: src, DstDT: dst, Dims: []int64{n, c, h, w}, Norm: []bool{false, false, true, true},
		SrcStrides: s, DstStrides: append([]int64(nil), s...), Epsilon: 1e-5, Groups: g, ChanDim: 1}
}

func chanLastCases() []chanLastCase {
	perChan := func(dt dtypes.DataType) *Operand { return &Operand{DT: dt, Strides: []int64{0, 1, 0, 0}} }
	stat := &Operand{DT: dtypes.F32, Strides: []int64{8, 1, 0, 0, 0}} // [N, G] over the split dims
	var out []chanLastCase
	// Three blocks per image, the last shorter; gamma, beta, kept stats.
	a := nhwcGroupNorm(3, 64, 40, 60, 8, dtypes.F32, dtypes.F32)
	a.Gamma, a.Beta, a.Mean, a.Var = perChan(dtypes.F32), perChan(dtypes.F32), stat, stat
	out = append(out, chanLastCase{name: "f32 around 0", d: a, centres: []float64{0}, spread: 3, tol: 2e-5})
	out = append(out, chanLastCase{name: "f32 around 1e4", d: a, centres: []float64{1e4}, spread: 1, tol: 5e-6, passTol: 1e-2})
	out = append(out, chanLastCase{name: "f32 images around 0 and 1e4", d: a, centres: []float64{0, 1e4}, spread: 1, tol: 5e-6, passTol: 1e-2})
	// A binary operand per element, one per channel, a ReLU; bf16 data,
	// groups of 3 channels, the run-time epsilon.
	b := nhwcGroupNorm(2, 96, 17, 13, 32, dtypes.BF16, dtypes.BF16)
	b.Gamma = perChan(dtypes.BF16)
	b.EpsDT = dtypes.F32
	b.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: append([]int64(nil), b.SrcStrides...)},
		{Kind: ops.Multiply, BinDT: dtypes.BF16, BinStrides: []int64{0, 1, 0, 0}}, {Kind: ops.ReLU}}
	out = append(out, chanLastCase{name: "bf16 post-ops", d: b, centres: []float64{0, 5}, spread: 2, tol: 2e-2, eps1: true})
	// One pixel block whole; into s8.
	c := nhwcGroupNorm(5, 40, 3, 5, 4, dtypes.F32, dtypes.S8)
	c.PostOps = []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{0, 0, 0, 0}}}
	out = append(out, chanLastCase{name: "f32 into s8", d: c, centres: []float64{2}, spread: 1})
	// Images of one pixel: a group is its channels alone.
	e := nhwcGroupNorm(6, 48, 1, 1, 6, dtypes.F32, dtypes.F32)
	e.Beta = perChan(dtypes.F16)
	out = append(out, chanLastCase{name: "one pixel", d: e, centres: []float64{1, -3}, spread: 2, tol: 2e-5})
	return out
}

// TestGroupNormChannelsLast runs each case on every ISA cap through the
// channels-last kernels: against the float64 reference, the passes,
// with guard pages after and before every buffer, bit for bit the same
// on 1, 2 and 3 threads, and in place.
func TestGroupNormChannelsLast(t *testing.T) {
	eachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(31, uint64(isa)))
		for _, c := range chanLastCases() {
			d := &c.d
			p, err := Compile(d)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if p.cl == nil {
				t.Fatalf("%s: not run as channels last", c.name)
			}
			if isa != jit.None && p.Why() != "" {
				t.Errorf("%s: runs in the interpreter on %v: %s", c.name, isa, p.Why())
			}
			useFused = false
			passes, err := Compile(d)
			useFused = true
			if err != nil || passes.cl != nil {
				t.Fatalf("%s: the passes: %v", c.name, err)
			}
			img := d.Dims[1] * d.Dims[2] * d.Dims[3]
			src := make([]byte, 0, d.Dims[0]*img*int64(d.SrcDT.Size()))
			for i := range d.Dims[0] {
				src = append(src, fillAround(r, d.SrcDT, img, c.centres[int(i)%len(c.centres)], c.spread)...)
			}
			gamma, beta, bins := fillOperands(r, d)
			var eps []byte
			if c.eps1 {
				eps = make([]byte, 4)
				dtypes.StoreF32(dtypes.F32, eps, 0, 1e-3)
			}
			run := func(p *Program, threads int, fenced bool) (dst, mean, vr []byte) {
				prev := jit.SetThreads(threads)
				defer jit.SetThreads(prev)
				b := Buffers{Src: src, Dst: make([]byte, int64(len(src))/int64(d.SrcDT.Size())*int64(d.DstDT.Size())),
					Gamma: gamma, Beta: beta, Bins: bins, Eps: eps}
				if d.Mean != nil {
					b.Mean, b.Var = make([]byte, 4*d.Dims[0]*d.Groups), make([]byte, 4*d.Dims[0]*d.Groups)
				}
				if fenced {
					f := kerneltest.NewFence(t, threads != 2)
					defer f.Free()
					b = Buffers{Src: f.Place(b.Src), Dst: f.Place(b.Dst), Gamma: f.Place(b.Gamma), Beta: f.Place(b.Beta),
						Bins: f.PlaceEach(b.Bins), Eps: f.Place(b.Eps), Mean: f.Place(b.Mean), Var: f.Place(b.Var)}
				}
				if err := p.Run(b); err != nil {
					t.Fatalf("%s on %v, %d threads: %v", c.name, isa, threads, err)
				}
				return bytes.Clone(b.Dst), bytes.Clone(b.Mean), bytes.Clone(b.Var)
			}
			dst, mean, vr := run(p, 1, true)
			for _, th := range []int{2, 3} {
				d2, m2, v2 := run(p, th, true)
				if !bytes.Equal(d2, dst) || !bytes.Equal(m2, mean) || !bytes.Equal(v2, vr) {
					t.Errorf("%s on %v: %d threads differ from 1", c.name, isa, th)
				}
			}
			if d.SrcDT == d.DstDT {
				// In place, each block copied before its map.
				in := bytes.Clone(src)
				b := Buffers{Src: in, Dst: in, Gamma: gamma, Beta: beta, Bins: bins, Eps: eps}
				if d.Mean != nil {
					b.Mean, b.Var = make([]byte, len(mean)), make([]byte, len(vr))
				}
				prev := jit.SetThreads(2)
				err := p.Run(b)
				jit.SetThreads(prev)
				if err != nil || !bytes.Equal(in, dst) {
					t.Errorf("%s on %v: in place differs from out of place (%v)", c.name, isa, err)
				}
			}
			refDesc := p.d
			if c.eps1 {
				refDesc.Epsilon, refDesc.EpsDT = 1e-3, dtypes.Undef
			}
			want := reference(&refDesc, src, gamma, beta, bins)
			pdst, pmean, pvr := run(passes, 2, false)
			for i, w := range want {
				got := float64(dtypes.LoadF32(d.DstDT, dst, int64(i)))
				pg := float64(dtypes.LoadF32(d.DstDT, pdst, int64(i)))
				tol := c.tol * (1 + math.Abs(w))
				if d.DstDT == dtypes.S8 {
					tol = 1
				}
				ptol := 2 * tol
				if c.passTol > 0 {
					ptol = c.passTol * (1 + math.Abs(w))
				}
				if math.Abs(got-w) > tol || math.Abs(pg-w) > ptol {
					t.Fatalf("%s on %v: dst[%d] = %v, want %v (the passes %v)", c.name, isa, i, got, w, pg)
				}
			}
			if d.Mean != nil {
				wm, wv := chanLastStats(d, src)
				for i := range wm {
					gm, gv := float64(dtypes.LoadF32(dtypes.F32, mean, int64(i))), float64(dtypes.LoadF32(dtypes.F32, vr, int64(i)))
					pm, pv := float64(dtypes.LoadF32(dtypes.F32, pmean, int64(i))), float64(dtypes.LoadF32(dtypes.F32, pvr, int64(i)))
					if math.Abs(gm-wm[i]) > 4e-6*(1+math.Abs(wm[i])) || math.Abs(gv-wv[i]) > 1e-4*wv[i] ||
						math.Abs(pm-wm[i]) > 4e-6*(1+math.Abs(wm[i])) {
						t.Fatalf("%s on %v: stats %d are %v, %v; want %v, %v (the passes %v, %v)", c.name, isa, i, gm, gv, wm[i], wv[i], pm, pv)
					}
				}
			}
		}
	})
}

// chanLastStats is each image and group's mean and variance of NHWC d's
// src, in float64.
func chanLastStats(d *Desc, src []byte) (mean, vr []float64) {
	n, c, px, g := d.Dims[0], d.Dims[1], d.Dims[2]*d.Dims[3], d.Groups
	per := c / g
	for in := range n {
		for gi := range g {
			var xs []float64
			for p := range px {
				for ch := gi * per; ch < (gi+1)*per; ch++ {
					xs = append(xs, float64(dtypes.LoadF32(d.SrcDT, src, (in*px+p)*c+ch)))
				}
			}
			m, v := 0.0, 0.0
			for _, x := range xs {
				m += x / float64(len(xs))
			}
			for _, x := range xs {
				v += (x - m) * (x - m) / float64(len(xs))
			}
			mean, vr = append(mean, m), append(vr, v)
		}
	}
	return mean, vr
}

// TestGroupNormChannelsLastFallsBack: descriptions the channels-last
// kernels do not take run as the passes, and correctly.
func TestGroupNormChannelsLastFallsBack(t *testing.T) {
	perPixel := nhwcGroupNorm(2, 16, 5, 7, 4, dtypes.F32, dtypes.F32)
	perPixel.Gamma = &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 16 * 7, 16}}
	manyBins := nhwcGroupNorm(2, 16, 5, 7, 4, dtypes.F32, dtypes.F32)
	for range 4 {
		manyBins.PostOps = append(manyBins.PostOps, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, 1, 0, 0}})
	}
	nchw := nhwcGroupNorm(2, 16, 5, 7, 4, dtypes.F32, dtypes.F32)
	nchw.SrcStrides = []int64{16 * 35, 35, 7, 1}
	for name, d := range map[string]Desc{"gamma per pixel": perPixel, "four binary operands": manyBins, "NCHW src": nchw} {
		t.Run(name, func(t *testing.T) {
			p, err := Compile(&d)
			if err != nil {
				t.Fatal(err)
			}
			if p.cl != nil {
				t.Fatalf("runs as channels last")
			}
			r := rand.New(rand.NewPCG(32, 33))
			src := fill(r, d.SrcDT, spanElems(d.Dims, d.SrcStrides), 3)
			gamma, beta, bins := fillOperands(r, &d)
			dst := make([]byte, 4*spanElems(d.Dims, d.DstStrides))
			if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins}); err != nil {
				t.Fatal(err)
			}
			for i, w := range reference(&p.d, src, gamma, beta, bins) {
				if got := float64(dtypes.LoadF32(dtypes.F32, dst, int64(i))); math.Abs(got-w) > 1e-4*(1+math.Abs(w)) {
					t.Fatalf("dst[%d] = %v, want %v", i, got, w)
				}
			}
		})
	}
}

// TestChannelsLastBlocks: the cases above cut images into blocks, the
// last one shorter.
func TestChannelsLastBlocks(t *testing.T) {
	d := chanLastCases()[0].d
	p, err := Compile(&d)
	if err != nil || p.cl == nil {
		t.Fatalf("not channels last: %v", err)
	}
	if p.cl.blocks < 3 || p.cl.last == nil {
		t.Errorf("%d blocks of %d pixels, last %v: want several, the last shorter", p.cl.blocks, p.cl.block, p.cl.last != nil)
	}
}
