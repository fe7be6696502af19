package normprog

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// isas are the ISAs this machine runs, the interpreter included; in
// -short runs (CI's arm64 run under qemu) the interpreter only where no
// JIT ISA runs. Its programs are the same Go code on every host, which
// the README's test command runs whole.
func isas() []jit.ISA {
	var out []jit.ISA
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.NEON, jit.None} {
		prev := jit.SetMaxISA(isa)
		if jit.EffectiveISA() == isa && (isa != jit.None || len(out) == 0 || !testing.Short()) {
			out = append(out, isa)
		}
		jit.SetMaxISA(prev)
	}
	return out
}

// tcase is one normalization to test: its Desc (strides filled in by
// layout) and its data.
type tcase struct {
	name string
	d    Desc
}

// denseStrides are row-major strides over dims permuted by perm
// (perm[0] outermost).
func denseStrides(dims []int64, perm []int) []int64 {
	s := make([]int64, len(dims))
	n := int64(1)
	for k := len(perm) - 1; k >= 0; k-- {
		s[perm[k]] = n
		n *= dims[perm[k]]
	}
	return s
}

func identity(r int) []int {
	p := make([]int, r)
	for i := range p {
		p[i] = i
	}
	return p
}

func reversed(r int) []int {
	p := make([]int, r)
	for i := range p {
		p[i] = r - 1 - i
	}
	return p
}

// cases builds the descriptions: every kind over innermost, outer and
// several normalized dims, plain and transposed layouts, chunked and
// not, with and without gamma, beta and post-ops.
func cases() []tcase {
	type shape struct {
		dims []int64
		norm []bool
	}
	shapes := []shape{
		{[]int64{7, 33}, []bool{false, true}},
		{[]int64{3, 5, 17}, []bool{false, true, false}}, // softmax over channels
		{[]int64{2, 3, 4, 9}, []bool{false, false, true, true}},
		{[]int64{300, 1000}, []bool{false, true}}, // chunked: 300 rows of 4 KB
		{[]int64{1, 40}, []bool{false, true}},
		{[]int64{64}, []bool{true}},
	}
	var out []tcase
	for _, k := range []Kind{Softmax, LogSoftmax, LayerNorm, RMSNorm, L2Norm, L1Norm} {
		for si, sh := range shapes {
			for _, dts := range [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32}, {dtypes.F32, dtypes.BF16}} {
				for li, perm := range [][]int{identity(len(sh.dims)), reversed(len(sh.dims))} {
					d := Desc{Kind: k, SrcDT: dts[0], DstDT: dts[1], Dims: sh.dims, Norm: sh.norm,
						SrcStrides: denseStrides(sh.dims, perm), DstStrides: denseStrides(sh.dims, identity(len(sh.dims)))}
					if k == LayerNorm || k == RMSNorm || k == L2Norm || k == L1Norm {
						d.Epsilon = 1e-5
					}
					if (k == LayerNorm || k == RMSNorm) && si%2 == 0 {
						// gamma and beta per element of the normalized dims.
						s := denseStrides(sh.dims, identity(len(sh.dims)))
						gs := make([]int64, len(s))
						n := int64(1)
						for i := len(s) - 1; i >= 0; i-- {
							if sh.norm[i] {
								gs[i] = n
								n *= sh.dims[i]
							}
						}
						d.Gamma = &Operand{DT: dtypes.F32, Strides: gs}
						d.Beta = &Operand{DT: dts[0], Strides: gs}
					}
					if li == 1 && si%3 == 1 {
						// A per-row binary Add, then ReLU.
						bs := make([]int64, len(sh.dims))
						n := int64(1)
						for i := len(bs) - 1; i >= 0; i-- {
							if !sh.norm[i] {
								bs[i] = n
								n *= sh.dims[i]
							}
						}
						d.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: bs}, {Kind: ops.ReLU}}
					}
					out = append(out, tcase{fmt.Sprintf("%s/%v/%v:%v/l%d", k, sh.dims, dts[0], dts[1], li), d})
				}
			}
		}
	}
	return out
}

// fill returns a buffer of n elements of dt over [-lim, lim), with a
// few exact ties and large values.
func fill(r *rand.Rand, dt dtypes.DataType, n int64, lim float64) []byte {
	b := make([]byte, n*int64(dt.Size()))
	for i := int64(0); i < n; i++ {
		v := (r.Float64()*2 - 1) * lim
		if r.IntN(50) == 0 {
			v = math.Round(v)
		}
		dtypes.StoreF32(dt, b, i, float32(v))
	}
	return b
}

func spanElems(dims, strides []int64) int64 { return span(dims, strides, 1) }

// reference computes d over the given buffers in float64, post-ops in
// float64, each result rounded once to dst's type.
func reference(d *Desc, src, gamma, beta []byte, bins [][]byte) []float64 {
	r := len(d.Dims)
	total := int64(1)
	for _, n := range d.Dims {
		total *= n
	}
	out := make([]float64, spanElems(d.Dims, d.DstStrides))
	// Walk every row (an index over the kept dims), and within it every
	// element (an index over the normalized dims).
	var kept, normd []int
	for i := 0; i < r; i++ {
		if d.Norm[i] {
			normd = append(normd, i)
		} else {
			kept = append(kept, i)
		}
	}
	idx := make([]int64, r)
	each := func(dims []int, f func()) {
		var rec func(k int)
		rec = func(k int) {
			if k == len(dims) {
				f()
				return
			}
			for v := int64(0); v < d.Dims[dims[k]]; v++ {
				idx[dims[k]] = v
				rec(k + 1)
			}
		}
		rec(0)
	}
	off := func(strides []int64) int64 {
		o := int64(0)
		for i, v := range idx {
			o += v * strides[i]
		}
		return o
	}
	each(kept, func() {
		var xs []float64
		each(normd, func() { xs = append(xs, float64(dtypes.LoadF32(d.SrcDT, src, off(d.SrcStrides)))) })
		n := float64(len(xs))
		m, s, mean, ss, sa := math.Inf(-1), 0.0, 0.0, 0.0, 0.0
		for _, x := range xs {
			sa += math.Abs(x)
			if x > m || math.IsNaN(x) {
				m = x
			}
			mean += x / n
			ss += x * x
		}
		for _, x := range xs {
			s += math.Exp(x - m)
		}
		v := 0.0
		for _, x := range xs {
			v += (x - mean) * (x - mean) / n
		}
		k := 0
		each(normd, func() {
			x := xs[k]
			k++
			var y float64
			switch d.Kind {
			case Softmax:
				y = math.Exp(x-m) / s
			case LogSoftmax:
				y = x - m - math.Log(s)
			case LayerNorm:
				y = (x - mean) / math.Sqrt(v+float64(d.Epsilon))
			case RMSNorm:
				y = x / math.Sqrt(ss/n+float64(d.Epsilon))
			case L2Norm:
				y = x / math.Max(math.Sqrt(ss), float64(d.Epsilon))
				if d.EpsAdded {
					y = x / (math.Sqrt(ss) + float64(d.Epsilon))
				}
			case L1Norm:
				y = x / math.Max(sa, float64(d.Epsilon))
			}
			if d.Gamma != nil {
				y *= float64(dtypes.LoadF32(d.Gamma.DT, gamma, off(d.Gamma.Strides)))
			}
			if d.Beta != nil {
				y += float64(dtypes.LoadF32(d.Beta.DT, beta, off(d.Beta.Strides)))
			}
			nb := 0
			for _, op := range d.PostOps {
				switch op.Kind {
				case ops.Add:
					y += float64(dtypes.LoadF32(op.BinDT, bins[nb], off(op.BinStrides)))
					nb++
				case ops.Divide:
					y /= float64(dtypes.LoadF32(op.BinDT, bins[nb], off(op.BinStrides)))
					nb++
				case ops.Multiply:
					y *= float64(dtypes.LoadF32(op.BinDT, bins[nb], off(op.BinStrides)))
					nb++
				case ops.ReLU:
					y = math.Max(y, 0)
				case ops.GELUErf:
					y = 0.5 * y * (1 + math.Erf(y/math.Sqrt2))
				}
			}
			out[off(d.DstStrides)] = y
		})
	})
	return out
}

// tolerance is how far a result may be from the float64 reference: a
// few f32 ulps of the statistics, and half an ulp of a 16-bit dst.
func tolerance(d *Desc, want float64) float64 {
	rel := 2e-6
	switch d.DstDT {
	case dtypes.BF16:
		rel += 1.0 / 256
	case dtypes.F16:
		rel += 1.0 / 2048
	}
	abs := 1e-6
	if d.Kind == LogSoftmax {
		abs = 4e-6 // x - max - log(sum) cancels: ulps of the terms, not of the result
	}
	return rel*math.Abs(want) + abs
}

func TestProgramsAgainstFloat64(t *testing.T) {
	for _, isa := range isas() {
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			r := rand.New(rand.NewPCG(1, uint64(isa)))
			for _, c := range cases() {
				d := &c.d
				p, err := Compile(d)
				if err != nil {
					t.Fatalf("%s: Compile: %v", c.name, err)
				}
				if isa != jit.None && p.Why() != "" {
					t.Errorf("%s: runs in the interpreter on %v: %s", c.name, isa, p.Why())
				}
				lim := 4.0
				if d.Kind == Softmax || d.Kind == LogSoftmax {
					lim = 30
				}
				src := fill(r, d.SrcDT, spanElems(d.Dims, d.SrcStrides), lim)
				gamma, beta, bins := fillOperands(r, d)
				dst := make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
				if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins}); err != nil {
					t.Fatalf("%s: Run: %v", c.name, err)
				}
				want := reference(d, src, gamma, beta, bins)
				bad := 0
				for i, w := range want {
					got := float64(dtypes.LoadF32(d.DstDT, dst, int64(i)))
					if math.Abs(got-w) > tolerance(d, w) || math.IsNaN(got) != math.IsNaN(w) {
						if bad < 3 {
							t.Errorf("%s on %v: element %d is %g, want %g", c.name, p.Impl(), i, got, w)
						}
						bad++
					}
				}
				if bad > 0 {
					t.Errorf("%s: %d of %d elements wrong", c.name, bad, len(want))
				}
			}
		})
	}
}

// TestSoftmaxInfinities: -Inf entries give exact 0s, an all -Inf row
// NaN, and a row of 1000s is fine.
func TestSoftmaxInfinities(t *testing.T) {
	rows := [][]float32{
		{float32(math.Inf(-1)), 0, 1, float32(math.Inf(-1))},
		{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))},
		{1000, 1000, 1000, 1000},
	}
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		d := &Desc{Kind: Softmax, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{3, 4}, Norm: []bool{false, true},
			SrcStrides: []int64{4, 1}, DstStrides: []int64{4, 1}}
		p, err := Compile(d)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, 48)
		for i, row := range rows {
			for j, v := range row {
				dtypes.StoreF32(dtypes.F32, src, int64(4*i+j), v)
			}
		}
		dst := make([]byte, 48)
		if err := p.Run(Buffers{Src: src, Dst: dst}); err != nil {
			t.Fatal(err)
		}
		got := func(i int64) float32 { return dtypes.LoadF32(dtypes.F32, dst, i) }
		if got(0) != 0 || got(3) != 0 || got(1)+got(2) < 0.999999 {
			t.Errorf("%v: row with -Inf gives %v %v %v %v", isa, got(0), got(1), got(2), got(3))
		}
		for j := int64(4); j < 8; j++ {
			if !math.IsNaN(float64(got(j))) {
				t.Errorf("%v: all -Inf row gives %v at %d, want NaN", isa, got(j), j)
			}
		}
		for j := int64(8); j < 12; j++ {
			if got(j) != 0.25 {
				t.Errorf("%v: row of 1000s gives %v at %d, want 0.25", isa, got(j), j)
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestLayerNormNoCancellation: data of mean 1e4 and spread 1 keeps f32
// accuracy.
func TestLayerNormNoCancellation(t *testing.T) {
	d := &Desc{Kind: LayerNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{4, 512}, Norm: []bool{false, true},
		SrcStrides: []int64{512, 1}, DstStrides: []int64{512, 1}, Epsilon: 1e-5}
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 4*512*4)
	for i := int64(0); i < 4*512; i++ {
		dtypes.StoreF32(dtypes.F32, src, i, float32(1e4+r.NormFloat64()))
	}
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		p, err := Compile(d)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(src))
		if err := p.Run(Buffers{Src: src, Dst: dst}); err != nil {
			t.Fatal(err)
		}
		want := reference(d, src, nil, nil, nil)
		for i, w := range want {
			if got := float64(dtypes.LoadF32(dtypes.F32, dst, int64(i))); math.Abs(got-w) > 1e-3 {
				t.Fatalf("%v: element %d is %g, want %g", isa, i, got, w)
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestThreadCountBitIdentity: results do not depend on the thread count.
func TestThreadCountBitIdentity(t *testing.T) {
	d := &Desc{Kind: Softmax, SrcDT: dtypes.BF16, DstDT: dtypes.BF16, Dims: []int64{1000, 700}, Norm: []bool{false, true},
		SrcStrides: []int64{700, 1}, DstStrides: []int64{700, 1}}
	p, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	if p.nChunks < 4 {
		t.Fatalf("%d chunks: the test wants several", p.nChunks)
	}
	src := fill(rand.New(rand.NewPCG(5, 6)), dtypes.BF16, 700000, 20)
	var first []byte
	for _, n := range []int{1, 2, 3, 8} {
		prev := jit.SetThreads(n)
		dst := make([]byte, len(src))
		if err := p.Run(Buffers{Src: src, Dst: dst}); err != nil {
			t.Fatal(err)
		}
		jit.SetThreads(prev)
		if first == nil {
			first = dst
			continue
		}
		for i := range dst {
			if dst[i] != first[i] {
				t.Fatalf("%d threads: byte %d differs from 1 thread's", n, i)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	ok := func() *Desc {
		return &Desc{Kind: LayerNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2, 8}, Norm: []bool{false, true},
			SrcStrides: []int64{8, 1}, DstStrides: []int64{8, 1}, Epsilon: 1e-5}
	}
	// withStats makes the description a softmax that keeps stats of dt
	// with strides.
	withStats := func(dt dtypes.DataType, strides ...int64) func(d *Desc) {
		return func(d *Desc) { d.Kind, d.Epsilon, d.Stats = Softmax, 0, &Operand{DT: dt, Strides: strides} }
	}
	cases := []struct {
		name string
		mod  func(d *Desc)
		want status.Status
	}{
		{"unknown kind", func(d *Desc) { d.Kind = 0 }, status.InvalidArguments},
		{"s8 src", func(d *Desc) { d.SrcDT = dtypes.S8 }, status.Unimplemented},
		{"rank 0", func(d *Desc) { d.Dims, d.SrcStrides, d.DstStrides, d.Norm = nil, nil, nil, nil }, status.InvalidArguments},
		{"strides short", func(d *Desc) { d.SrcStrides = d.SrcStrides[:1] }, status.InvalidArguments},
		{"negative dim", func(d *Desc) { d.Dims = []int64{-1, 8} }, status.InvalidArguments},
		{"negative stride", func(d *Desc) { d.DstStrides = []int64{-8, 1} }, status.InvalidArguments},
		{"no normalized dim", func(d *Desc) { d.Norm = []bool{false, false} }, status.InvalidArguments},
		{"NaN epsilon", func(d *Desc) { d.Epsilon = float32(math.NaN()) }, status.InvalidArguments},
		{"negative epsilon", func(d *Desc) { d.Epsilon = -1 }, status.InvalidArguments},
		{"gamma of softmax", func(d *Desc) { d.Kind = Softmax; d.Gamma = &Operand{DT: dtypes.F32, Strides: []int64{0, 1}} }, status.InvalidArguments},
		{"gamma strides", func(d *Desc) { d.Gamma = &Operand{DT: dtypes.F32, Strides: []int64{1}} }, status.InvalidArguments},
		{"gamma s8", func(d *Desc) { d.Gamma = &Operand{DT: dtypes.S8, Strides: []int64{0, 1}} }, status.Unimplemented},
		{"stats of a layer norm", func(d *Desc) { d.Stats = &Operand{DT: dtypes.F32, Strides: []int64{1, 0}} }, status.InvalidArguments},
		{"stats bf16", withStats(dtypes.BF16, 1, 0), status.InvalidArguments},
		{"stats strides", withStats(dtypes.F32, 1), status.InvalidArguments},
		{"stats negative stride", withStats(dtypes.F32, -1, 0), status.InvalidArguments},
		{"stats along the row", withStats(dtypes.F32, 8, 1), status.InvalidArguments},
		{"post-op strides", func(d *Desc) {
			d.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{1}}}
		}, status.InvalidArguments},
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
	if _, err := Compile(nil); err == nil {
		t.Error("Compile(nil) succeeds")
	}

	p, err := Compile(ok())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	wide := make([]byte, 128)
	runs := []struct {
		name          string
		src, dst      []byte
		bins          [][]byte
		wantSubstring string
	}{
		{"short src", buf[:60], make([]byte, 64), nil, "src buffer"},
		{"short dst", buf, make([]byte, 8), nil, "dst buffer"},
		{"extra operand", buf, make([]byte, 64), [][]byte{buf}, "operand"},
		{"dst is src shifted", wide[:64], wide[4:], nil, "dst overlaps src without being src itself"},
	}
	for _, c := range runs {
		err := p.Run(Buffers{Src: c.src, Dst: c.dst, Bins: c.bins})
		var e *status.Error
		if !errors.As(err, &e) || e.Status != status.InvalidArguments || !strings.Contains(err.Error(), c.wantSubstring) {
			t.Errorf("%s: Run gives %v, want InvalidArguments naming %q", c.name, err, c.wantSubstring)
		}
	}
	sm := ok()
	sm.Kind, sm.Epsilon, sm.Stats = Softmax, 0, &Operand{DT: dtypes.F32, Strides: []int64{1, 0}}
	if p, err = Compile(sm); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(Buffers{Src: buf, Dst: make([]byte, 64), Stats: make([]byte, 4)}); !errors.Is(err, status.InvalidArguments) ||
		!strings.Contains(err.Error(), "stats buffer holds 4 bytes") {
		t.Errorf("short stats: Run gives %v", err)
	}
	var nilp *Program
	if err := nilp.Run(Buffers{Src: buf, Dst: buf}); err == nil {
		t.Error("Run of a nil program succeeds")
	}
}

// ownKernels reports whether p runs kernels of its own (a fused kernel,
// or GroupNorm's on channels last), not the passes.
func ownKernels(p *Program) bool { return p.cl != nil || p.full.fused != nil }
