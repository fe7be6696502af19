package jit

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// operandTypes are the binary operand types plans take (plan.IsOperandType).
var operandTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}

// operandValue draws a binary operand value of type dt for a dst of type
// ddt: near 1 for the float types; any value of an 8-bit type; for s32
// small values or, one time in four, any value (beyond 2^24 the load
// rounds to f32, and MaxInt32 rounds up to 2^31). For an f16 dst, whose
// range ends at 65504, integers within [-32, 32] only.
func operandValue(dt, ddt dtypes.DataType, r *rand.Rand) float32 {
	switch {
	case !dt.IsInt():
		return 0.5 + r.Float32()
	case ddt == dtypes.F16:
		lo := -32
		if dt == dtypes.U8 {
			lo = 0
		}
		return float32(lo + r.IntN(33-lo))
	case dt == dtypes.S32 && r.IntN(4) == 0:
		return float32(int32(r.Uint32()))
	case dt == dtypes.S32:
		return float32(r.IntN(2001) - 1000)
	}
	lo, hi := intRange(dt)
	return float32(lo + float64(r.IntN(int(hi-lo)+1)))
}

// tcase is a test problem with its buffers.
type tcase struct {
	p    *plan.Problem
	src  []byte
	bins [][]byte
	dstN int64 // dst bytes
}

// layout returns element strides for dims laid out in the given order
// (order[0] outermost), each row padded by pad elements.
func layout(dims []int64, order []int, pad int64) []int64 {
	st := make([]int64, len(dims))
	s := int64(1)
	for i := len(order) - 1; i >= 0; i-- {
		d := order[i]
		st[d] = s
		s *= max(dims[d], 1)
		if i == len(order)-1 {
			s += pad
		}
	}
	return st
}

// spec describes a problem to build.
type spec struct {
	dims     []int64
	reduce   []bool
	sdt, ddt dtypes.DataType
	order    []int // src layout order, nil: plain
	pad      int64 // src padding after the innermost dim
	post     []plan.PostOp
	binBcast [][]bool // per binary post-op, per dim: broadcast (stride 0)
	lo, hi   float32  // src value range
	dorder   []int    // dst layout order, nil: plain
	dpad     int64    // dst padding after the innermost dim
}

func identity(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}

// build makes the problem and fills src and operands with values drawn
// from r, rounded to their data types.
func (s spec) build(t testing.TB, r *rand.Rand) *tcase {
	t.Helper()
	rank := len(s.dims)
	order := s.order
	if order == nil {
		order = identity(rank)
	}
	p := &plan.Problem{SrcDT: s.sdt, DstDT: s.ddt, Dims: s.dims, Reduce: s.reduce,
		SrcStrides: layout(s.dims, order, s.pad)}
	ddims := make([]int64, rank)
	for i, d := range s.dims {
		ddims[i] = d
		if s.reduce[i] {
			ddims[i] = 1
		}
	}
	dorder := s.dorder
	if dorder == nil {
		dorder = identity(rank)
	}
	p.DstStrides = layout(ddims, dorder, s.dpad)
	bi := 0
	for _, op := range s.post {
		if op.Kind.IsBinary() {
			bd := make([]int64, rank)
			for i := range bd {
				bd[i] = ddims[i]
				if s.binBcast != nil && s.binBcast[bi][i] {
					bd[i] = 1
				}
			}
			op.BinStrides = layout(bd, identity(rank), 0)
			for i := range bd {
				if bd[i] == 1 {
					op.BinStrides[i] = 0
				}
			}
			bi++
		}
		p.PostOps = append(p.PostOps, op)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("test problem invalid: %v", err)
	}
	c := &tcase{p: p}
	n, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	c.src = make([]byte, n)
	lo, hi := s.lo, s.hi
	if lo == 0 && hi == 0 {
		lo, hi = 0.5, 1.5
	}
	for i := int64(0); i < n/esz(s.sdt); i++ {
		dtypes.StoreF32(s.sdt, c.src, i, lo+(hi-lo)*r.Float32())
	}
	for i := range p.BinaryCount() {
		nb, err := p.BinBytes(i)
		if err != nil {
			t.Fatal(err)
		}
		dt, _ := binDT(p, i)
		b := make([]byte, nb)
		for j := int64(0); j < nb/esz(dt); j++ {
			dtypes.StoreF32(dt, b, j, operandValue(dt, s.ddt, r))
		}
		c.bins = append(c.bins, b)
	}
	if c.dstN, err = p.DstBytes(); err != nil {
		t.Fatal(err)
	}
	return c
}

func binDT(p *plan.Problem, i int) (dtypes.DataType, int) {
	n := 0
	for j, op := range p.PostOps {
		if op.Kind.IsBinary() {
			if n == i {
				return op.BinDT, j
			}
			n++
		}
	}
	return dtypes.Undef, -1
}

// newDst returns a dst buffer filled with a sentinel byte, so unwritten
// outputs and writes outside the outputs show.
func (c *tcase) newDst() []byte {
	d := make([]byte, c.dstN)
	for i := range d {
		d[i] = 0x7f
	}
	return d
}

// compile canonicalizes and compiles the problem.
func (c *tcase) compile(t testing.TB) *Kernel {
	t.Helper()
	pl, err := plan.Canonicalize(c.p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	k, err := Compile(pl)
	if err != nil {
		t.Fatalf("Compile(%s): %v", pl, err)
	}
	return k
}

// run compiles and runs the problem, returning dst.
func (c *tcase) run(t testing.TB) []byte {
	t.Helper()
	dst := c.newDst()
	if err := c.compile(t).Run(c.src, dst, c.bins); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return dst
}

// refPost applies a post-op in float64 with the textbook formulas (the
// kinds the tests use).
func refPost(op plan.PostOp, x, b float64) float64 {
	alpha, beta := float64(op.Alpha), float64(op.Beta)
	switch op.Kind {
	case ops.Elu:
		if x > 0 {
			return x
		}
		return alpha * (math.Exp(x) - 1)
	case ops.Exp:
		return math.Exp(x)
	case ops.GELUErf:
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
	case ops.GELUTanh:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	case ops.Log:
		return math.Log(x)
	case ops.Mish:
		return x * math.Tanh(math.Log(1+math.Exp(x)))
	case ops.Sigmoid:
		return 1 / (1 + math.Exp(-x))
	case ops.SoftPlus:
		return math.Log(1+math.Exp(beta*x)) / beta
	case ops.Tanh:
		return math.Tanh(x)
	case ops.ReLU:
		return math.Max(x, 0)
	case ops.Abs:
		return math.Abs(x)
	case ops.Square:
		return x * x
	case ops.Add:
		return x + b
	case ops.Subtract:
		return x - b
	case ops.Multiply:
		return x * b
	case ops.Maximum:
		return math.Max(x, b)
	case ops.Minimum:
		return math.Min(x, b)
	}
	panic(fmt.Sprintf("test: no float64 reference for %v", op.Kind))
}

// reference computes every output of p in float64 straight from the
// problem (internal/oracle: no plan involved), post-ops with refPost: a map
// from dst element index to value.
func reference(c *tcase) map[int64]float64 {
	key := fmt.Sprintf("%#v %x", *c.p, contentHash(c.src, c.bins)) // %#v: Problem prints as its Reduction
	refCache.Lock()
	defer refCache.Unlock()
	for i, k := range refCache.keys {
		if k == key {
			return refCache.refs[i]
		}
	}
	ref := computeReference(c)
	refCache.keys = append(refCache.keys, key)
	refCache.refs = append(refCache.refs, ref)
	refCache.outputs += len(ref)
	for len(refCache.refs) > 1 && refCache.outputs > maxCachedOutputs {
		refCache.outputs -= len(refCache.refs[0])
		refCache.keys, refCache.refs = refCache.keys[1:], refCache.refs[1:]
	}
	return ref
}

// refCache keeps the references of the last cases checked, by their
// problem and bytes, up to maxCachedOutputs outputs in all: a case is
// checked on every ISA, thread count and budget, often rebuilt from the
// same seed for each, and its reference costs more than any of those
// runs.
var refCache struct {
	sync.Mutex
	keys    []string
	refs    []map[int64]float64
	outputs int
}

const maxCachedOutputs = 1 << 20

// refSeed keys contentHash for the whole test binary.
var refSeed = maphash.MakeSeed()

// contentHash is a hash of src and the operands' bytes.
func contentHash(src []byte, bins [][]byte) uint64 {
	var h maphash.Hash
	h.SetSeed(refSeed)
	for _, b := range append([][]byte{src}, bins...) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return h.Sum64()
}

// computeReference is reference without the cache.
func computeReference(c *tcase) map[int64]float64 {
	out := map[int64]float64{}
	for _, o := range oracle.Reduce(c.p, c.src) {
		v, bi := o.Value, 0
		for _, op := range c.p.PostOps {
			var b float64
			if op.Kind.IsBinary() {
				dt, _ := binDT(c.p, bi)
				b = oracle.Get(dt, c.bins[bi], o.Bins[bi])
				bi++
			}
			v = refPost(op, v, b)
		}
		out[o.Dst] = v
	}
	return out
}

// intRange is the range of integer type dt.
func intRange(dt dtypes.DataType) (lo, hi float64) {
	switch dt {
	case dtypes.S8:
		return math.MinInt8, math.MaxInt8
	case dtypes.U8:
		return 0, math.MaxUint8
	}
	return math.MinInt32, math.MaxInt32
}

// rtol is the relative tolerance for a result in dt: the final rounding
// of the dst type plus f32 arithmetic on the way.
func rtol(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.BF16:
		return 1.0 / 128
	case dtypes.F16:
		return 1.0 / 1024
	}
	return 2e-5
}

// checkRef compares dst with the float64 reference and checks that bytes
// outside the outputs kept the sentinel.
func checkRef(t testing.TB, c *tcase, dst []byte, what string) {
	t.Helper()
	ref := reference(c)
	dt := c.p.DstDT
	sz := esz(dt)
	written := make([]bool, int64(len(dst))/sz)
	bad := 0
	for off, want := range ref {
		written[off] = true
		got := oracle.Get(dt, dst, off)
		ok := got == want || math.Abs(got-want) <= rtol(dt)*math.Abs(want)+1e-6 || (math.IsNaN(want) && math.IsNaN(got))
		if dt.IsInt() {
			// The f32 result within f32's tolerance, then rounded to
			// an integer (NaN to 0) and saturated.
			w := want
			if math.IsNaN(w) {
				w = 0
			}
			lo, hi := intRange(dt)
			w = min(max(w, lo), hi)
			ok = math.Abs(got-w) <= 0.5+rtol(dtypes.F32)*math.Abs(w)
		}
		if !ok {
			if bad < 5 {
				t.Errorf("%s: %v dst[%d] = %g, reference %g", what, c.p.Dims, off, got, want)
			}
			bad++
		}
	}
	for i, w := range written {
		if w {
			continue
		}
		for j := int64(i) * sz; j < int64(i+1)*sz; j++ {
			if dst[j] != 0x7f {
				t.Errorf("%s: byte %d outside every output was written (%#x)", what, j, dst[j])
				return
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d outputs wrong", what, bad, len(ref))
	}
}

// withBudget lowers the per-call budget for the test, so small shapes take
// the blocked, tiled and two-stage paths.
func withBudget(t testing.TB, b int64) {
	old := callBudget
	callBudget = b
	t.Cleanup(func() { callBudget = old })
}

// withThreads sets the thread count for the test.
func withThreads(t testing.TB, n int) {
	old := SetThreads(n)
	t.Cleanup(func() { SetThreads(old) })
}

// freshCache empties the kernel cache now and when the test ends, so
// kernels a test gets (possibly from a substitute emitter) never leak into
// another test.
func freshCache(t testing.TB) {
	e, b := SetCacheCapacity(0, 0)
	SetCacheCapacity(e, b)
	t.Cleanup(func() {
		e, b := SetCacheCapacity(0, 0)
		SetCacheCapacity(e, b)
	})
}

// middleAxis canonicalises a dense mean of dims over the axis before the
// last (axis 0 of 2-D).
func middleAxis(t *testing.T, dt dtypes.DataType, dims ...int64) *plan.Plan {
	t.Helper()
	rank := len(dims)
	reduce := make([]bool, rank)
	reduce[rank-2] = true
	ss, ds := make([]int64, rank), make([]int64, rank)
	for i, n, m := rank-1, int64(1), int64(1); i >= 0; i-- {
		ss[i], ds[i] = n, m
		n *= dims[i]
		if !reduce[i] {
			m *= dims[i]
		}
	}
	pl, err := plan.Canonicalize(&plan.Problem{SrcDT: dt, DstDT: dt, Dims: dims, SrcStrides: ss, Reduce: reduce, DstStrides: ds})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// TestReferenceFollowsItsCase: the cached reference (refCache) is
// recomputed when the case's src, operands or problem change.
func TestReferenceFollowsItsCase(t *testing.T) {
	s := spec{dims: []int64{4, 8}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
		post: []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}}, binBcast: [][]bool{{false, false}}}
	c := s.build(t, rand.New(rand.NewPCG(1, 2)))
	set := func(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }
	set(c.src, 0)
	set(c.bins[0], 0)
	before := reference(c)[0]
	for _, change := range []struct {
		what string
		do   func()
	}{
		{"src element 0 made 64", func() { set(c.src, 64) }},
		{"operand element 0 made 1024", func() { set(c.bins[0], 1024) }},
		{"post-op dropped", func() { c.p.PostOps = nil }},
		{"the reduction made a max", func() { c.p.Reduction = plan.AlgMax.Reduction(0, 0) }},
	} {
		change.do()
		after := reference(c)[0]
		if after == before || math.IsNaN(after) {
			t.Fatalf("%s: reference of dst[0] %v, was %v", change.what, after, before)
		}
		before = after
	}
}
