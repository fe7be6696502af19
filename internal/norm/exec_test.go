package norm_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/status"
)

var floatTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}

// layout returns strides for dims: a random memory order of the dims,
// with some dims padded, or dense row-major.
func layout(r *rand.Rand, dims []int64) []int64 {
	order := make([]int, len(dims))
	for i := range order {
		order[i] = i
	}
	if r.IntN(2) == 0 {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	strides := make([]int64, len(dims))
	acc := int64(1)
	for k := len(order) - 1; k >= 0; k-- {
		d := order[k]
		strides[d] = acc
		n := max(dims[d], 1)
		if r.IntN(4) == 0 {
			n += int64(1 + r.IntN(2))
		}
		acc *= n
	}
	return strides
}

// spanOf is the elements dims with strides address.
func spanOf(dims, strides []int64) int64 {
	sp := int64(1)
	for i, d := range dims {
		if d == 0 {
			return 0
		}
		sp += (d - 1) * strides[i]
	}
	return sp
}

// fill gives a buffer random values of dt (exact in dt), scaled.
func fill(r *rand.Rand, dt dtypes.DataType, n int64, center, spread float64) []byte {
	b := make([]byte, n*int64(dt.Size()))
	for i := range n {
		dtypes.StoreF32(dt, b, i, float32(center+spread*(2*r.Float64()-1)))
	}
	return b
}

// ulpRel is the relative rounding step of dt: what one rounding to dt
// may lose, with the double rounding through f32 (at most one step).
func ulpRel(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.BF16:
		return 1.0 / 128
	case dtypes.F16:
		return 1.0 / 1024
	}
	return 1.0 / (1 << 23)
}

// absTiny is the absolute error the smallest results of dt may have
// (f16's subnormal step; f32's and bf16's are far below any test value).
func absTiny(dt dtypes.DataType) float64 {
	if dt == dtypes.F16 {
		return 1.0 / (1 << 24)
	}
	return 1e-37
}

// randomProblem builds a problem of kind k with random dims, axis,
// layouts and data types, and its buffers.
func randomProblem(r *rand.Rand, k norm.Kind) (*norm.Problem, norm.Buffers) {
	rank := 1 + r.IntN(4)
	if k == norm.GroupNorm {
		rank = 2 + r.IntN(3)
	}
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = int64(1 + r.IntN(5))
	}
	if r.IntN(4) == 0 {
		dims[r.IntN(rank)] = int64(10 + r.IntN(60)) // a longer row or more rows
	}
	p := &norm.Problem{Kind: k, Dims: dims, Eps: []float32{1e-5, 0, 0.0625, 1}[r.IntN(4)]}
	p.Axis = int64(r.IntN(rank))
	if r.IntN(2) == 0 {
		p.Axis -= int64(rank)
	}
	if k == norm.GroupNorm {
		c := 1 + r.IntN(rank-1)
		if r.IntN(2) == 0 {
			c = rank - 1
		}
		p.Axis = int64(c)
		groups := []int64{1, 2, 3}[r.IntN(3)]
		dims[c] = groups * int64(1+r.IntN(4))
		p.Groups = groups
	}
	if k == norm.Softmax {
		p.InfAsZero = r.IntN(2) == 0
	}
	p.Src = norm.Operand{DT: floatTypes[r.IntN(3)], Strides: layout(r, dims)}
	p.Dst = norm.Operand{DT: floatTypes[r.IntN(3)], Strides: layout(r, dims)}
	axis, _ := norm.AxisIn(p.Axis, rank)
	pd, sd := norm.ParamDims(k, dims, axis), norm.StatsDims(k, dims, axis, p.Groups)
	if k.HasEpsilon() && r.IntN(3) > 0 {
		p.Gamma = norm.Operand{DT: floatTypes[r.IntN(3)], Strides: layout(r, pd)}
		if k != norm.RMSNorm && r.IntN(4) > 0 {
			p.Beta = norm.Operand{DT: floatTypes[r.IntN(3)], Strides: layout(r, pd)}
		}
	}
	if k.HasStats() && r.IntN(2) == 0 {
		p.Mean = norm.Operand{DT: dtypes.F32, Strides: layout(r, sd)}
		p.Var = norm.Operand{DT: dtypes.F32, Strides: layout(r, sd)}
	}
	if k == norm.Softmax && r.IntN(2) == 0 {
		p.Stats = norm.Operand{DT: dtypes.F32, Strides: layout(r, sd)}
	}
	center, spread := 0.0, 1.0
	switch r.IntN(4) {
	case 0:
		center, spread = 50, 30
	case 1:
		center, spread = 1e4, 1 // a large mean, a small spread
	}
	if k == norm.Softmax || k == norm.LogSoftmax {
		center, spread = 0, 20
	}
	var b norm.Buffers
	b.Src = fill(r, p.Src.DT, spanOf(dims, p.Src.Strides), center, spread)
	b.Dst = bytes.Repeat([]byte{0xa5}, int(spanOf(dims, p.Dst.Strides))*p.Dst.DT.Size())
	if p.Gamma.Present() {
		b.Gamma = fill(r, p.Gamma.DT, spanOf(pd, p.Gamma.Strides), 1, 0.5)
	}
	if p.Beta.Present() {
		b.Beta = fill(r, p.Beta.DT, spanOf(pd, p.Beta.Strides), 0, 0.5)
	}
	if p.Mean.Present() {
		b.Mean = bytes.Repeat([]byte{0xa5}, 4*int(spanOf(sd, p.Mean.Strides)))
		b.Var = bytes.Repeat([]byte{0xa5}, 4*int(spanOf(sd, p.Var.Strides)))
	}
	if p.Stats.Present() {
		b.Stats = bytes.Repeat([]byte{0xa5}, 4*int(spanOf(sd, p.Stats.Strides)))
	}
	return p, b
}

// check compares every dst element and statistic with the oracle's, and
// checks that no byte outside them changed.
func check(t *testing.T, p *norm.Problem, b norm.Buffers, before norm.Buffers) {
	t.Helper()
	want := oracle.Norm(p, before)
	written := map[int64]bool{}
	for off, w := range want.Dst {
		written[off] = true
		got := float64(dtypes.LoadF32(p.Dst.DT, b.Dst, off))
		tol := ulpRel(p.Dst.DT)*math.Abs(w) + absTiny(p.Dst.DT) + 1e-12*want.Magnitude[off]
		if math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) && math.Abs(got-w) > tol {
			t.Fatalf("%s: dst[%d] = %v, want %v (tolerance %g)", describe(p), off, got, w, tol)
		}
	}
	sz := int64(p.Dst.DT.Size())
	for off := int64(0); off*sz < int64(len(b.Dst)); off++ {
		if !written[off] && !bytes.Equal(b.Dst[off*sz:(off+1)*sz], before.Dst[off*sz:(off+1)*sz]) {
			t.Fatalf("%s: dst padding element %d was written", describe(p), off)
		}
	}
	for _, s := range []struct {
		name string
		want map[int64]float64
		buf  []byte
	}{{"mean", want.Mean, b.Mean}, {"variance", want.Var, b.Var}, {"stats", want.Stats, b.Stats}} {
		for off, w := range s.want {
			got := float64(dtypes.LoadF32(dtypes.F32, s.buf, off))
			if math.IsNaN(w) != math.IsNaN(got) || math.Abs(got-w) > ulpRel(dtypes.F32)*math.Abs(w)+1e-30 {
				t.Fatalf("%s: %s[%d] = %v, want %v", describe(p), s.name, off, got, w)
			}
		}
	}
}

func describe(p *norm.Problem) string {
	return fmt.Sprintf("%v dims %v axis %d groups %d eps %v src %v%v dst %v%v gamma %v beta %v mean %v",
		p.Kind, p.Dims, p.Axis, p.Groups, p.Eps, p.Src.DT, p.Src.Strides, p.Dst.DT, p.Dst.Strides, p.Gamma.DT, p.Beta.DT, p.Mean.Present())
}

func clone(b norm.Buffers) norm.Buffers {
	return norm.Buffers{Src: slices.Clone(b.Src), Dst: slices.Clone(b.Dst), Gamma: slices.Clone(b.Gamma),
		Beta: slices.Clone(b.Beta), Mean: slices.Clone(b.Mean), Var: slices.Clone(b.Var), Stats: slices.Clone(b.Stats)}
}

// TestAgainstOracle runs random problems of every kind (ranks, axes,
// layouts, data types, affine and statistics outputs) against the
// float64 oracle.
func TestAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 300
	if testing.Short() {
		n = 60
	}
	for k := norm.Softmax; k <= norm.GroupNorm; k++ {
		t.Run(k.String(), func(t *testing.T) {
			for range n {
				p, b := randomProblem(r, k)
				before := clone(b)
				e, err := norm.New(p)
				if err != nil {
					t.Fatalf("%s: %v", describe(p), err)
				}
				if err := e.Run(b, 1+r.IntN(4)); err != nil {
					t.Fatalf("%s: %v", describe(p), err)
				}
				check(t, p, b, before)
			}
		})
	}
}

// TestThreadsBitIdentical: the same problem gives the same bytes for any
// thread count.
func TestThreadsBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for k := norm.Softmax; k <= norm.GroupNorm; k++ {
		dims := []int64{6, 8, 40, 24}
		p := &norm.Problem{Kind: k, Dims: dims, Axis: -1, Groups: 4, Eps: 1e-5,
			Src: norm.Operand{DT: dtypes.F32, Strides: layout(r, dims)}, Dst: norm.Operand{DT: dtypes.BF16, Strides: layout(r, dims)}}
		if k == norm.GroupNorm {
			p.Axis = 1
		}
		e, err := norm.New(p)
		if err != nil {
			t.Fatal(err)
		}
		src := fill(r, dtypes.F32, spanOf(dims, p.Src.Strides), 3, 5)
		var first []byte
		for _, threads := range []int{1, 2, 3, 7, 16} {
			dst := make([]byte, 2*spanOf(dims, p.Dst.Strides))
			if err := e.Run(norm.Buffers{Src: src, Dst: dst}, threads); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = dst
			} else if !bytes.Equal(dst, first) {
				t.Fatalf("%v: %d threads give other bytes than 1", k, threads)
			}
		}
	}
}

// run1 runs a one-row problem of f32 data and returns dst.
func run1(t *testing.T, p *norm.Problem, x []float32, b norm.Buffers) []float32 {
	t.Helper()
	p.Dims = []int64{int64(len(x))}
	p.Src = norm.Operand{DT: dtypes.F32, Strides: []int64{1}}
	p.Dst = norm.Operand{DT: dtypes.F32, Strides: []int64{1}}
	e, err := norm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	b.Src = f32Bytes(x)
	b.Dst = make([]byte, 4*len(x))
	if err := e.Run(b, 1); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(x))
	for i := range out {
		out[i] = dtypes.LoadF32(dtypes.F32, b.Dst, int64(i))
	}
	return out
}

func f32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		dtypes.StoreF32(dtypes.F32, b, int64(i), v)
	}
	return b
}

func TestSoftmaxNumerics(t *testing.T) {
	inf := float32(math.Inf(1))
	big := []float32{1000, 1000, 1000, 1000}
	if got := run1(t, &norm.Problem{Kind: norm.Softmax}, big, norm.Buffers{}); !slices.Equal(got, []float32{0.25, 0.25, 0.25, 0.25}) {
		t.Errorf("softmax of 1000s = %v, want 0.25 each (shifted by the max)", got)
	}
	if got := run1(t, &norm.Problem{Kind: norm.LogSoftmax}, big, norm.Buffers{}); got[0] != float32(-math.Log(4)) {
		t.Errorf("log-softmax of 1000s = %v, want -log 4", got)
	}
	masked := []float32{1, -inf, 2, -inf}
	got := run1(t, &norm.Problem{Kind: norm.Softmax}, masked, norm.Buffers{})
	if got[1] != 0 || got[3] != 0 || math.Signbit(float64(got[1])) {
		t.Errorf("softmax with -Inf entries = %v, want exact +0 there", got)
	}
	if lg := run1(t, &norm.Problem{Kind: norm.LogSoftmax}, masked, norm.Buffers{}); !math.IsInf(float64(lg[1]), -1) {
		t.Errorf("log-softmax with -Inf entries = %v, want -Inf there", lg)
	}
	all := []float32{-inf, -inf, -inf}
	for _, v := range run1(t, &norm.Problem{Kind: norm.Softmax}, all, norm.Buffers{}) {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("softmax of an all -Inf row: %v, want NaN", v)
		}
	}
	for _, v := range run1(t, &norm.Problem{Kind: norm.Softmax, InfAsZero: true}, all, norm.Buffers{}) {
		if v != 0 || math.Signbit(float64(v)) {
			t.Fatalf("inf_as_zero softmax of an all -Inf row: %v, want +0", v)
		}
	}
	for _, v := range run1(t, &norm.Problem{Kind: norm.LogSoftmax}, all, norm.Buffers{}) {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("log-softmax of an all -Inf row: %v, want NaN", v)
		}
	}
	// stats: the log-sum-exp; of a row of -Inf NaN, or 0 in inf_as_zero
	// mode; of a row with a NaN NaN.
	for _, c := range []struct {
		x         []float32
		infAsZero bool
		want      float64
	}{
		{[]float32{1, -inf, 2, -inf}, false, math.Log(math.E + math.E*math.E)},
		{big, true, 1000 + math.Log(4)},
		{all, false, math.NaN()},
		{all, true, 0},
		{[]float32{1, float32(math.NaN()), 2}, true, math.NaN()},
	} {
		stats := make([]byte, 4)
		run1(t, &norm.Problem{Kind: norm.Softmax, InfAsZero: c.infAsZero, Stats: norm.Operand{DT: dtypes.F32, Strides: []int64{0}}},
			c.x, norm.Buffers{Stats: stats})
		got := float64(dtypes.LoadF32(dtypes.F32, stats, 0))
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(c.want) && math.Abs(got-c.want) > ulpRel(dtypes.F32)*math.Abs(c.want) {
			t.Errorf("stats of %v (inf_as_zero %v) = %v, want %v", c.x, c.infAsZero, got, c.want)
		}
	}
	nan := []float32{1, float32(math.NaN()), 2}
	for _, v := range run1(t, &norm.Problem{Kind: norm.Softmax, InfAsZero: true}, nan, norm.Buffers{}) {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("softmax of a row with a NaN: %v, want NaN", v)
		}
	}
}

// TestVarianceNoCancellation: data of mean 1e4 and spread 1 keeps f32
// accuracy, where E[x²] - E[x]² in f32 would lose it all.
func TestVarianceNoCancellation(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(1e4 + 2*r.Float64() - 1)
	}
	p := &norm.Problem{Kind: norm.LayerNorm, Eps: 0, Mean: norm.Operand{DT: dtypes.F32, Strides: []int64{}}, Var: norm.Operand{DT: dtypes.F32, Strides: []int64{}}}
	b := norm.Buffers{Mean: make([]byte, 4), Var: make([]byte, 4)}
	y := run1(t, p, x, b)
	var s, q float64
	for _, v := range x {
		s += float64(v)
	}
	m := s / float64(len(x))
	for _, v := range x {
		q += (float64(v) - m) * (float64(v) - m)
	}
	v := q / float64(len(x))
	if got := float64(dtypes.LoadF32(dtypes.F32, b.Var, 0)); math.Abs(got-v) > 1e-6*v {
		t.Errorf("variance %v, want %v", got, v)
	}
	for i, yv := range y {
		want := (float64(x[i]) - m) / math.Sqrt(v)
		if math.Abs(float64(yv)-want) > 1e-6*max(1, math.Abs(want)) {
			t.Fatalf("y[%d] = %v, want %v", i, yv, want)
		}
	}
}

// TestBF16TiesToEven: results are rounded to bf16 to nearest, ties to
// even. RMSNorm of [1, -1] with epsilon 0 divides by exactly 1, so
// gamma alone decides the result: 1 + 2^-8 lies halfway between 1 and
// 1 + 2^-7 (to 1, even), 1 + 3·2^-8 between 1 + 2^-7 and 1 + 2^-6 (to
// 1 + 2^-6, even).
func TestBF16TiesToEven(t *testing.T) {
	for _, c := range []struct{ g, want float32 }{{1 + 1.0/256, 1}, {1 + 3.0/256, 1 + 1.0/64}} {
		p := &norm.Problem{Kind: norm.RMSNorm, Dims: []int64{2}, Src: norm.Operand{DT: dtypes.F32, Strides: []int64{1}},
			Dst: norm.Operand{DT: dtypes.BF16, Strides: []int64{1}}, Gamma: norm.Operand{DT: dtypes.F32, Strides: []int64{1}}}
		e, err := norm.New(p)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 4)
		if err := e.Run(norm.Buffers{Src: f32Bytes([]float32{1, -1}), Dst: dst, Gamma: f32Bytes([]float32{c.g, c.g})}, 1); err != nil {
			t.Fatal(err)
		}
		if got := dtypes.LoadF32(dtypes.BF16, dst, 0); got != c.want {
			t.Errorf("gamma %v: bf16 result %v, want %v", c.g, got, c.want)
		}
		if got := dtypes.LoadF32(dtypes.BF16, dst, 1); got != -c.want {
			t.Errorf("gamma %v: bf16 result %v, want %v", c.g, got, -c.want)
		}
	}
}

// TestEmptyRows: a normalized extent of size 0 gives statistics of 0,
// as oneDNN's, and writes no dst element.
func TestEmptyRows(t *testing.T) {
	p := &norm.Problem{Kind: norm.LayerNorm, Dims: []int64{3, 0}, Axis: -1, Src: norm.Operand{DT: dtypes.F32, Strides: []int64{0, 1}},
		Dst: norm.Operand{DT: dtypes.F32, Strides: []int64{0, 1}}, Mean: norm.Operand{DT: dtypes.F32, Strides: []int64{1}}, Var: norm.Operand{DT: dtypes.F32, Strides: []int64{1}}}
	e, err := norm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	mean, vr := make([]byte, 12), make([]byte, 12)
	if err := e.Run(norm.Buffers{Mean: mean, Var: vr}, 2); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m, v := dtypes.LoadF32(dtypes.F32, mean, int64(i)), dtypes.LoadF32(dtypes.F32, vr, int64(i))
		if m != 0 || v != 0 || math.Signbit(float64(m)) || math.Signbit(float64(v)) {
			t.Fatalf("mean, variance [%d] = %v, %v; want +0, +0", i, m, v)
		}
	}
	// A softmax's stats of empty rows: 0, as oneDNN's.
	p = &norm.Problem{Kind: norm.Softmax, Dims: []int64{3, 0}, Axis: -1, Src: norm.Operand{DT: dtypes.F32, Strides: []int64{0, 1}},
		Dst: norm.Operand{DT: dtypes.F32, Strides: []int64{0, 1}}, Stats: norm.Operand{DT: dtypes.F32, Strides: []int64{1, 0}}}
	if e, err = norm.New(p); err != nil {
		t.Fatal(err)
	}
	stats := bytes.Repeat([]byte{0xa5}, 12)
	if err := e.Run(norm.Buffers{Stats: stats}, 2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stats, make([]byte, 12)) {
		t.Fatalf("stats of empty rows: % x, want +0s", stats)
	}
	if err := e.Run(norm.Buffers{Stats: stats[:8]}, 2); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "stats holds 8 bytes") {
		t.Fatalf("short stats: %v", err)
	}
}

// TestEmptyRowsWithoutStatistics: rows of no element that keep no
// statistic write nothing, so the call returns at once however many
// rows the other dims make (a row at a time, 2^60 rows would run for
// days).
func TestEmptyRowsWithoutStatistics(t *testing.T) {
	f32 := func(strides ...int64) norm.Operand { return norm.Operand{DT: dtypes.F32, Strides: strides} }
	for _, p := range []*norm.Problem{
		{Kind: norm.Softmax, Dims: []int64{0, 1 << 60}, Axis: 0, Src: f32(1, 0), Dst: f32(1, 0)},
		{Kind: norm.LogSoftmax, Dims: []int64{1 << 30, 0, 1 << 30}, Axis: 1, Src: f32(0, 1, 0), Dst: f32(0, 1, 0)},
		{Kind: norm.LayerNorm, Dims: []int64{1 << 60, 0}, Axis: 1, Eps: 1e-5, Src: f32(0, 1), Dst: f32(0, 1)},
		{Kind: norm.RMSNorm, Dims: []int64{1 << 60, 0}, Axis: 1, Eps: 1e-5, Src: f32(0, 1), Dst: f32(0, 1)},
		{Kind: norm.GroupNorm, Dims: []int64{1 << 60, 1, 0}, Axis: 1, Groups: 1, Eps: 1e-5, Src: f32(0, 0, 1), Dst: f32(0, 0, 1)},
	} {
		e, err := norm.New(p)
		if err != nil {
			t.Fatalf("%v %v: %v", p.Kind, p.Dims, err)
		}
		if err := e.Run(norm.Buffers{}, 2); err != nil {
			t.Fatalf("%v %v: %v", p.Kind, p.Dims, err)
		}
	}
}

// TestRefusals: problems without a meaning are errors with a status,
// never a panic.
func TestRefusals(t *testing.T) {
	f32 := func(strides ...int64) norm.Operand { return norm.Operand{DT: dtypes.F32, Strides: strides} }
	base := func(k norm.Kind) norm.Problem {
		return norm.Problem{Kind: k, Dims: []int64{2, 6}, Axis: -1, Groups: 2, Eps: 1e-5, Src: f32(6, 1), Dst: f32(6, 1)}
	}
	cases := []struct {
		name string
		edit func(p *norm.Problem)
		st   status.Status
		msg  string
	}{
		{"unknown kind", func(p *norm.Problem) { p.Kind = 0 }, status.InvalidArguments, "unknown"},
		{"axis past the end", func(p *norm.Problem) { p.Axis = 2 }, status.InvalidArguments, "axis 2 is out of range [-2, 1]"},
		{"axis before the start", func(p *norm.Problem) { p.Axis = -3 }, status.InvalidArguments, "out of range"},
		{"rank 0", func(p *norm.Problem) { p.Dims, p.Src.Strides, p.Dst.Strides = nil, nil, nil }, status.InvalidArguments, "out of range"},
		{"negative dim", func(p *norm.Problem) { p.Dims = []int64{-1, 6} }, status.InvalidShape, "negative"},
		{"src s8", func(p *norm.Problem) { p.Src.DT = dtypes.S8 }, status.InvalidDataType, "src is s8"},
		{"dst s32", func(p *norm.Problem) { p.Dst.DT = dtypes.S32 }, status.InvalidDataType, "dst is s32"},
		{"softmax with gamma", func(p *norm.Problem) { p.Gamma = f32(1) }, status.InvalidArguments, "SoftMax has no gamma"},
		{"strides short", func(p *norm.Problem) { p.Src.Strides = []int64{1} }, status.InvalidShape, "src has 1 strides for its 2 dims"},
		{"negative stride", func(p *norm.Problem) { p.Dst.Strides = []int64{-6, 1} }, status.InvalidShape, "negative"},
		{"dst overlaps itself", func(p *norm.Problem) { p.Dst.Strides = []int64{1, 1} }, status.InvalidArguments, "overlap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := base(norm.Softmax)
			c.edit(&p)
			_, err := norm.New(&p)
			if !errors.Is(err, c.st) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("New = %v, want %v naming %q", err, c.st, c.msg)
			}
		})
	}
	norms := []struct {
		name string
		k    norm.Kind
		edit func(p *norm.Problem)
		st   status.Status
		msg  string
	}{
		{"NaN epsilon", norm.LayerNorm, func(p *norm.Problem) { p.Eps = float32(math.NaN()) }, status.InvalidArguments, "epsilon is NaN"},
		{"negative epsilon", norm.RMSNorm, func(p *norm.Problem) { p.Eps = -1e-5 }, status.InvalidArguments, "negative"},
		{"infinite epsilon", norm.GroupNorm, func(p *norm.Problem) { p.Eps = float32(math.Inf(1)) }, status.InvalidArguments, "epsilon is +Inf"},
		{"groups not dividing", norm.GroupNorm, func(p *norm.Problem) { p.Groups = 4 }, status.InvalidArguments, "groups 4 does not divide the 6 channels"},
		{"zero groups", norm.GroupNorm, func(p *norm.Problem) { p.Groups = 0 }, status.InvalidArguments, "groups is 0"},
		{"channels on the batch", norm.GroupNorm, func(p *norm.Problem) { p.Axis = 0 }, status.InvalidArguments, "dim 0, the batch"},
		{"gamma of the wrong rank", norm.LayerNorm, func(p *norm.Problem) { p.Axis = 0; p.Gamma = f32(1) }, status.InvalidShape, "gamma has 1 strides for its 2 dims"},
		{"rmsnorm with beta", norm.RMSNorm, func(p *norm.Problem) { p.Beta = f32(1) }, status.InvalidArguments, "RMSNorm has no beta"},
		{"gamma s32", norm.LayerNorm, func(p *norm.Problem) { p.Gamma = norm.Operand{DT: dtypes.S32, Strides: []int64{1}} }, status.InvalidDataType, "gamma is s32"},
		{"mean bf16", norm.LayerNorm, func(p *norm.Problem) {
			p.Mean, p.Var = norm.Operand{DT: dtypes.BF16, Strides: []int64{1}}, f32(1)
		}, status.InvalidDataType, "mean is bf16"},
		{"mean without variance", norm.GroupNorm, func(p *norm.Problem) { p.Mean = f32(2, 1) }, status.InvalidArguments, "give both or neither"},
		{"stats for RMSNorm", norm.RMSNorm, func(p *norm.Problem) { p.Mean, p.Var = f32(1), f32(1) }, status.InvalidArguments, "RMSNorm has no mean"},
		{"softmax stats for LayerNorm", norm.LayerNorm, func(p *norm.Problem) { p.Stats = f32(1, 0) }, status.InvalidArguments, "LayerNorm has no stats"},
		{"mean for SoftMax", norm.Softmax, func(p *norm.Problem) { p.Mean, p.Var = f32(1, 0), f32(1, 0) }, status.InvalidArguments, "SoftMax has no mean"},
		{"softmax stats bf16", norm.Softmax, func(p *norm.Problem) { p.Stats = norm.Operand{DT: dtypes.BF16, Strides: []int64{1, 0}} }, status.InvalidDataType, "stats is bf16"},
		{"softmax stats of the wrong rank", norm.Softmax, func(p *norm.Problem) { p.Stats = f32(1) }, status.InvalidShape, "stats has 1 strides for its 2 dims"},
		{"softmax stats overlapping", norm.Softmax, func(p *norm.Problem) { p.Dims = []int64{2, 6}; p.Axis = 0; p.Stats = f32(0, 0) }, status.InvalidArguments, "stats strides [0 0] do not nest"},
	}
	for _, c := range norms {
		t.Run(c.name, func(t *testing.T) {
			p := base(c.k)
			c.edit(&p)
			_, err := norm.New(&p)
			if !errors.Is(err, c.st) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("New = %v, want %v naming %q", err, c.st, c.msg)
			}
		})
	}
	// A buffer shorter than its span: an error, nothing written.
	p := base(norm.LayerNorm)
	e, err := norm.New(&p)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 48)
	if err := e.Run(norm.Buffers{Src: make([]byte, 44), Dst: dst}, 1); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "src holds 44 bytes") {
		t.Fatalf("short src: %v", err)
	}
	if _, err := norm.New(nil); !errors.Is(err, status.InvalidArguments) {
		t.Fatalf("New(nil) = %v", err)
	}
}

// TestProblemClone: a clone equals its problem, field for field, and
// writing any of its slices leaves the problem as it was.
func TestProblemClone(t *testing.T) {
	op := func(s ...int64) norm.Operand { return norm.Operand{DT: dtypes.F32, Strides: s} }
	p := &norm.Problem{Kind: norm.LayerNorm, Dims: []int64{2, 3}, Axis: -1, Groups: 1, Eps: 1e-5, InfAsZero: true,
		Src: op(3, 1), Dst: op(3, 1), Gamma: op(1), Beta: op(1), Mean: op(1), Var: op(1), Stats: op(1, 0)}
	c := p.Clone()
	if !reflect.DeepEqual(c, p) {
		t.Fatalf("clone %+v of %+v", c, p)
	}
	c.Dims[0] = 9
	for _, o := range []*norm.Operand{&c.Src, &c.Dst, &c.Gamma, &c.Beta, &c.Mean, &c.Var, &c.Stats} {
		o.Strides[0] = 9
	}
	for _, o := range []norm.Operand{p.Src, p.Dst, p.Gamma, p.Beta, p.Mean, p.Var, p.Stats} {
		if o.Strides[0] == 9 || p.Dims[0] != 2 {
			t.Fatalf("writing the clone changed the problem: %+v", p)
		}
	}
}
