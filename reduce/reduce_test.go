package reduce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// bf16 and f16 are a framework's own 16-bit types: named types whose
// underlying type is uint16, carrying no data type.
type (
	bf16 uint16
	f16  uint16
)

// isas is the interpreter and every JIT ISA this machine has under
// GDNN_MAX_CPU_ISA.
func isas() []jit.ISA {
	list := []jit.ISA{jit.None}
	if d := jit.EffectiveISA(); d != jit.None {
		list = append(list, d)
		if d == jit.AVX512 {
			list = append(list, jit.AVX2)
		}
	}
	return list
}

// withISA caps the ISA for the rest of the test.
func withISA(t *testing.T, isa jit.ISA) {
	prev := jit.SetMaxISA(isa)
	t.Cleanup(func() { jit.SetMaxISA(prev) })
}

// shapeCase is a problem in the one-call API's terms.
type shapeCase struct {
	dims, axes             []int
	keep                   bool
	srcStrides, dstStrides []int // nil: dense
}

var shapeCases = []shapeCase{
	{dims: []int{6, 12, 10, 24}, axes: []int{2, 3}},                                                               // anchor A
	{dims: []int{64, 1024}, axes: []int{-1}, keep: true},                                                          // anchor B, kept dim
	{dims: []int{5, 7, 9}, axes: []int{-3, 1}},                                                                    // outer and middle, negative
	{dims: []int{4, 300}, axes: []int{0}},                                                                         // columns
	{dims: []int{2, 5, 6, 8}, axes: []int{1, 2}, keep: true},                                                      // GAP over NHWC's H, W
	{dims: []int{3, 4, 5}, axes: []int{}},                                                                         // nothing reduced
	{dims: []int{3, 4, 5}, axes: []int{-1, 0, 1}},                                                                 // everything
	{dims: []int{}, axes: nil},                                                                                    // rank 0
	{dims: []int{3, 0, 4}, axes: []int{1}},                                                                        // empty reduction
	{dims: []int{3, 7}, axes: []int{1}, srcStrides: []int{9, 1}},                                                  // padded rows
	{dims: []int{4, 6, 5}, axes: []int{1}, srcStrides: []int{1, 20, 4}},                                           // permuted
	{dims: []int{4, 6, 5}, axes: []int{-2}, keep: true, srcStrides: []int{30, 5, 1}, dstStrides: []int{12, 0, 2}}, // padded dst
	{dims: []int{4, 6, 5}, axes: []int{1}, dstStrides: []int{1, 4}},                                               // transposed dst
}

var typePairs = [][2]dtypes.DataType{
	{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32},
}

// TestAgainstOracle runs every kind, type pair and shape case on the
// interpreter and every ISA, and checks dst against internal/oracle's float64
// reference (then the post-ops, in f32) within the dst type's tolerance,
// and that no element outside the outputs is written.
func TestAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, isa := range isas() {
		withISA(t, isa)
		for op := range opCount {
			for ci, c := range shapeCases {
				for _, tp := range typePairs {
					for _, post := range [][]plan.PostOp{nil, {{Kind: ops.Clamp, Alpha: -0.5, Beta: 100}}} {
						what := fmt.Sprintf("%v %v case %d %v:%v post %v", isa, op, ci, tp[0], tp[1], post)
						checkCase(t, r, op, c, tp, post, what)
					}
				}
			}
		}
	}
}

// TestPowAgainstOracle runs the Pow post-op with every beta gdnn takes
// after a max and a min (exact results of both signs) and an L2 norm, on
// the interpreter and every JIT ISA. (After a mean near 0, x^-2 would
// magnify the f32 sum's rounding past the oracle's tolerance.)
func TestPowAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, isa := range isas() {
		withISA(t, isa)
		for _, beta := range ops.PowBetas {
			for _, op := range []Op{OpMax, OpMin, OpL2} {
				for ci, c := range shapeCases[:4] {
					for _, tp := range typePairs {
						what := fmt.Sprintf("%v %v Pow %v case %d %v:%v", isa, op, beta, ci, tp[0], tp[1])
						checkCase(t, r, op, c, tp, []plan.PostOp{{Kind: ops.Pow, Beta: beta}}, what)
					}
				}
			}
		}
	}
}

// checkCase runs one case through the API and compares with the oracle.
func checkCase(t *testing.T, r *rand.Rand, op Op, c shapeCase, tp [2]dtypes.DataType, post []plan.PostOp, what string) {
	t.Helper()
	p := problemOf(op, c, tp)
	p.PostOps = append(p.PostOps, post...)
	srcSpan, err := plan.SpanElems(p.Dims, p.SrcStrides)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := -1.5, 1.5
	switch op {
	case OpProd:
		lo, hi = 0.9, 1.1
	case OpLogSum:
		lo, hi = 0.25, 1.5
	}
	vals := make([]float32, srcSpan)
	for i := range vals {
		vals[i] = float32(lo + (hi-lo)*r.Float64())
	}
	var kept, keptStrides []int64
	for i, d := range p.Dims {
		if !p.Reduce[i] {
			kept, keptStrides = append(kept, d), append(keptStrides, p.DstStrides[i])
		}
	}
	dstSpan, err := plan.SpanElems(kept, keptStrides)
	if err != nil {
		t.Fatal(err)
	}
	dstLen := dstSpan + 3 // room that must stay untouched

	opts := []Option{KeepDims(c.keep), SrcType(tp[0]), DstType(tp[1])}
	if c.srcStrides != nil {
		opts = append(opts, SrcStrides(c.srcStrides))
	}
	if c.dstStrides != nil {
		opts = append(opts, DstStrides(c.dstStrides))
	}
	for _, po := range post {
		opts = append(opts, Post(postKindOf(t, po.Kind), po.Alpha, po.Beta))
	}

	var srcBytes, dstBytes []byte
	switch tp[0] {
	case dtypes.F32:
		srcBytes, dstBytes, err = runTyped(op, vals, tp[1], dstLen, c, opts)
	case dtypes.BF16:
		s := make([]bf16, len(vals))
		for i, v := range vals {
			s[i] = bf16(dtypes.F32ToBF16(v))
		}
		srcBytes, dstBytes, err = runTyped(op, s, tp[1], dstLen, c, opts)
	default:
		s := make([]f16, len(vals))
		for i, v := range vals {
			s[i] = f16(dtypes.F32ToF16(v))
		}
		srcBytes, dstBytes, err = runTyped(op, s, tp[1], dstLen, c, opts)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	written := make([]bool, dstLen)
	for _, o := range oracle.Reduce(p, srcBytes) {
		written[o.Dst] = true
		want := o.Value
		for _, pk := range p.PostOps {
			want = float64(plan.Eltwise(pk.Kind, pk.Alpha, pk.Beta, float32(want)))
		}
		got := oracle.Get(tp[1], dstBytes, o.Dst)
		if tp[1] != dtypes.F32 {
			// Past a 16-bit dst's range the value stored is an infinity.
			b := make([]byte, 2)
			dtypes.StoreF32(tp[1], b, 0, float32(want))
			if w := float64(dtypes.LoadF32(tp[1], b, 0)); math.IsInf(w, 0) {
				want = w
			}
		}
		tol := rtol(tp[1])*math.Abs(want) + 1e-6
		if p.Combine == plan.CombineAdd && !p.IsLogSumExp() {
			tol += 1e-6 * o.Mag
		}
		if math.IsInf(want, 0) {
			tol = 0 // an infinity only matches itself (Inf-Inf is NaN)
		}
		if !(math.Abs(got-want) <= tol || math.IsNaN(want) && math.IsNaN(got) || got == want) {
			t.Errorf("%s: dst[%d] = %g, oracle %g", what, o.Dst, got, want)
			return
		}
	}
	for i, w := range written {
		if !w && oracle.Get(tp[1], dstBytes, int64(i)) != sentinel {
			t.Errorf("%s: dst[%d] outside every output was written", what, i)
			return
		}
	}
}

// sentinel fills dst before a run; it is exact in every dst type.
const sentinel = 12288.0

// runTyped runs op on src into a fresh dst of dstLen elements of type
// ddt filled with the sentinel, and returns both as bytes.
func runTyped[S Src](op Op, src []S, ddt dtypes.DataType, dstLen int64, c shapeCase, opts []Option) ([]byte, []byte, error) {
	switch ddt {
	case dtypes.F32:
		dst := make([]float32, dstLen)
		for i := range dst {
			dst[i] = sentinel
		}
		err := Reduce(op, dst, src, c.dims, c.axes, opts...)
		return bytesOf(src), bytesOf(dst), err
	case dtypes.BF16:
		dst := make([]bf16, dstLen)
		for i := range dst {
			dst[i] = bf16(dtypes.F32ToBF16(sentinel))
		}
		err := Reduce(op, dst, src, c.dims, c.axes, opts...)
		return bytesOf(src), bytesOf(dst), err
	}
	dst := make([]f16, dstLen)
	for i := range dst {
		dst[i] = f16(dtypes.F32ToF16(sentinel))
	}
	err := Reduce(op, dst, src, c.dims, c.axes, opts...)
	return bytesOf(src), bytesOf(dst), err
}

// problemOf builds the plan.Problem c describes, independently of the
// package's own key building: per-src-dim dst strides, dense where not
// given.
func problemOf(op Op, c shapeCase, tp [2]dtypes.DataType) *plan.Problem {
	r := len(c.dims)
	red, post := refReductions[op], ops.Kind(0)
	if op == OpLogSum {
		post = ops.Log
	}
	p := &plan.Problem{Reduction: red, SrcDT: tp[0], DstDT: tp[1], Reduce: make([]bool, r)}
	for _, a := range c.axes {
		p.Reduce[(a+r)%r] = true
	}
	for _, d := range c.dims {
		p.Dims = append(p.Dims, int64(d))
	}
	p.SrcStrides = make([]int64, r)
	if c.srcStrides != nil {
		for i, s := range c.srcStrides {
			p.SrcStrides[i] = int64(s)
		}
	} else {
		st := int64(1)
		for i := r - 1; i >= 0; i-- {
			p.SrcStrides[i] = st
			st *= p.Dims[i]
		}
	}
	p.DstStrides = make([]int64, r)
	if c.dstStrides != nil {
		j := 0
		for i := range r {
			if p.Reduce[i] && !c.keep {
				continue
			}
			if !p.Reduce[i] {
				p.DstStrides[i] = int64(c.dstStrides[j])
			}
			j++
		}
	} else {
		st := int64(1)
		for i := r - 1; i >= 0; i-- {
			if !p.Reduce[i] {
				p.DstStrides[i] = st
				st *= p.Dims[i]
			}
		}
	}
	if post != 0 {
		p.PostOps = append(p.PostOps, plan.PostOp{Kind: post})
	}
	return p
}

// refReductions spells each kind in plan terms, written out here apart
// from Op.reduction so that a slip there shows up.
var refReductions = [...]plan.Reduction{
	OpMean:      {},
	OpSum:       {Finalize: plan.FinalizeNone},
	OpMax:       {Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
	OpMin:       {Combine: plan.CombineMin, Finalize: plan.FinalizeNone},
	OpProd:      {Combine: plan.CombineMul, Finalize: plan.FinalizeNone},
	OpL1:        {Transform: plan.TransformAbs, Finalize: plan.FinalizeNone},
	OpL2:        {Transform: plan.TransformSquare, Finalize: plan.FinalizeRootAddEps, P: 2},
	OpSumSquare: {Transform: plan.TransformSquare, Finalize: plan.FinalizeNone},
	OpLogSum:    {Finalize: plan.FinalizeNone},
	OpLogSumExp: plan.LogSumExp,
}

// TestKindsByHand checks every kind on one row against values worked
// out by hand, in f32 and bf16, on the interpreter and every ISA.
func TestKindsByHand(t *testing.T) {
	row := []float32{1, 2, -3, 4}
	want := [...]float64{
		OpMean: 1, OpSum: 4, OpMax: 4, OpMin: -3, OpProd: -24, OpL1: 10, OpL2: math.Sqrt(30), OpSumSquare: 30,
		OpLogSum: math.Log(4), OpLogSumExp: math.Log(math.Exp(1) + math.Exp(2) + math.Exp(-3) + math.Exp(4)),
	}
	for _, isa := range isas() {
		withISA(t, isa)
		for op := range opCount {
			var dst [1]float32
			if err := Reduce(op, dst[:], row, []int{4}, []int{0}); err != nil {
				t.Fatalf("%v %v: %v", isa, op, err)
			}
			if math.Abs(float64(dst[0])-want[op]) > 1e-6*math.Abs(want[op]) {
				t.Errorf("%v %v(%v) = %v, want %v", isa, op, row, dst[0], want[op])
			}
			src := make([]bf16, 4)
			for i, v := range row {
				src[i] = bf16(dtypes.F32ToBF16(v))
			}
			var dst16 [1]bf16
			if err := Reduce(op, dst16[:], src, []int{4}, []int{-1}, Type(dtypes.BF16)); err != nil {
				t.Fatalf("%v %v bf16: %v", isa, op, err)
			}
			if got := float64(dtypes.BF16ToF32(uint16(dst16[0]))); math.Abs(got-want[op]) > math.Abs(want[op])/128 {
				t.Errorf("%v %v bf16(%v) = %v, want %v", isa, op, row, got, want[op])
			}
		}
	}
}

// rtol is the relative tolerance of a dst type: half an ulp of its
// rounding plus f32 arithmetic.
func rtol(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.BF16:
		return 1.0 / 128
	case dtypes.F16:
		return 1.0 / 1024
	}
	return 2e-5
}

// TestRandomAgainstOracle draws random problems (rank 0 to 4, dims 0 to
// 9, any axes with negative spellings in any order, keep_dims either way,
// permuted and padded src and dst strides) and checks every kind and type
// pair on the interpreter and every ISA against the oracle.
func TestRandomAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 60 {
		c := randomCase(r)
		for _, isa := range isas() {
			withISA(t, isa)
			for op := range opCount {
				tp := typePairs[r.IntN(len(typePairs))]
				what := fmt.Sprintf("random %d %v %v %+v %v:%v", i, isa, op, c, tp[0], tp[1])
				checkCase(t, r, op, c, tp, nil, what)
			}
		}
	}
}

// randomCase draws one problem for TestRandomAgainstOracle.
func randomCase(r *rand.Rand) shapeCase {
	rank := r.IntN(5)
	c := shapeCase{dims: make([]int, rank), keep: r.IntN(2) == 0}
	for i := range c.dims {
		c.dims[i] = 1 + r.IntN(9)
		if r.IntN(25) == 0 {
			c.dims[i] = 0
		}
	}
	for i := range rank {
		if r.IntN(2) == 0 {
			a := i
			if r.IntN(2) == 0 {
				a -= rank
			}
			c.axes = append(c.axes, a)
		}
	}
	r.Shuffle(len(c.axes), func(i, j int) { c.axes[i], c.axes[j] = c.axes[j], c.axes[i] })
	if r.IntN(2) == 0 {
		c.srcStrides = layout(r, c.dims)
	}
	if r.IntN(2) == 0 {
		reduced := make([]bool, rank)
		for _, a := range c.axes {
			reduced[(a+rank)%rank] = true
		}
		var dstDims []int
		for i, d := range c.dims {
			switch {
			case !reduced[i]:
				dstDims = append(dstDims, d)
			case c.keep:
				dstDims = append(dstDims, 1)
			}
		}
		c.dstStrides = layout(r, dstDims)
	}
	return c
}

// layout returns strides for dims in a random dim order, each dim padded
// by 0 or 2 elements: nested, so no two indices share an element.
func layout(r *rand.Rand, dims []int) []int {
	strides := make([]int, len(dims))
	st := 1
	for _, d := range r.Perm(len(dims)) {
		strides[d] = st
		st *= max(dims[d], 1) + 2*r.IntN(2)
	}
	return strides
}
