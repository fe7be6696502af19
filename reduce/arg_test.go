package reduce

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
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/status"
)

// argRef is the exact reference of an index reduction over values held
// as float64 (every src type's values are exact there): the winning
// value first (NaN if any element is NaN), then the first (last) index
// holding it. It shares no code with the kernels or the interpreter.
func argRef(vals []float64, min, last bool) int64 {
	best := vals[0]
	hasNaN := false
	for _, v := range vals {
		switch {
		case math.IsNaN(v):
			hasNaN = true
		case min && v < best, !min && v > best, math.IsNaN(best):
			best = v
		}
	}
	match := func(v float64) bool {
		if hasNaN {
			return math.IsNaN(v)
		}
		return v == best
	}
	idx := int64(-1)
	for i, v := range vals {
		if match(v) {
			idx = int64(i)
			if !last {
				break
			}
		}
	}
	return idx
}

// argCase is one randomized problem: dims, axis, strides (padded or
// permuted), and values with many ties and NaNs.
type argCase struct {
	dims, strides []int
	axis          int
	keep          bool
}

func (c argCase) String() string {
	return fmt.Sprintf("dims=%v strides=%v axis=%d keep=%v", c.dims, c.strides, c.axis, c.keep)
}

// randomArgCase draws a shape: ranks 1 to 4, dims of 1 to 40 with now
// and then a long one (vector loops and tails), strides dense, padded or
// with the dims permuted in memory (a strided axis).
func randomArgCase(r *rand.Rand) argCase {
	rank := 1 + r.IntN(4)
	c := argCase{dims: make([]int, rank), axis: r.IntN(2*rank) - rank, keep: r.IntN(2) == 0}
	for i := range c.dims {
		switch r.IntN(6) {
		case 0:
			c.dims[i] = 1
		case 1:
			c.dims[i] = 64 + r.IntN(300)
		default:
			c.dims[i] = 1 + r.IntN(40)
		}
	}
	total := 1
	for _, d := range c.dims {
		total *= d
	}
	for total > 1<<16 {
		i := r.IntN(rank)
		c.dims[i] = max(1, c.dims[i]/2)
		total = 1
		for _, d := range c.dims {
			total *= d
		}
	}
	order := make([]int, rank)
	for i := range order {
		order[i] = i
	}
	if r.IntN(3) == 0 {
		r.Shuffle(rank, func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	c.strides = make([]int, rank)
	st := 1 + r.IntN(2)*r.IntN(3)
	for k := rank - 1; k >= 0; k-- {
		i := order[k]
		c.strides[i] = st
		st *= c.dims[i] + r.IntN(2)*r.IntN(3)
	}
	return c
}

// argValues draws n values over a narrow range, so that ties are
// common, with a NaN now and then (nanRate of 1 in nanRate; 0: none);
// for half the cases of 16-, 32- and 64-bit integers, each value is moved
// near one of the type's edges (its least and greatest values and the
// middle, where an unsigned type's sign bit flips). A 64-bit type steps
// by 2^11 there, the spacing of float64 near 2^64, so that every value
// is exact as float64; for half the f64 cases, the values are spread
// less than an f32 ulp apart.
func argValues(r *rand.Rand, n int, dt dtypes.DataType, nanRate int) []float64 {
	v := make([]float64, n)
	span := 1 + r.IntN(7)
	float := dt.IsFloat() || dt == dtypes.F64
	var edges []float64
	step := 1.0
	if sz := dt.Size(); dt.IsInteger() && sz >= 2 && r.IntN(2) == 0 {
		bits := 8 * sz
		if sz == 8 {
			step = 0x1p11
		}
		lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)-step
		if !dt.IsSigned() {
			lo, hi = 0, math.Ldexp(1, bits)-step
		}
		edges = []float64{lo + float64(span)*step, hi - float64(span)*step, lo + math.Ldexp(1, bits-1)}
	}
	fine := dt == dtypes.F64 && r.IntN(2) == 0
	for i := range v {
		if edges != nil {
			v[i] = edges[r.IntN(len(edges))] + float64(r.IntN(2*span+1)-span)*step
			continue
		}
		x := float64(r.IntN(2*span+1) - span)
		switch {
		case dt == dtypes.U8 || dt.IsInteger() && !dt.IsSigned():
			x = float64(r.IntN(span + 1))
		case float && nanRate > 0 && r.IntN(nanRate) == 0:
			x = math.NaN()
		case float && r.IntN(50) == 0:
			x = math.Inf(1 - 2*r.IntN(2))
		case float && x == 0 && r.IntN(2) == 0:
			x = math.Copysign(0, -1)
		case fine:
			x = 1 + x*0x1p-30
		}
		v[i] = x
	}
	return v
}

// encode stores values as elements of dt in a slice of E.
func encode[E ArgSrc](vals []float64, dt dtypes.DataType) []E {
	out := make([]E, len(vals))
	for i, v := range vals {
		switch dt {
		case dtypes.BF16:
			out[i] = E(dtypes.F32ToBF16(float32(v)))
		case dtypes.F16:
			out[i] = E(dtypes.F32ToF16(float32(v)))
		default:
			out[i] = E(v)
		}
	}
	return out
}

// checkArg runs one case for src type E (named dt) both ways and with
// both tie rules, against argRef.
func checkArg[I Index, E ArgSrc](t *testing.T, r *rand.Rand, c argCase, dt dtypes.DataType, nanRate int) {
	t.Helper()
	rank := len(c.dims)
	span := 1
	for i, d := range c.dims {
		span += (d - 1) * c.strides[i]
	}
	vals := argValues(r, span, dt, nanRate)
	src := encode[E](vals, dt)
	ax := c.axis
	if ax < 0 {
		ax += rank
	}
	ddims := dstDims(c.dims, 1<<ax, c.keep)
	n := 1
	for _, d := range ddims {
		n *= d
	}
	for _, min := range []bool{false, true} {
		for _, last := range []bool{false, true} {
			dst := make([]I, n)
			for i := range dst {
				dst[i] = -7
			}
			opts := []Option{SrcStrides(c.strides), KeepDims(c.keep), SelectLastIndex(last)}
			if dt == dtypes.BF16 || dt == dtypes.F16 || dt == dtypes.U16 {
				opts = append(opts, SrcType(dt))
			}
			var err error
			if min {
				err = ArgMin(dst, src, c.dims, c.axis, opts...)
			} else {
				err = ArgMax(dst, src, c.dims, c.axis, opts...)
			}
			if err != nil {
				t.Fatalf("%v %v min=%v last=%v: %v", dt, c, min, last, err)
			}
			// Walk the outputs in dst order (row-major over the kept dims).
			idx := make([]int, rank)
			for o := 0; o < n; o++ {
				base := 0
				for i := range rank {
					base += idx[i] * c.strides[i]
				}
				row := make([]float64, c.dims[ax])
				for k := range row {
					row[k] = vals[base+k*c.strides[ax]]
				}
				if want := argRef(row, min, last); int64(dst[o]) != want {
					t.Fatalf("%v %v min=%v last=%v: output %d (index %v) is %d, want %d; row %v (%s)",
						dt, c, min, last, o, idx, dst[o], want, row, jit.EffectiveISA())
				}
				for i := rank - 1; i >= 0; i-- {
					if i == ax {
						continue
					}
					if idx[i]++; idx[i] < c.dims[i] {
						break
					}
					idx[i] = 0
				}
			}
		}
	}
}

// TestArgRandom checks ArgMax and ArgMin on every src type and both
// index types against argRef, on random shapes, axes and strides, with
// ties, NaNs, infinities and signed zeros.
func TestArgRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 1))
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := range n {
		c := randomArgCase(r)
		nanRate := []int{0, 3, 40, 400}[i%4]
		for _, dt := range argSrcTypes {
			checkArgType(t, r, c, dt, nanRate)
		}
	}
}

// TestArgPatterns checks the axis patterns one by one on sizes around
// the vector widths: innermost, middle, outer, strided and size-1 axes.
func TestArgPatterns(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 2))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 255, 257, 1000} {
		for _, c := range []argCase{
			{dims: []int{3, n}, strides: []int{n, 1}, axis: 1},
			{dims: []int{3, n}, strides: []int{n, 1}, axis: 0},
			{dims: []int{n, 5}, strides: []int{5, 1}, axis: 0},
			{dims: []int{2, n, 3}, strides: []int{3 * n, 3, 1}, axis: 1},
			{dims: []int{n, 2, 3}, strides: []int{6, 3, 1}, axis: 0},
			{dims: []int{4, n}, strides: []int{1, 4}, axis: 0},
			{dims: []int{4, n}, strides: []int{1, 4}, axis: 1},
			{dims: []int{n, 4}, strides: []int{8, 2}, axis: 1},
			{dims: []int{n, 1, 3}, strides: []int{3, 3, 1}, axis: 1},
		} {
			for _, nanRate := range []int{0, 5} {
				checkArg[int64, float32](t, r, c, dtypes.F32, nanRate)
				checkArg[int32, uint16](t, r, c, dtypes.BF16, nanRate)
				checkArg[int32, int8](t, r, c, dtypes.S8, 0)
			}
		}
	}
}

// TestArgNaNAndTies pins the rules on small rows.
func TestArgNaNAndTies(t *testing.T) {
	nan := float32(math.NaN())
	negz := float32(math.Copysign(0, -1))
	for _, tc := range []struct {
		src                           []float32
		max, maxLast, minIdx, minLast int64
	}{
		{[]float32{1, 3, 3, 2}, 1, 2, 0, 0},
		{[]float32{1, nan, 3, nan}, 1, 3, 1, 3},
		{[]float32{negz, 0, negz}, 0, 2, 0, 2},
		{[]float32{float32(math.Inf(-1)), float32(math.Inf(-1))}, 0, 1, 0, 1},
		{[]float32{5}, 0, 0, 0, 0},
	} {
		got := make([]int64, 4)
		n := []int{len(tc.src)}
		for i, f := range []func([]int64) error{
			func(d []int64) error { return ArgMax(d, tc.src, n, 0) },
			func(d []int64) error { return ArgMax(d, tc.src, n, 0, SelectLastIndex(true)) },
			func(d []int64) error { return ArgMin(d, tc.src, n, 0) },
			func(d []int64) error { return ArgMin(d, tc.src, n, -1, SelectLastIndex(true)) },
		} {
			if err := f(got[i : i+1]); err != nil {
				t.Fatal(err)
			}
		}
		if want := []int64{tc.max, tc.maxLast, tc.minIdx, tc.minLast}; !slices.Equal(got, want) {
			t.Errorf("%v: got %v, want %v", tc.src, got, want)
		}
	}
}

// TestArgMinMaxGoMLX checks the GoMLX-shaped call on its doc's examples.
func TestArgMinMaxGoMLX(t *testing.T) {
	x := []float32{2, 0, 7, -3, 4, 2}
	dst := make([]byte, 8)
	if err := ArgMinMax(dst, x, []int{2, 3}, 1, dtypes.S32, true); err != nil {
		t.Fatal(err)
	}
	if got := viewAs[int32](dst); !slices.Equal(got, []int32{1, 0}) {
		t.Errorf("isMin axis 1: %v, want [1 0]", got)
	}
	dst = make([]byte, 24)
	if err := ArgMinMax(dst, x, []int{2, 3}, 0, dtypes.S64, false); err != nil {
		t.Fatal(err)
	}
	if got := viewAs[int64](dst); !slices.Equal(got, []int64{0, 1, 0}) {
		t.Errorf("max axis 0: %v, want [0 1 0]", got)
	}
	if err := ArgMinMax(dst, x, []int{2, 3}, 0, dtypes.F32, false); !errors.Is(err, status.InvalidDataType) {
		t.Errorf("f32 output: %v, want InvalidDataType", err)
	}
}

// TestArgRefusals checks each refusal of ArgMax's arguments.
func TestArgRefusals(t *testing.T) {
	src := make([]float32, 12)
	dst := make([]int32, 4)
	for _, tc := range []struct {
		name string
		err  error
		want status.Status
	}{
		{"axis out of range", ArgMax(dst, src, []int{3, 4}, 2), status.InvalidArguments},
		{"axis below -rank", ArgMax(dst, src, []int{3, 4}, -3), status.InvalidArguments},
		{"empty axis", ArgMax(dst, []float32{}, []int{3, 0}, 1), status.InvalidShape},
		{"short src", ArgMax(dst, src[:11], []int{3, 4}, 1), status.InvalidArguments},
		{"short dst", ArgMax(dst[:2], src, []int{3, 4}, 1), status.InvalidArguments},
		{"negative dim", ArgMax(dst, src, []int{-3, 4}, 1), status.InvalidShape},
		{"post-op", ArgMax(dst, src, []int{3, 4}, 1, Post(PostReLU, 0, 0)), status.InvalidArguments},
		{"dst type", ArgMax(dst, src, []int{3, 4}, 1, DstType(dtypes.S32)), status.InvalidArguments},
		{"zero option", ArgMax(dst, src, []int{3, 4}, 1, Option{}), status.InvalidArguments},
		{"unnamed 16-bit", ArgMax(dst, make([]uint16, 12), []int{3, 4}, 1), status.InvalidDataType},
		{"overlapping dst", ArgMax(dst, src, []int{3, 4}, 1, DstStrides([]int{0})), status.InvalidArguments},
		{"SelectLastIndex on Max", Max(make([]float32, 3), src, []int{3, 4}, []int{1}, SelectLastIndex(true)), status.InvalidArguments},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := ArgMin(dst, src, []int{3, 4}, 5); err == nil || !strings.Contains(err.Error(), "reduce.ArgMin:") {
		t.Errorf("error %v does not name reduce.ArgMin", err)
	}
	// Interleaved dst strides are refused in the user's terms: dst's own
	// strides and dims, not the axis's.
	err := ArgMax(make([]int32, 11), make([]float32, 18), []int{3, 3, 2}, 2, DstStrides([]int{3, 2}))
	if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "dst strides [3 2] over the kept dims [3 3] do not nest") {
		t.Errorf("interleaved dst strides: %v", err)
	}
}

// TestArgThreads checks that results do not depend on the thread count.
func TestArgThreads(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 3))
	for _, dims := range [][]int{{8, 32000}, {600, 700}} {
		for axis := range 2 {
			vals := argValues(r, dims[0]*dims[1], dtypes.F32, 1000)
			src := encode[float32](vals, dtypes.F32)
			var want []int32
			for _, th := range []int{1, 2, 3, 7} {
				prev := jit.SetThreads(th)
				dst := make([]int32, dims[1-axis])
				err := ArgMax(dst, src, dims, axis)
				jit.SetThreads(prev)
				if err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = dst
				} else if !slices.Equal(dst, want) {
					t.Fatalf("%v axis %d: %d threads differ from 1", dims, axis, th)
				}
			}
		}
	}
}

// TestArgEmptyAndAliased: on every ISA, an index reduction with no
// outputs shares no compiled kernel with one of a single output over the
// same axis, in either order (each wrote nothing, or was refused, for
// the other), and a dst inside src is refused on the interpreter's path
// too (f64 and the wider integers run there on every ISA).
func TestArgEmptyAndAliased(t *testing.T) {
	for _, isa := range isas() {
		withISA(t, isa)
		for _, emptyFirst := range []bool{true, false} {
			src := []float32{11, 9, 2}
			one, none := []int64{-1}, []int64{-7}
			run := func() (errOne, errNone error) {
				if emptyFirst {
					errNone = ArgMax(none[:0], src[:0], []int{0, 3}, 1)
					errOne = ArgMax(one, src, []int{3}, 0)
				} else {
					errOne = ArgMax(one, src, []int{3}, 0)
					errNone = ArgMax(none[:0], src[:0], []int{0, 3}, 1)
				}
				return
			}
			errOne, errNone := run()
			if errOne != nil || errNone != nil || one[0] != 0 || none[0] != -7 {
				t.Errorf("%v, empty first %v: [3] gives %v (%v), [0 3] %v (%v); want [0] and nothing written",
					isa, emptyFirst, one, errOne, none, errNone)
			}
		}
		for _, tc := range []struct {
			name string
			run  func() error
		}{
			{"s32 src", func() error {
				buf := []int32{0, 1, 9, 5, 4, 3}
				return ArgMax(buf[3:5], buf, []int{2, 3}, 1)
			}},
			{"f64 src", func() error {
				buf := []int64{0, 1, 9, 5, 4, 3}
				src := unsafe.Slice((*float64)(unsafe.Pointer(&buf[0])), len(buf))
				return ArgMin(buf[3:5], src, []int{2, 3}, 1)
			}},
		} {
			if err := tc.run(); !errors.Is(err, status.InvalidArguments) {
				t.Errorf("%v, %s: dst inside src: %v, want InvalidArguments", isa, tc.name, err)
			}
		}
	}
}

// TestArgMinMaxErrorsName: ArgMinMax's refusals name ArgMinMax, the call
// made, for either isMin, not the ArgMax or ArgMin it runs as.
func TestArgMinMaxErrorsName(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6}
	for _, isMin := range []bool{false, true} {
		for name, err := range map[string]error{
			"dst short":   ArgMinMax(make([]byte, 3), x, []int{2, 3}, 1, dtypes.S32, isMin),
			"axis":        ArgMinMax(make([]byte, 8), x, []int{2, 3}, 2, dtypes.S32, isMin),
			"rank 0":      ArgMinMax(make([]byte, 8), x, nil, 0, dtypes.S64, isMin),
			"post-op":     ArgMinMax(make([]byte, 8), x, []int{2, 3}, 1, dtypes.S32, isMin, Post(PostAbs, 0, 0)),
			"zero opt":    ArgMinMax(make([]byte, 8), x, []int{2, 3}, 1, dtypes.S32, isMin, Option{}),
			"u16 no type": ArgMinMax(make([]byte, 8), []uint16{1, 2}, []int{2}, 0, dtypes.S32, isMin),
			"u16 f32":     ArgMinMax(make([]byte, 8), []uint16{1, 2}, []int{2}, 0, dtypes.S32, isMin, SrcType(dtypes.F32)),
			"out type":    ArgMinMax(make([]byte, 8), x, []int{2, 3}, 1, dtypes.F32, isMin),
		} {
			if err == nil || !strings.Contains(err.Error(), "reduce.ArgMinMax: ") {
				t.Errorf("isMin %v, %s: %v, want an error naming reduce.ArgMinMax", isMin, name, err)
			}
		}
	}
}
