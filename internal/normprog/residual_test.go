package normprog

import (
	"bytes"
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

// residualCase is a LayerNorm or RMSNorm of x + skip [+ bias].
func residualCase(k Kind, dims []int64, nNorm int, xDT, sumDT, dstDT dtypes.DataType, bias, keep, transposed bool) *Desc {
	r := len(dims)
	norm := make([]bool, r)
	for i := r - nNorm; i < r; i++ {
		norm[i] = true
	}
	rowMajor := denseStrides(dims, identity(r))
	xs := rowMajor
	if transposed {
		xs = denseStrides(dims, reversed(r))
	}
	d := &Desc{Kind: k, SrcDT: sumDT, DstDT: dstDT, Dims: dims, Norm: norm, Epsilon: 1e-5,
		SrcStrides: rowMajor, DstStrides: rowMajor,
		Residual: &Residual{X: Operand{DT: xDT, Strides: xs}, Skip: Operand{DT: xDT, Strides: rowMajor}, KeepSum: keep}}
	// gamma and the bias per element of the normalized dims.
	per := make([]int64, r)
	n := int64(1)
	for i := r - 1; i >= r-nNorm; i-- {
		per[i] = n
		n *= dims[i]
	}
	d.Gamma = &Operand{DT: dtypes.F32, Strides: per}
	if bias {
		d.Residual.Bias = &Operand{DT: dtypes.F32, Strides: per}
	}
	return d
}

// residualSum is x + skip [+ bias] computed as the program does: in f32,
// rounded once to the sum's type, laid out as the Desc's src.
func residualSum(d *Desc, x, skip, bias []byte) []byte {
	res := d.Residual
	sum := make([]byte, spanElems(d.Dims, d.SrcStrides)*int64(d.SrcDT.Size()))
	idx := make([]int64, len(d.Dims))
	off := func(s []int64) int64 {
		o := int64(0)
		for i, v := range idx {
			o += v * s[i]
		}
		return o
	}
	var rec func(k int)
	rec = func(k int) {
		if k == len(d.Dims) {
			v := dtypes.LoadF32(res.X.DT, x, off(res.X.Strides)) + dtypes.LoadF32(res.Skip.DT, skip, off(res.Skip.Strides))
			if res.Bias != nil {
				v += dtypes.LoadF32(res.Bias.DT, bias, off(res.Bias.Strides))
			}
			dtypes.StoreF32(d.SrcDT, sum, off(d.SrcStrides), v)
			return
		}
		for v := int64(0); v < d.Dims[k]; v++ {
			idx[k] = v
			rec(k + 1)
		}
	}
	rec(0)
	return sum
}

func TestResidualAgainstFloat64(t *testing.T) {
	type shape struct {
		dims  []int64
		nNorm int
	}
	shapes := []shape{{[]int64{7, 33}, 1}, {[]int64{2, 3, 4, 9}, 2}, {[]int64{300, 1000}, 1}, {[]int64{64}, 1}}
	for _, isa := range isas() {
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			r := rand.New(rand.NewPCG(11, uint64(isa)))
			for _, k := range []Kind{LayerNorm, RMSNorm} {
				for _, sh := range shapes {
					for _, dts := range [][3]dtypes.DataType{{dtypes.F32, dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32, dtypes.F16}} {
						for v := 0; v < 4; v++ {
							bias, keep, tr := v&1 != 0, v&2 != 0, v == 3
							d := residualCase(k, sh.dims, sh.nNorm, dts[0], dts[1], dts[2], bias, keep, tr)
							name := fmt.Sprintf("%s/%v/%v/bias=%v/keep=%v/transposed=%v", k, sh.dims, dts, bias, keep, tr)
							checkResidual(t, r, isa, name, d)
						}
					}
				}
			}
		})
	}
}

// checkResidual runs d on random data and compares the sum (bit for bit,
// where it is kept) and dst (against the float64 reference of the
// normalization of that sum).
func checkResidual(t *testing.T, r *rand.Rand, isa jit.ISA, name string, d *Desc) {
	t.Helper()
	p, err := Compile(d)
	if err != nil {
		t.Fatalf("%s: Compile: %v", name, err)
	}
	if isa != jit.None && p.Why() != "" {
		t.Errorf("%s: runs in the interpreter on %v: %s", name, isa, p.Why())
	}
	res := d.Residual
	x := fill(r, res.X.DT, spanElems(d.Dims, res.X.Strides), 3)
	skip := fill(r, res.Skip.DT, spanElems(d.Dims, res.Skip.Strides), 3)
	var bias []byte
	if res.Bias != nil {
		bias = fill(r, res.Bias.DT, spanElems(d.Dims, res.Bias.Strides), 1)
	}
	gamma := fill(r, d.Gamma.DT, spanElems(d.Dims, d.Gamma.Strides), 2)
	dst := make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
	var sum []byte
	if res.KeepSum {
		sum = make([]byte, spanElems(d.Dims, d.SrcStrides)*int64(d.SrcDT.Size()))
	}
	if err := p.Run(Buffers{Src: sum, Dst: dst, Gamma: gamma, X: x, Skip: skip, Bias: bias}); err != nil {
		t.Fatalf("%s: Run: %v", name, err)
	}
	wantSum := residualSum(d, x, skip, bias)
	if res.KeepSum && !bytes.Equal(sum, wantSum) {
		t.Errorf("%s on %v: the sum differs from x + skip [+ bias] rounded once", name, p.Impl())
	}
	want := reference(d, wantSum, gamma, nil, nil)
	bad := 0
	for i, w := range want {
		got := float64(dtypes.LoadF32(d.DstDT, dst, int64(i)))
		if math.Abs(got-w) > tolerance(d, w) || math.IsNaN(got) != math.IsNaN(w) {
			if bad < 3 {
				t.Errorf("%s on %v: element %d is %g, want %g", name, p.Impl(), i, got, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements wrong", name, bad, len(want))
	}
}

func TestResidualThreadCountBitIdentity(t *testing.T) {
	d := residualCase(RMSNorm, []int64{600, 1000}, 1, dtypes.BF16, dtypes.BF16, dtypes.BF16, true, true, false)
	p, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	if p.nChunks < 4 {
		t.Fatalf("%d chunks: the test wants several", p.nChunks)
	}
	r := rand.New(rand.NewPCG(7, 8))
	x, skip := fill(r, dtypes.BF16, 600000, 3), fill(r, dtypes.BF16, 600000, 3)
	gamma, bias := fill(r, dtypes.F32, 1000, 2), fill(r, dtypes.F32, 1000, 1)
	var first, firstSum []byte
	for _, n := range []int{1, 2, 3, 8} {
		prev := jit.SetThreads(n)
		dst, sum := make([]byte, len(x)), make([]byte, len(x))
		err := p.Run(Buffers{Src: sum, Dst: dst, Gamma: gamma, X: x, Skip: skip, Bias: bias})
		jit.SetThreads(prev)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first, firstSum = dst, sum
			continue
		}
		if !bytes.Equal(dst, first) || !bytes.Equal(sum, firstSum) {
			t.Fatalf("%d threads: the results differ from 1 thread's", n)
		}
	}
}

func TestResidualRefusals(t *testing.T) {
	ok := func() *Desc {
		return residualCase(LayerNorm, []int64{2, 8}, 1, dtypes.F32, dtypes.F32, dtypes.F32, true, true, false)
	}
	cases := []struct {
		name string
		mod  func(d *Desc)
		want status.Status
	}{
		{"softmax", func(d *Desc) { d.Kind, d.Gamma, d.Epsilon = Softmax, nil, 0 }, status.InvalidArguments},
		{"x strides short", func(d *Desc) { d.Residual.X.Strides = []int64{1} }, status.InvalidArguments},
		{"skip negative stride", func(d *Desc) { d.Residual.Skip.Strides = []int64{-8, 1} }, status.InvalidArguments},
		{"bias s8", func(d *Desc) { d.Residual.Bias.DT = dtypes.S8 }, status.Unimplemented},
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
	p, err := Compile(ok())
	if err != nil {
		t.Fatal(err)
	}
	buf := func() []byte { return make([]byte, 64) }
	gamma := make([]byte, 32)
	x := buf()
	wide := make([]byte, 128)
	runs := []struct {
		name, want string
		b          Buffers
	}{
		{"short x", "residual x buffer", Buffers{Src: buf(), Dst: buf(), Gamma: gamma, X: x[:60], Skip: buf(), Bias: gamma}},
		{"short bias", "residual bias buffer", Buffers{Src: buf(), Dst: buf(), Gamma: gamma, X: x, Skip: buf(), Bias: gamma[:4]}},
		{"no sum", "src buffer", Buffers{Dst: buf(), Gamma: gamma, X: x, Skip: buf(), Bias: gamma}},
		{"dst is x shifted", "dst overlaps residual x without being it", Buffers{Src: buf(), Dst: wide[4:], Gamma: gamma, X: wide[:64], Skip: buf(), Bias: gamma}},
		{"sum is skip shifted", "sum overlaps residual skip without being it", Buffers{Src: wide[8:], Dst: buf(), Gamma: gamma, X: buf(), Skip: wide[:64], Bias: gamma}},
		{"dst is bias", "dst overlaps residual bias", Buffers{Src: buf(), Dst: wide[:64], Gamma: gamma, X: buf(), Skip: buf(), Bias: wide[:32]}},
		{"sum is dst", "the sum overlaps dst", Buffers{Src: x, Dst: x, Gamma: gamma, X: buf(), Skip: buf(), Bias: gamma}},
	}
	for _, c := range runs {
		err := p.Run(c.b)
		var e *status.Error
		if !errors.As(err, &e) || e.Status != status.InvalidArguments || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Run gives %v, want InvalidArguments naming %q", c.name, err, c.want)
		}
	}
}

// TestResidualFused: a residual sum before a LayerNorm or RMSNorm whose
// normalized dims are innermost runs as the fused kernel on every JIT
// ISA (with a run-time epsilon too), rows short, long and cut into
// runs; the sum it keeps is bit for bit x + skip [+ bias] rounded once,
// as the passes write it, and dst is what the passes give and the
// float64 reference of that sum gives.
func TestResidualFused(t *testing.T) {
	type shape struct {
		dims  []int64
		nNorm int
	}
	shapes := []shape{{[]int64{7, 33}, 1}, {[]int64{5, 1}, 1}, {[]int64{3, 17}, 1}, {[]int64{2, 3, 4, 9}, 2}, {[]int64{300, 1000}, 1},
		{[]int64{64}, 1}, {[]int64{2, 40009}, 1}}
	dtss := [][3]dtypes.DataType{{dtypes.F32, dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16, dtypes.BF16},
		{dtypes.F16, dtypes.F16, dtypes.F32}, {dtypes.F16, dtypes.F32, dtypes.F16}, {dtypes.F32, dtypes.BF16, dtypes.F32}}
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			r := rand.New(rand.NewPCG(17, uint64(isa)))
			// Every operand the kernel takes (x, skip, bias, gamma,
			// beta and a per-row Add) over three row loops that do not
			// merge (x's rows apart).
			d := residualCase(LayerNorm, []int64{3, 4, 5, 40}, 1, dtypes.F32, dtypes.F32, dtypes.F32, true, true, false)
			d.Residual.X.Strides = []int64{1100, 250, 48, 1}
			d.Beta = &Operand{DT: dtypes.BF16, Strides: d.Gamma.Strides}
			d.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{20, 5, 1, 0}}}
			checkResidualFused(t, r, "every operand", d)
			for _, k := range []Kind{LayerNorm, RMSNorm} {
				for si, sh := range shapes {
					for di, dts := range dtss {
						for v := range 4 {
							if sh.dims[0]*sh.dims[len(sh.dims)-1] > 10000 && v != di%4 {
								continue // the large shapes: one variant per type combination
							}
							bias, keep := v&1 != 0, v&2 != 0
							d := residualCase(k, sh.dims, sh.nNorm, dts[0], dts[1], dts[2], bias, keep, false)
							if (si+di+v)%3 == 0 {
								d.EpsDT = dtypes.F32
							}
							name := fmt.Sprintf("%s/%v/%v/bias=%v/keep=%v/eps=%v", k, sh.dims, dts, bias, keep, d.EpsDT)
							checkResidualFused(t, r, name, d)
						}
					}
				}
			}
		})
	}
}

// checkResidualFused runs d as the fused kernel and as the passes on the
// same random data and compares them, and the fused one with the float64
// reference.
func checkResidualFused(t *testing.T, r *rand.Rand, name string, d *Desc) {
	t.Helper()
	fused, err := Compile(d)
	if err != nil {
		t.Fatalf("%s: Compile: %v", name, err)
	}
	if fused.full.fused == nil {
		t.Fatalf("%s: the passes run, not the fused kernel", name)
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
	var bias []byte
	if res.Bias != nil {
		bias = fill(r, res.Bias.DT, spanElems(d.Dims, res.Bias.Strides), 1)
	}
	gamma, beta, bins := fillOperands(r, d)
	eps := f32Bytes(0.01)
	run := func(p *Program) (dst, sum []byte) {
		dst = make([]byte, spanElems(d.Dims, d.DstStrides)*int64(d.DstDT.Size()))
		if res.KeepSum {
			sum = make([]byte, spanElems(d.Dims, d.SrcStrides)*int64(d.SrcDT.Size()))
		}
		if err := p.Run(Buffers{Src: sum, Dst: dst, Gamma: gamma, Beta: beta, Bins: bins, X: x, Skip: skip, Bias: bias, Eps: eps}); err != nil {
			t.Fatalf("%s: Run: %v", name, err)
		}
		return dst, sum
	}
	got, gotSum := run(fused)
	pass, passSum := run(passes)
	wantSum := residualSum(d, x, skip, bias)
	if res.KeepSum && (!bytes.Equal(gotSum, wantSum) || !bytes.Equal(gotSum, passSum)) {
		t.Fatalf("%s: the fused kernel's sum differs from x + skip [+ bias] rounded once (passes equal: %v)",
			name, bytes.Equal(passSum, wantSum))
	}
	ref := *d
	if d.EpsDT != dtypes.Undef {
		ref.Epsilon = dtypes.LoadF32(dtypes.F32, eps, 0)
	}
	want := reference(&ref, wantSum, gamma, beta, bins)
	for i, w := range want {
		g := float64(dtypes.LoadF32(d.DstDT, got, int64(i)))
		pv := float64(dtypes.LoadF32(d.DstDT, pass, int64(i)))
		if math.IsNaN(g) || math.Abs(g-w) > tolerance(d, w) || math.Abs(g-pv) > 2*tolerance(d, w) {
			t.Fatalf("%s: element %d is %g, the passes give %g, float64 %g", name, i, g, pv, w)
		}
	}
}
