package amd64

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// The oracle: a float64 reference that walks the Problem itself (not the
// canonical plan), so that canonicalisation bugs show up too.

// dtPairs are the src:dst data type pairs kernels must handle.
var dtPairs = [][2]dtypes.DataType{
	{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.BF16, dtypes.F32},
	{dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32},
	// f32 -> bf16/f16: what the second stage of a split long reduction
	// computes (f32 partial sums in, the user's dst type out).
	{dtypes.F32, dtypes.BF16}, {dtypes.F32, dtypes.F16},
}

// int8Pairs are the pairs with integer data: 8-bit src with every dst
// type, and f32 (a split reduction's partials) into the integer types.
var int8Pairs = func() [][2]dtypes.DataType {
	var out [][2]dtypes.DataType
	for _, s := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		for _, d := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32, dtypes.F32, dtypes.BF16, dtypes.F16} {
			out = append(out, [2]dtypes.DataType{s, d})
		}
	}
	for _, d := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32} {
		out = append(out, [2]dtypes.DataType{dtypes.F32, d})
	}
	return out
}()

// allPairs are dtPairs and int8Pairs, what the random problems draw from.
var allPairs = append(append([][2]dtypes.DataType(nil), dtPairs...), int8Pairs...)

// reference computes p into a copy of dst from the oracle's combined
// values (exact, as fillExact's inputs make them), rounded to f32 and
// finalized in f32 as the kernels do (oracle.FinalizeF32: for the mean a
// true f32 division by N), then plan.Eltwise / plan.Binary and the
// rounding to the dst type. written marks the dst elements that hold
// outputs.
func reference(p *plan.Problem, src, dst []byte, bins [][]byte) (out []byte, written map[int64]bool) {
	out = append([]byte(nil), dst...)
	written = map[int64]bool{}
	var binDT []dtypes.DataType
	for _, op := range p.PostOps {
		if op.Kind.IsBinary() {
			binDT = append(binDT, op.BinDT)
		}
	}
	for _, o := range oracle.Reduce(p, src) {
		v := oracle.FinalizeF32(p.Reduction, float32(o.Acc), o.N)
		bi := 0
		for _, op := range p.PostOps {
			if !op.Kind.IsBinary() {
				v = plan.Eltwise(op.Kind, op.Alpha, op.Beta, v)
				continue
			}
			v = plan.Binary(op.Kind, v, dtypes.LoadF32(binDT[bi], bins[bi], o.Bins[bi]))
			bi++
		}
		dtypes.StoreF32(p.DstDT, out, o.Dst, v)
		written[o.Dst] = true
	}
	return out, written
}

// genKinds are the post-op kinds the emitter supports.
var genKinds = []plan.Kind{
	plan.Abs, plan.Clamp, plan.HardSigmoid, plan.HardSwish, plan.LeakyReLU, plan.ReLU, plan.Round, plan.Sqrt, plan.Square,
	plan.Pow, plan.Add, plan.Multiply, plan.Maximum, plan.Minimum, plan.Divide, plan.Subtract,
}

// layout returns strides for dims laid out outermost-first in order
// perm, with random padding (and, rarely, a non-unit innermost stride).
func layout(r *rand.Rand, dims []int64, perm []int, pad bool) []int64 {
	st := make([]int64, len(dims))
	s := int64(1)
	if pad && r.Intn(8) == 0 {
		s = int64(2 + r.Intn(2))
	}
	for i := len(perm) - 1; i >= 0; i-- {
		d := perm[i]
		st[d] = s
		ext := max(dims[d], 1)
		if pad && r.Intn(4) == 0 {
			ext += int64(1 + r.Intn(3))
		}
		s *= ext
	}
	return st
}

// randDim draws a dim size: mostly small, with vector-width edges.
func randDim(r *rand.Rand) int64 {
	switch x := r.Intn(100); {
	case x < 2:
		return 0
	case x < 20:
		return 1
	case x < 55:
		return int64(2 + r.Intn(7))
	case x < 85:
		return []int64{15, 16, 17, 31, 32, 33, 7, 8, 9, 24, 48}[r.Intn(11)]
	case x < 95:
		return int64(10 + r.Intn(60))
	default:
		// Past one register block of a column kernel (16 zmm).
		return int64(250 + r.Intn(300))
	}
}

// randProblem draws a problem of at most maxElems src elements.
func randProblem(r *rand.Rand, maxElems int64) *plan.Problem {
	rank := r.Intn(7)
	dims := make([]int64, rank)
	for {
		total := int64(1)
		for i := range dims {
			dims[i] = randDim(r)
			total *= max(dims[i], 1)
		}
		if total <= maxElems {
			break
		}
	}
	p := &plan.Problem{Dims: dims, Reduce: make([]bool, rank)}
	for i := range p.Reduce {
		p.Reduce[i] = r.Intn(2) == 0
	}
	pair := allPairs[r.Intn(len(allPairs))]
	p.SrcDT, p.DstDT = pair[0], pair[1]
	p.SrcStrides = layout(r, dims, perm(r, rank), true)
	p.DstStrides = layout(r, keptDims(p), perm(r, rank), r.Intn(4) == 0)
	for i := range p.DstStrides {
		if p.Reduce[i] {
			p.DstStrides[i] = 0
		}
	}
	nops := r.Intn(4)
	nbin := 0
	for i := 0; i < nops; i++ {
		k := genKinds[r.Intn(len(genKinds))]
		op := plan.PostOp{Kind: k}
		switch k {
		case plan.Clamp:
			op.Alpha = float32(r.Intn(9)-6) / 4
			op.Beta = op.Alpha + float32(r.Intn(12))/4
		case plan.LeakyReLU:
			op.Alpha = float32(r.Intn(9)-4) / 8
		case plan.HardSigmoid:
			op.Alpha = float32(r.Intn(9)-4) / 8
			op.Beta = float32(r.Intn(9)-4) / 8
		case plan.Pow:
			op.Beta = ops.PowBetas[r.Intn(len(ops.PowBetas))]
		}
		if k.IsBinary() {
			if nbin == plan.MaxBinary {
				continue
			}
			nbin++
			op.BinDT = operandTypes[r.Intn(len(operandTypes))]
			op.BinStrides = binStrides(r, p)
		}
		p.PostOps = append(p.PostOps, op)
	}
	return p
}

// keptDims is dims with reduced dims set to 1 (the dst shape).
func keptDims(p *plan.Problem) []int64 {
	d := append([]int64(nil), p.Dims...)
	for i := range d {
		if p.Reduce[i] {
			d[i] = 1
		}
	}
	return d
}

// binStrides draws an operand layout: scalar, full, or broadcast over a
// random subset of the kept dims.
func binStrides(r *rand.Rand, p *plan.Problem) []int64 {
	d := keptDims(p)
	switch r.Intn(3) {
	case 0:
		return make([]int64, len(d))
	case 1:
		return layout(r, d, perm(r, len(d)), false)
	}
	for i := range d {
		if r.Intn(2) == 0 {
			d[i] = 1
		}
	}
	st := layout(r, d, perm(r, len(d)), false)
	for i := range st {
		if d[i] == 1 {
			st[i] = 0
		}
	}
	return st
}

// perm is a random permutation, identity half of the time (plain layout).
func perm(r *rand.Rand, n int) []int {
	if r.Intn(2) == 0 {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		return p
	}
	return r.Perm(n)
}

// fillExact fills a buffer of dt with multiples of 1/8 in [-8, 8]: sums
// of up to 2^17 of them are exact in f32 whatever the order, so any
// summation order gives the same bits and results can be compared
// exactly. Zeros are -0 half the time. specials sprinkles NaN and ±Inf,
// one element in rate.
//
// 8-bit integer buffers get integers instead (fillInt8).
func fillExact(r *rand.Rand, dt dtypes.DataType, b []byte, specials bool, rate int) {
	if dt.IsInt8() {
		fillInt8(r, dt, b, []int{4, 16, 255}[r.Intn(3)])
		return
	}
	n := int64(len(b) / dt.Size())
	if dt == dtypes.S32 {
		// Only operands are s32: any value (beyond 2^24 the load rounds
		// to f32, as dtypes.LoadF32 does), small ones most of the time.
		for i := int64(0); i < n; i++ {
			v := int32(r.Intn(65) - 32)
			if r.Intn(4) == 0 {
				v = int32(r.Uint32())
			}
			binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
		}
		return
	}
	for i := int64(0); i < n; i++ {
		v := float32(r.Intn(129)-64) / 8
		if v == 0 && r.Intn(2) == 0 {
			v = float32(math.Copysign(0, -1))
		}
		if specials && r.Intn(rate) == 0 {
			v = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.Intn(3)]
		}
		dtypes.StoreF32(dt, b, i, v)
	}
}

// operandTypes are the data types a binary operand may have
// (plan.IsOperandType).
var operandTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}

// fillInt8 fills an s8 or u8 buffer with integers of magnitude at most
// lim (and within the type): sums of up to 2^16 of them, and of their
// squares for lim 16, are exact in f32 in any order. Small lim keeps
// means and sums inside the 8-bit dst range, the full range reaches
// saturation.
func fillInt8(r *rand.Rand, dt dtypes.DataType, b []byte, lim int) {
	lo, hi := -min(lim, 128), min(lim, 127)
	if dt == dtypes.U8 {
		lo, hi = 0, min(lim, 255)
	}
	for i := range b {
		b[i] = byte(lo + r.Intn(hi-lo+1))
	}
}

// fillPowers fills b for products: mostly ±1, now and then ±2 or ±1/2
// (and -0 or the specials), so that every partial product is a power of
// two far from f32's range limits, exact in any order.
//
// 8-bit integers have no 1/2 and no NaN: they get ±1 (1 for u8), now
// and then 2 (one in 128: a product of 6000 stays far below f32's
// range), and zeros with specials.
func fillPowers(r *rand.Rand, dt dtypes.DataType, b []byte, specials bool) {
	if dt.IsInt8() {
		for i := range b {
			v := 1
			switch x := r.Intn(128); {
			case x == 0:
				v = 2
			case x == 1 && specials:
				v = 0
			}
			if dt == dtypes.S8 && r.Intn(2) == 0 {
				v = -v
			}
			b[i] = byte(int8(v))
		}
		return
	}
	for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
		v := float32(1)
		switch x := r.Intn(32); {
		case x < 2:
			v = 2
		case x < 4:
			v = 0.5
		case x == 4 && specials:
			v = []float32{float32(math.NaN()), float32(math.Inf(1)), 0}[r.Intn(3)]
		}
		if r.Intn(2) == 0 {
			v = -v
		}
		dtypes.StoreF32(dt, b, i, v)
	}
}

// sameValue compares two stored elements: equal bits, or both NaN.
func sameValue(dt dtypes.DataType, a, b []byte, i int64, anyZero bool) bool {
	x, y := dtypes.LoadF32(dt, a, i), dtypes.LoadF32(dt, b, i)
	if x != x && y != y || anyZero && x == 0 && y == 0 {
		return true
	}
	switch dt.Size() {
	case 4:
		return binary.LittleEndian.Uint32(a[4*i:]) == binary.LittleEndian.Uint32(b[4*i:])
	case 1:
		return a[i] == b[i]
	}
	return binary.LittleEndian.Uint16(a[2*i:]) == binary.LittleEndian.Uint16(b[2*i:])
}

// compareExact checks got against want: outputs bit-equal (NaN: any NaN;
// with anyZero, +0 and -0 alike), every other byte untouched. It returns
// a description of the first difference, or "".
func compareExact(dt dtypes.DataType, got, want []byte, written map[int64]bool, anyZero bool) string {
	return compareNear(dt, got, want, written, anyZero, 0)
}

// compareNear is compareExact, except that outputs may be tol f32 ulps
// apart (vexp.NearULPs): machine code against a reference, for a
// problem whose post-ops end in an op that is near rather than exact
// (vfn.Tolerance).
func compareNear(dt dtypes.DataType, got, want []byte, written map[int64]bool, anyZero bool, tol int64) string {
	sz := int64(dt.Size())
	for i := int64(0); i < int64(len(got))/sz; i++ {
		if written[i] {
			if !sameValue(dt, got, want, i, anyZero) && !(tol > 0 && vexp.NearULPs(dt, got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz], tol)) {
				return fmt.Sprintf("dst[%d] = %v, want %v", i, dtypes.LoadF32(dt, got, i), dtypes.LoadF32(dt, want, i))
			}
			continue
		}
		for j := i * sz; j < (i+1)*sz; j++ {
			if got[j] != want[j] {
				return fmt.Sprintf("dst[%d] (not an output) was overwritten", i)
			}
		}
	}
	return ""
}

// buffers allocates src, dst and operand buffers for p, filled.
func buffers(t testing.TB, r *rand.Rand, p *plan.Problem, specials bool) (src, dst []byte, bins [][]byte) {
	t.Helper()
	sb, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	db, err := p.DstBytes()
	if err != nil {
		t.Fatal(err)
	}
	src = make([]byte, sb)
	switch {
	case p.Combine == plan.CombineMul:
		fillPowers(r, p.SrcDT, src, specials)
	case p.SrcDT.IsInt8() && p.Transform == plan.TransformSquare:
		fillInt8(r, p.SrcDT, src, 16)
	default:
		fillExact(r, p.SrcDT, src, specials, 200)
	}
	dst = make([]byte, db)
	for i := range dst {
		dst[i] = 0xA5 // a sentinel, distinct from any output
	}
	bi := 0
	for _, op := range p.PostOps {
		if !op.Kind.IsBinary() {
			continue
		}
		nb, err := p.BinBytes(bi)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, nb)
		fillExact(r, op.BinDT, b, specials, 8)
		bins = append(bins, b)
		bi++
	}
	return src, dst, bins
}

// withTrailingNear appends, one time in four, a post-op whose machine
// code is near rather than exact: Exp, Log or a kind with a package vfn
// program, with random parameters (see vfn.Tolerance for why last).
func withTrailingNear(r *rand.Rand, p *plan.Problem) *plan.Problem {
	if r.Intn(4) == 0 {
		p.PostOps = append(p.PostOps, randomNearOp(r))
	}
	return p
}

// randomNearOp returns Exp, Log or one of vfn's kinds, with random
// parameters where it takes them.
func randomNearOp(r *rand.Rand) plan.PostOp {
	kinds := []plan.Kind{plan.Exp, plan.Log, plan.Sigmoid, plan.Tanh, plan.Elu, plan.SoftPlus, plan.Mish, plan.GELUTanh}
	op := plan.PostOp{Kind: kinds[r.Intn(len(kinds))]}
	switch op.Kind {
	case plan.Elu:
		op.Alpha = float32(r.Intn(17)-8) / 4
	case plan.SoftPlus:
		op.Beta = []float32{1, 1, 0.5, -1, 3, -0.25}[r.Intn(6)]
	}
	return op
}
