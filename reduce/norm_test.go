package reduce_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/reduce"
)

func f32Bytes(s []float32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

func u16Bytes(s []uint16) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s))
}

func denseOf(dims []int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}

func product(dims []int64) int {
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	return n
}

// TestNormCallsAgainstOracle: each normalization call, over random dims,
// axes, data types (f32 and bf16 or f16 slices), padded src strides,
// gamma, beta and statistics, matches the float64 oracle.
func TestNormCallsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	kinds := []norm.Kind{norm.Softmax, norm.LogSoftmax, norm.LayerNorm, norm.RMSNorm, norm.GroupNorm}
	n := 150
	if testing.Short() {
		// The race detector and the arm64 run under qemu: each case
		// compiles its own kernels, which cost most there.
		n = 50
	}
	for i := range n {
		k := kinds[i%len(kinds)]
		rank := 2 + r.IntN(3)
		dims := make([]int64, rank)
		for d := range dims {
			dims[d] = int64(1 + r.IntN(5))
		}
		axis := r.IntN(rank)
		groups := 1 + r.IntN(2)
		if k == norm.GroupNorm {
			axis = []int{1, rank - 1}[r.IntN(2)]
			dims[axis] *= int64(groups)
		}
		idims := make([]int, rank)
		for d := range dims {
			idims[d] = int(dims[d])
		}
		// src: f32 with padded rows, or 16-bit dense.
		p := &norm.Problem{Kind: k, Dims: dims, Axis: int64(axis), Groups: int64(groups), Eps: 1e-3, InfAsZero: r.IntN(2) == 0}
		var opts []reduce.Option
		var src16 []uint16
		var src32 []float32
		sdt := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[r.IntN(3)]
		if sdt == dtypes.F32 {
			pad := append([]int64(nil), dims...)
			pad[rank-1] += int64(r.IntN(3))
			strides := denseOf(pad)
			src32 = make([]float32, product(pad))
			for j := range src32 {
				src32[j] = float32(3 * (2*r.Float64() - 1))
			}
			is := make([]int, rank)
			for d := range is {
				is[d] = int(strides[d])
			}
			opts = append(opts, reduce.SrcStrides(is))
			p.Src = norm.Operand{DT: sdt, Strides: strides}
		} else {
			src16 = make([]uint16, product(dims))
			for j := range src16 {
				src16[j] = uint16(map[dtypes.DataType]func(float32) uint16{dtypes.BF16: dtypes.F32ToBF16, dtypes.F16: dtypes.F32ToF16}[sdt](float32(3 * (2*r.Float64() - 1))))
			}
			opts = append(opts, reduce.SrcType(sdt))
			p.Src = norm.Operand{DT: sdt, Strides: denseOf(dims)}
		}
		dst := make([]float32, product(dims))
		p.Dst = norm.Operand{DT: dtypes.F32, Strides: denseOf(dims)}
		pdims := norm.ParamDims(k, dims, axis)
		var gamma, beta []float32
		if k == norm.LayerNorm || k == norm.RMSNorm || k == norm.GroupNorm {
			gamma = make([]float32, product(pdims))
			for j := range gamma {
				gamma[j] = float32(1 + r.Float64())
			}
			p.Gamma = norm.Operand{DT: dtypes.F32, Strides: denseOf(pdims)}
			if k != norm.RMSNorm {
				beta = make([]float32, product(pdims))
				for j := range beta {
					beta[j] = float32(r.Float64())
				}
				p.Beta = norm.Operand{DT: dtypes.F32, Strides: denseOf(pdims)}
			}
		}
		var mean, variance []float32
		if k.HasStats() {
			sd := norm.StatsDims(k, dims, axis, int64(groups))
			mean, variance = make([]float32, product(sd)), make([]float32, product(sd))
			opts = append(opts, reduce.Stats(mean, variance))
			p.Mean = norm.Operand{DT: dtypes.F32, Strides: denseOf(sd)}
			p.Var = p.Mean
		}
		var lse []float32
		if k == norm.Softmax {
			opts = append(opts, reduce.InfAsZero(p.InfAsZero))
			sd := norm.StatsDims(k, dims, axis, 0)
			lse = make([]float32, product(sd))
			opts = append(opts, reduce.SoftmaxStats(lse))
			p.Stats = norm.Operand{DT: dtypes.F32, Strides: denseOf(sd)}
		} else {
			p.InfAsZero = false
		}
		var err error
		switch {
		case src32 != nil:
			err = call(k, dst, src32, gamma, beta, idims, axis, groups, opts)
		default:
			err = call(k, dst, src16, gamma, beta, idims, axis, groups, opts)
		}
		if err != nil {
			t.Fatalf("%v dims %v axis %d: %v", k, dims, axis, err)
		}
		b := norm.Buffers{Src: f32Bytes(src32), Dst: f32Bytes(dst), Gamma: f32Bytes(gamma), Beta: f32Bytes(beta)}
		if src16 != nil {
			b.Src = u16Bytes(src16)
		}
		want := oracle.Norm(p, b)
		for off, w := range want.Dst {
			if got := float64(dst[off]); math.Abs(got-w) > oracle.NormTolerance(dtypes.F32, w, want.Bound[off]) {
				t.Fatalf("%v dims %v axis %d src %v: dst[%d] = %v, want %v", k, dims, axis, sdt, off, got, w)
			}
		}
		for off, w := range want.Mean {
			if got := float64(mean[off]); math.Abs(got-w) > oracle.NormStatTolerance(w) {
				t.Fatalf("%v: mean[%d] = %v, want %v", k, off, got, w)
			}
		}
		for off, w := range want.Stats {
			if got := float64(lse[off]); math.IsNaN(got) != math.IsNaN(w) || math.Abs(got-w) > oracle.NormStatTolerance(w) {
				t.Fatalf("%v dims %v axis %d: stats[%d] = %v, want %v", k, dims, axis, off, got, w)
			}
		}
		if k == norm.Softmax && len(want.Stats) != len(lse) {
			t.Fatalf("%v dims %v: the oracle gives %d stats for %d rows", k, dims, len(want.Stats), len(lse))
		}
	}
}

func call[S reduce.Float](k norm.Kind, dst []float32, src []S, gamma, beta []float32, dims []int, axis, groups int, opts []reduce.Option) error {
	switch k {
	case norm.Softmax:
		return reduce.Softmax(dst, src, dims, axis, opts...)
	case norm.LogSoftmax:
		return reduce.LogSoftmax(dst, src, dims, axis-len(dims), opts...)
	case norm.LayerNorm:
		return reduce.LayerNorm(dst, src, gamma, beta, dims, axis, 1e-3, opts...)
	case norm.RMSNorm:
		return reduce.RMSNorm(dst, src, gamma, dims, axis, 1e-3, opts...)
	}
	return reduce.GroupNorm(dst, src, gamma, beta, dims, groups, axis, 1e-3, opts...)
}

// TestNormCallErrors: hostile calls get an error with a status naming
// the call and the bad value, never a panic.
func TestNormCallErrors(t *testing.T) {
	x := make([]float32, 24)
	y := make([]float32, 24)
	g6 := make([]float32, 6)
	x16 := make([]uint16, 24)
	wide := make([]float32, 28)
	dims := []int{2, 3, 4}
	cases := []struct {
		name string
		err  error
		st   error
		msg  string
	}{
		{"gamma of the wrong size", reduce.LayerNorm(y, x, g6, nil, dims, -1, 1e-5), graph.InvalidShape,
			"reduce.LayerNorm: gamma holds 6 values; src dims [2 3 4] want 4 (one per element of the normalized dims [4])"},
		{"beta of the wrong size", reduce.LayerNorm(y, x, nil, g6, dims, 1, 1e-5), graph.InvalidShape, "beta holds 6 values; src dims [2 3 4] want 12"},
		{"groupnorm gamma per channel", reduce.GroupNorm(y, x, make([]float32, 4), nil, dims, 3, 1, 1e-5), graph.InvalidShape, "want 3 (one per channel)"},
		{"groups not dividing", reduce.GroupNorm(y, x, []float32(nil), nil, dims, 2, 1, 1e-5), graph.InvalidArguments,
			"reduce.GroupNorm: groups 2 does not divide the 3 channels"},
		{"groups 0", reduce.GroupNorm(y, x, []float32(nil), nil, dims, 0, -1, 1e-5), graph.InvalidArguments, "groups is 0"},
		{"channels on the batch", reduce.GroupNorm(y, x, []float32(nil), nil, dims, 1, 0, 1e-5), graph.InvalidArguments, "the batch"},
		{"negative epsilon", reduce.RMSNorm(y, x, []float32(nil), dims, -1, -1), graph.InvalidArguments, "reduce.RMSNorm: epsilon is -1 (negative)"},
		{"NaN epsilon", reduce.LayerNorm(y, x, []float32(nil), nil, dims, -1, float32(math.NaN())), graph.InvalidArguments, "epsilon is NaN"},
		{"axis out of range", reduce.Softmax(y, x, dims, 3), graph.InvalidArguments, "reduce.Softmax: axis 3 is out of range [-3, 2]"},
		{"begin_norm_axis out of range", reduce.LayerNorm(y, x, g6, nil, dims, -4, 0), graph.InvalidArguments, "begin_norm_axis -4 is out of range"},
		{"16-bit src unnamed", reduce.Softmax(y, x16, dims, -1), graph.InvalidDataType, "reduce.Softmax: src is a 16-bit slice: name its type bf16 or f16 (reduce.SrcType)"},
		{"16-bit gamma unnamed", reduce.RMSNorm(y, x, make([]uint16, 4), dims, -1, 0), graph.InvalidDataType, "gamma is a 16-bit slice: name its type bf16 or f16 (reduce.ParamType)"},
		{"f32 named bf16", reduce.Softmax(y, x, dims, -1, reduce.SrcType(dtypes.BF16)), graph.InvalidDataType, "src is a 32-bit float slice but its type is named bf16"},
		{"short src", reduce.Softmax(y, x[:20], dims, -1), graph.InvalidArguments, "src holds 80 bytes; its dims and strides address 96"},
		{"short dst", reduce.LogSoftmax(y[:3], x, dims, -1), graph.InvalidArguments, "dst holds 12 bytes"},
		{"dst over src shifted", reduce.Softmax(wide[4:], wide[:24], dims, -1), graph.InvalidArguments, "reduce.Softmax: dst overlaps src in memory"},
		{"in place with other strides", reduce.Softmax(x, x, []int{2, 3, 2}, -1, reduce.DstStrides([]int{12, 4, 1})), graph.InvalidArguments,
			"in place, dst must be src itself"},
		{"in place into bf16", reduce.Softmax(x16, x16[:12], []int{2, 3, 2}, -1, reduce.SrcType(dtypes.BF16), reduce.DstType(dtypes.F16)),
			graph.InvalidArguments, "dst overlaps src"},
		{"stats over src", reduce.LayerNorm(y, x, []float32(nil), nil, dims, -1, 0, reduce.Stats(x[:6], make([]float32, 6))),
			graph.InvalidArguments, "mean overlaps src"},
		{"stats too short", reduce.LayerNorm(y, x, []float32(nil), nil, dims, -1, 0, reduce.Stats(make([]float32, 6), make([]float32, 5))),
			graph.InvalidArguments, "mean holds 6 values and variance 5; there are 6 rows"},
		{"stats on RMSNorm", reduce.RMSNorm(y, x, []float32(nil), dims, -1, 0, reduce.Stats(nil, nil)), graph.InvalidArguments, "Stats is LayerNorm's and GroupNorm's"},
		{"softmax stats over dst", reduce.Softmax(y, x, dims, -1, reduce.SoftmaxStats(y[:6])), graph.InvalidArguments, "dst overlaps lse"},
		{"softmax stats too short", reduce.Softmax(y, x, dims, 1, reduce.SoftmaxStats(make([]float32, 7))),
			graph.InvalidArguments, "SoftmaxStats: lse holds 7 values; there are 8 rows"},
		{"softmax stats on LogSoftmax", reduce.LogSoftmax(y, x, dims, -1, reduce.SoftmaxStats(make([]float32, 6))), graph.InvalidArguments,
			"SoftmaxStats is Softmax's"},
		{"softmax stats on a reduction", reduce.Sum(y, x, dims, []int{1}, reduce.SoftmaxStats(make([]float32, 6))), graph.InvalidArguments,
			"is a normalization's"},
		{"inf_as_zero on LogSoftmax", reduce.LogSoftmax(y, x, dims, -1, reduce.InfAsZero(true)), graph.InvalidArguments, "InfAsZero is Softmax's"},
		{"ParamType on Softmax", reduce.Softmax(y, x, dims, -1, reduce.ParamType(dtypes.BF16)), graph.InvalidArguments, "ParamType names gamma and beta"},
		{"ParamType on LogSoftmax", reduce.LogSoftmax(y, x, dims, -1, reduce.ParamType(dtypes.S8)), graph.InvalidArguments, "ParamType names gamma and beta"},
		{"KeepDims", reduce.Softmax(y, x, dims, -1, reduce.KeepDims(true)), graph.InvalidArguments, "KeepDims is the reductions'"},
		{"post-op", reduce.Softmax(y, x, dims, -1, reduce.Post(reduce.PostReLU, 0, 0)), graph.Unimplemented, "post-ops after a normalization are not implemented"},
		{"zero option", reduce.Softmax(y, x, dims, -1, reduce.Option{}), graph.InvalidArguments, "zero Option"},
		{"no type", reduce.LayerNorm(y, x, nil, []float32(nil), dims, -1, 0, reduce.ParamType(dtypes.Undef)), graph.InvalidArguments, "option 0 names no data type"},
		{"strides count", reduce.Softmax(y, x, dims, -1, reduce.SrcStrides([]int{1})), graph.InvalidShape, "1 src strides for 3 dims"},
		{"overlapping dst", reduce.Softmax(y, x, dims, -1, reduce.DstStrides([]int{0, 0, 1})), graph.InvalidArguments, "do not nest"},
		{"negative dim", reduce.Softmax(y, x, []int{-2, 3, 4}, -1), graph.InvalidShape, "negative"},
		{"rank 13", reduce.Softmax(y, x, make([]int, 13), -1), graph.InvalidShape, "13 dims"},
		{"normalization option on a reduction", reduce.Mean(y, x, dims, []int{0}, reduce.ParamType(dtypes.BF16)), graph.InvalidArguments, "is a normalization's"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !errors.Is(c.err, c.st) || !strings.Contains(fmt.Sprint(c.err), c.msg) {
				t.Fatalf("err = %v, want %v naming %q", c.err, c.st, c.msg)
			}
		})
	}
}

// TestNormCallsInPlace: each normalization with dst given as src itself
// writes what it writes out of place, bit for bit, whichever code runs it
// (the fused kernel, the passes, kept statistics, over a dim that is not
// innermost), at one and two threads, in f32 and bf16.
func TestNormCallsInPlace(t *testing.T) {
	type run func(dst, src any, opts ...reduce.Option) error
	f32 := func(v any) []float32 { return v.([]float32) }
	b16 := func(v any) []uint16 { return v.([]uint16) }
	call := func(f32f func(dst, src []float32, opts ...reduce.Option) error, b16f func(dst, src []uint16, opts ...reduce.Option) error) run {
		return func(dst, src any, opts ...reduce.Option) error {
			if d, ok := dst.([]float32); ok {
				return f32f(d, f32(src), opts...)
			}
			return b16f(b16(dst), b16(src), opts...)
		}
	}
	dims := []int{4, 6, 40, 24}
	n := 4 * 6 * 40 * 24
	odd := []int{4, 6, 40, 23} // inner extents 920 and 23: tails
	gamma, beta := make([]float32, 24), make([]float32, 24)
	gc, bc := make([]float32, 6), make([]float32, 6)
	for i := range gamma {
		gamma[i], beta[i] = 1+float32(i)/8, float32(i)/16-1
	}
	for i := range gc {
		gc[i], bc[i] = 2-float32(i)/4, float32(i)/3
	}
	mean, vari := make([]float32, 4*6*40), make([]float32, 4*6*40)
	cases := []struct {
		name string
		fn   run
	}{
		{"Softmax last", call(func(d, s []float32, o ...reduce.Option) error { return reduce.Softmax(d, s, dims, -1, o...) },
			func(d, s []uint16, o ...reduce.Option) error { return reduce.Softmax(d, s, dims, -1, o...) })},
		{"Softmax channels", call(func(d, s []float32, o ...reduce.Option) error { return reduce.Softmax(d, s, dims, 1, o...) },
			func(d, s []uint16, o ...reduce.Option) error { return reduce.Softmax(d, s, dims, 1, o...) })},
		{"Softmax channels odd inner", call(func(d, s []float32, o ...reduce.Option) error { return reduce.Softmax(d, s, odd, 1, o...) },
			func(d, s []uint16, o ...reduce.Option) error { return reduce.Softmax(d, s, odd, 1, o...) })},
		{"LogSoftmax channels odd inner", call(func(d, s []float32, o ...reduce.Option) error { return reduce.LogSoftmax(d, s, odd, 2, o...) },
			func(d, s []uint16, o ...reduce.Option) error { return reduce.LogSoftmax(d, s, odd, 2, o...) })},
		{"LogSoftmax", call(func(d, s []float32, o ...reduce.Option) error { return reduce.LogSoftmax(d, s, dims, -1, o...) },
			func(d, s []uint16, o ...reduce.Option) error { return reduce.LogSoftmax(d, s, dims, -1, o...) })},
		{"LayerNorm", call(func(d, s []float32, o ...reduce.Option) error {
			return reduce.LayerNorm(d, s, gamma, beta, dims, -1, 1e-5, o...)
		}, func(d, s []uint16, o ...reduce.Option) error {
			return reduce.LayerNorm(d, s, gamma, beta, dims, -1, 1e-5, o...)
		})},
		{"LayerNorm stats", call(func(d, s []float32, o ...reduce.Option) error {
			return reduce.LayerNorm(d, s, gamma, beta, dims, -1, 1e-5, append(o, reduce.Stats(mean, vari))...)
		}, func(d, s []uint16, o ...reduce.Option) error {
			return reduce.LayerNorm(d, s, gamma, beta, dims, -1, 1e-5, append(o, reduce.Stats(mean, vari))...)
		})},
		{"RMSNorm", call(func(d, s []float32, o ...reduce.Option) error {
			return reduce.RMSNorm(d, s, gamma, dims, -1, 1e-5, o...)
		},
			func(d, s []uint16, o ...reduce.Option) error {
				return reduce.RMSNorm(d, s, gamma, dims, -1, 1e-5, o...)
			})},
		{"GroupNorm NCHW", call(func(d, s []float32, o ...reduce.Option) error {
			return reduce.GroupNorm(d, s, gc, bc, dims, 3, 1, 1e-5, o...)
		}, func(d, s []uint16, o ...reduce.Option) error {
			return reduce.GroupNorm(d, s, gc, bc, dims, 3, 1, 1e-5, o...)
		})},
		{"LpNormalize 1", call(func(d, s []float32, o ...reduce.Option) error { return reduce.LpNormalize(d, s, dims, -1, 1, 0, o...) },
			func(d, s []uint16, o ...reduce.Option) error { return reduce.LpNormalize(d, s, dims, -1, 1, 0, o...) })},
		{"LpNormalize 2", call(func(d, s []float32, o ...reduce.Option) error {
			return reduce.LpNormalize(d, s, dims, 2, 2, 1e-6, o...)
		},
			func(d, s []uint16, o ...reduce.Option) error { return reduce.LpNormalize(d, s, dims, 2, 2, 1e-6, o...) })},
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((i*7919)%1013)/101 - 5
	}
	xb := make([]uint16, n)
	for i, v := range x {
		xb[i] = dtypes.F32ToBF16(v)
	}
	defer jit.SetThreads(jit.Threads())
	for _, threads := range []int{1, 2} {
		jit.SetThreads(threads)
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/f32/threads=%d", c.name, threads), func(t *testing.T) {
				want := make([]float32, n)
				if err := c.fn(want, x); err != nil {
					t.Fatal(err)
				}
				got := slices.Clone(x)
				if err := c.fn(got, got); err != nil {
					t.Fatal(err)
				}
				m := n
				if strings.Contains(c.name, "odd") {
					m = 4 * 6 * 40 * 23 // odd's elements
				}
				if !slices.Equal(f32Bytes(got[:m]), f32Bytes(want[:m])) {
					t.Fatalf("in place differs from out of place")
				}
			})
			t.Run(fmt.Sprintf("%s/bf16/threads=%d", c.name, threads), func(t *testing.T) {
				bf := reduce.Type(dtypes.BF16)
				want := make([]uint16, n)
				if err := c.fn(want, xb, bf); err != nil {
					t.Fatal(err)
				}
				got := slices.Clone(xb)
				if err := c.fn(got, got, bf); err != nil {
					t.Fatal(err)
				}
				m := n
				if strings.Contains(c.name, "odd") {
					m = 4 * 6 * 40 * 23 // odd's elements
				}
				if !slices.Equal(got[:m], want[:m]) {
					t.Fatalf("in place differs from out of place")
				}
			})
		}
	}
}

// TestNormSquaresPastF32: LayerNorm's and RMSNorm's statistics are f32
// (README, "Normalization ops"): a finite row whose squares pass f32's
// range has an infinite variance or mean square, and its results are
// ±0, the signs of x - mean or x, with no error, on every ISA.
func TestNormSquaresPastF32(t *testing.T) {
	x := []float32{1e20, -1e20, 3e19, 0}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		ln, rms := make([]float32, 4), make([]float32, 4)
		if err := reduce.LayerNorm(ln, x, []float32(nil), nil, []int{1, 4}, -1, 1e-5); err != nil {
			t.Fatalf("%v LayerNorm: %v", isa, err)
		}
		if err := reduce.RMSNorm(rms, x, []float32(nil), []int{1, 4}, -1, 1e-5); err != nil {
			t.Fatalf("%v RMSNorm: %v", isa, err)
		}
		mean := 0.0
		for _, v := range x {
			mean += float64(v) / 4
		}
		for j, v := range x {
			if ln[j] != 0 || math.Signbit(float64(ln[j])) != (float64(v) < mean) {
				t.Errorf("%v LayerNorm [%d] = %v, want a zero of the sign of x - mean", isa, j, ln[j])
			}
			if rms[j] != 0 || math.Signbit(float64(rms[j])) != math.Signbit(float64(v)) {
				t.Errorf("%v RMSNorm [%d] = %v, want a zero of x's sign", isa, j, rms[j])
			}
		}
		jit.SetMaxISA(prev)
	}
}
