package arm64

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// nativeSentinel fills dst before a run: bytes no output may keep.
const nativeSentinel = 0xa5

// nativeRefused reports whether NEON's native kernel refuses pl by
// design: what kernelshape.NativeKindOf and CheckNativeRuns refuse of a
// native plan.
func nativeRefused(pl *plan.Plan) bool {
	if !kernelshape.IsNative(pl) {
		return false // the f32 kernels' (an s8 or u8 copy)
	}
	k, err := kernelshape.NativeKindOf(pl)
	return err != nil || kernelshape.CheckNativeRuns(pl, k, 16/k.LaneBytes(), nativeAccs) != nil
}

// runNative emits pl, runs it over src (fenced at the end of its pages
// when fence is not nil) whole and in blocks of the outermost loop, and
// returns each run's dst; a plan refused by design gives nil, after
// checking that the refusal is Unimplemented.
func runNative(t *testing.T, pl *plan.Plan, src []byte, dstLen int, fence *kerneltest.Fence, blocks []int64) [][]byte {
	t.Helper()
	return runNativeBins(t, pl, src, nil, dstLen, fence, blocks)
}

// runNativeBins is runNative with the binary operands bins.
func runNativeBins(t *testing.T, pl *plan.Plan, src []byte, bins [][]byte, dstLen int, fence *kerneltest.Fence, blocks []int64) [][]byte {
	t.Helper()
	code, err := Emit(pl)
	if nativeRefused(pl) {
		if err == nil || !errors.Is(err, status.Unimplemented) {
			t.Fatalf("Emit(%v) = %v, want an Unimplemented refusal", pl, err)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("Emit(%v): %v", pl, err)
	}
	k := kerneltest.Map(t, code)
	defer k.Release()
	if fence != nil {
		src, bins = fence.Place(src), fence.PlaceEach(bins)
	}
	var outs [][]byte
	for _, blk := range blocks {
		dst := make([]byte, dstLen)
		for i := range dst {
			dst[i] = nativeSentinel
		}
		if fence != nil {
			dst = fence.Place(dst)
		}
		k.RunBlocks(pl, src, dst, bins, blk)
		outs = append(outs, append([]byte(nil), dst...))
	}
	return outs
}

// interpDst runs pl in the interpreter from a dst of sentinels.
func interpDst(t *testing.T, pl *plan.Plan, src []byte, dstLen int) []byte {
	t.Helper()
	dst := make([]byte, dstLen)
	for i := range dst {
		dst[i] = nativeSentinel
	}
	if err := interp.Run(pl, src, dst, nil); err != nil {
		t.Fatalf("interp.Run(%v): %v", pl, err)
	}
	return dst
}

// checkNativeExact runs the exact problem p's kernel and compares every
// run with the exact oracle and, byte for byte, with the interpreter.
func checkNativeExact(t *testing.T, r *rand.Rand, what string, p *plan.Problem, fenced bool) (ran bool) {
	t.Helper()
	return checkNativeFilled(t, r, what, p, fenced, func(dt dtypes.DataType, b []byte) { kerneltest.FillExact(r, dt, b) })
}

// checkNativeFilled is checkNativeExact with the src filled by fill.
func checkNativeFilled(t *testing.T, r *rand.Rand, what string, p *plan.Problem, fenced bool, fill func(dtypes.DataType, []byte)) (ran bool) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("%s: Canonicalize(%+v): %v", what, p, err)
	}
	src, dst0, _ := kerneltest.Buffers(t, p, nativeSentinel, fill, nil)
	var fence *kerneltest.Fence
	if fenced {
		fence = kerneltest.NewFence(t, r.Intn(2) == 0)
		defer fence.Free()
	}
	outs := runNative(t, pl, src, len(dst0), fence, []int64{0, 1, 3})
	if outs == nil {
		return false
	}
	want := interpDst(t, pl, src, len(dst0))
	for i, got := range outs {
		name := fmt.Sprintf("%s %v %v>%v run %d", what, p.Reduction, p.SrcDT, p.DstDT, i)
		kerneltest.CheckExact(t, name, p, src, got, nativeSentinel)
		if string(got) != string(want) {
			t.Fatalf("%s: dst differs from the interpreter's\nproblem %+v\nplan %v", name, p, pl)
		}
	}
	return kernelshape.IsNative(pl)
}

// nativeExactKinds is how many (reduction, src type) pairs of exact
// data the native kernel takes on NEON: the logical and bitwise ones of
// bytes (s8, u8: 6 each), boolean's logical ones and max and min (5),
// of the 16-, 32- and 64-bit types every kind but the logical ones and
// the mean (7 each), and the mean of the 16- and 32-bit ones (4).
const nativeExactKinds = 6 + 6 + 5 + 6*7 + 4

// kindCount counts the problems each native kind (reduction and src
// type) ran, so that a test can show that it ran every kind.
type kindCount map[string]int

// add counts p's kind when ran.
func (c kindCount) add(p *plan.Problem, ran bool) {
	if ran {
		c[fmt.Sprintf("%v %v", p.Reduction, p.SrcDT)]++
	}
}

// check fails t unless at least min kinds ran, and logs them.
func (c kindCount) check(t *testing.T, min int) {
	t.Helper()
	if len(c) < min {
		t.Errorf("%d native kinds ran, want at least %d: %v", len(c), min, c)
	}
	t.Logf("%d native kinds ran: %v", len(c), c)
}

// TestNativeExactRandom runs random exact problems of every exact type
// and reduction (ranks 0-4, permuted and padded layouts, empty and
// size-1 dims; the type's extremes for wraparound) against the exact
// oracle and the interpreter, whole and in blocks; the kinds NEON
// refuses must be refused as Unimplemented.
func TestNativeExactRandom(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(51))
	ran := kindCount{}
	n := 6
	if testing.Short() {
		n = 4
	}
	for _, sdt := range kerneltest.ExactTypes {
		for range n {
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				p := kerneltest.RandomExactProblem(r, 5000, sdt, c)
				ran.add(p, checkNativeExact(t, r, "random", p, false))
			}
		}
	}
	ran.check(t, nativeExactKinds)
}

// nativeShapes lists problems of every native shape for src sdt, dst
// ddt and reduction red, with n the extent of the vectorised dim: column
// (Inner contiguous, under an outer loop, past a block of 16
// accumulators), row (one or two reduced loops, far rows), element
// (strided), and a dst that is strided.
func nativeShapes(n int64, sdt, ddt dtypes.DataType, red plan.Reduction) []shape {
	mk := func(dims, ss []int64, reduce []bool, ds []int64) *plan.Problem {
		return &plan.Problem{Reduction: red, SrcDT: sdt, DstDT: ddt, Dims: dims, SrcStrides: ss, Reduce: reduce, DstStrides: ds}
	}
	w := 16*16 + n // past one column block of the narrowest lanes
	return []shape{
		{"row", mk([]int64{3, n}, []int64{n, 1}, []bool{false, true}, []int64{1, 0})},
		{"row long", mk([]int64{2, 300 + n}, []int64{300 + n, 1}, []bool{false, true}, []int64{1, 0})},
		{"row two reduced", mk([]int64{4, 3, n}, []int64{3 * (n + 1), n + 1, 1}, []bool{false, true, true}, []int64{1, 0, 0})},
		{"row two reduced far", mk([]int64{3, 3, n}, []int64{3 * 1201, 1201, 1}, []bool{false, true, true}, []int64{1, 0, 0})},
		{"column", mk([]int64{5, n}, []int64{n, 1}, []bool{true, false}, []int64{0, 1})},
		{"column wide", mk([]int64{3, w}, []int64{w, 1}, []bool{true, false}, []int64{0, 1})},
		{"column inside outer", mk([]int64{4, 3, n}, []int64{3 * n, n, 1}, []bool{false, true, false}, []int64{n, 0, 1})},
		{"column far rows", mk([]int64{2, 5, n}, []int64{5 * 1100, 1100, 1}, []bool{false, true, false}, []int64{n, 0, 1})},
		{"column two reduced", mk([]int64{3, 2, n}, []int64{2 * n, n, 1}, []bool{true, true, false}, []int64{0, 0, 1})},
		{"element", mk([]int64{2, n}, []int64{3 * n, 3}, []bool{false, true}, []int64{1, 0})},
		{"column strided dst", mk([]int64{4, n}, []int64{n, 1}, []bool{true, false}, []int64{0, 2})},
		{"row strided dst", mk([]int64{5, n}, []int64{n, 1}, []bool{false, true}, []int64{3, 0})},
		{"all reduced", mk([]int64{n, 3}, []int64{3, 1}, []bool{true, true}, []int64{0, 0})},
	}
}

// nativeTails are the extents the shapes take: none (no outputs, or an
// empty reduction: the identity, a mean's NaN), around each lane count
// (2, 4, 8, 16) and the blocks of accumulators.
var nativeTails = []int64{0, 1, 2, 3, 5, 8, 15, 16, 17, 35, 129}

// TestNativeExactShapes runs every shape with every exact type,
// reduction and tail, next to guard pages, against the oracle and the
// interpreter.
func TestNativeExactShapes(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(52))
	ran := kindCount{}
	for _, sdt := range kerneltest.ExactTypes {
		for _, c := range kerneltest.ExactPairs(r, sdt) {
			for _, n := range nativeTails {
				for _, s := range nativeShapes(n, sdt, c.DstDT, c.Reduction) {
					ran.add(s.p, checkNativeExact(t, r, fmt.Sprintf("%s n=%d", s.name, n), s.p, true))
				}
			}
		}
	}
	ran.check(t, nativeExactKinds)
}

// TestNativeProduct64 runs s64 and u64 products of odd full-width
// values (no zero ends a product early, and every partial product of
// the halves counts) in every shape and tail, next to guard pages, and
// requires machine code (mul64) for each.
func TestNativeProduct64(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(54))
	odd := func(_ dtypes.DataType, b []byte) {
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], r.Uint64()|1)
		}
	}
	for _, sdt := range []dtypes.DataType{dtypes.S64, dtypes.U64} {
		for _, n := range nativeTails {
			for _, s := range nativeShapes(n, sdt, sdt, plan.AlgMul.Reduction(0, 0)) {
				if !checkNativeFilled(t, r, fmt.Sprintf("%s n=%d", s.name, n), s.p, true, odd) {
					t.Fatalf("%s n=%d %v: no machine code ran", s.name, n, sdt)
				}
			}
		}
	}
}

// TestNativeIntMean runs the means of 16-, 32- and 64-bit integers into
// the src's type, f32 and f64 in every shape and tail (0: an empty
// reduction, NaN or 0), next to guard pages, on data of the type's
// extremes (the mean at the ends of the range), of small negative values
// (truncation toward zero) and FillExact's, and requires machine code.
func TestNativeIntMean(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(55))
	fills := []func(dtypes.DataType, []byte){
		func(dt dtypes.DataType, b []byte) { fillIntExtremes(dt, b) },
		func(dt dtypes.DataType, b []byte) { fillSmallNegative(r, dt, b) },
		func(dt dtypes.DataType, b []byte) { kerneltest.FillExact(r, dt, b) },
	}
	for _, sdt := range []dtypes.DataType{dtypes.S16, dtypes.U16, dtypes.S32, dtypes.U32, dtypes.S64, dtypes.U64} {
		for _, ddt := range []dtypes.DataType{sdt, dtypes.F32, dtypes.F64} {
			for _, n := range nativeTails {
				for _, s := range nativeShapes(n, sdt, ddt, plan.AlgMean.Reduction(0, 0)) {
					for i, fill := range fills {
						if !checkNativeFilled(t, r, fmt.Sprintf("%s n=%d fill %d", s.name, n, i), s.p, i == 0, fill) {
							t.Fatalf("%s n=%d %v>%v: no machine code ran", s.name, n, sdt, ddt)
						}
					}
				}
			}
		}
	}
}

// TestNativeIntMeanRounded runs 32-bit means whose sums pass 2^53, so
// that SCVTF rounds: one row of 2^23+5 elements of at least 2^31 in
// magnitude, the sum odd, into an f64 dst (the quotient's every bit
// shows), against the interpreter's exact sum rounded once (itself
// checked against the oracle by the shorter tests).
func TestNativeIntMeanRounded(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(56))
	const n = 1<<23 + 5
	for _, sdt := range []dtypes.DataType{dtypes.U32, dtypes.S32} {
		p := &plan.Problem{Reduction: plan.AlgMean.Reduction(0, 0), SrcDT: sdt, DstDT: dtypes.F64, Dims: []int64{n},
			SrcStrides: []int64{1}, Reduce: []bool{true}, DstStrides: []int64{0}}
		src := make([]byte, 4*n)
		var sum int64
		for i := 0; i < n; i++ {
			v := r.Uint32() | 1<<31 // u32: at least 2^31; s32: negative
			if sdt == dtypes.S32 {
				v &^= 1 << 30 // at most -2^30
				sum += int64(int32(v))
			} else {
				sum += int64(v)
			}
			binary.LittleEndian.PutUint32(src[4*i:], v)
		}
		if sum%2 == 0 {
			src[0] ^= 1 // the sum moved by one: odd, past 2^53
			sum += int64(src[0]&1)*2 - 1
		}
		if int64(float64(sum)) == sum {
			t.Fatalf("%v: the sum %d is exact in f64: nothing is rounded", sdt, sum)
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		want := interpDst(t, pl, src, 8)
		outs := runNative(t, pl, src, 8, nil, []int64{0})
		if outs == nil {
			t.Fatalf("%v: no machine code ran", pl)
		}
		if string(outs[0]) != string(want) {
			t.Fatalf("%v: %x, the interpreter's %x", pl, outs[0], want)
		}
	}
}

// TestNativeWideMeanRounded runs 64-bit means whose exact sums pass
// 2^64 (the 128-bit sum) and round in f64: rows of random elements of
// the type's whole range, and of elements near its extremes, into an f64
// dst, against a big-integer oracle and the interpreter, bit for bit.
func TestNativeWideMeanRounded(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(57))
	for _, sdt := range []dtypes.DataType{dtypes.S64, dtypes.U64} {
		for _, n := range []int64{3, 17, 1000, 4099} {
			for fill := range 3 {
				const rows = 3
				p := &plan.Problem{Reduction: plan.AlgMean.Reduction(0, 0), SrcDT: sdt, DstDT: dtypes.F64, Dims: []int64{rows, n},
					SrcStrides: []int64{n, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
				src, means := kerneltest.WideMeanRows(r, sdt, rows, n, fill)
				want := make([]byte, 8*rows)
				for row, m := range means {
					binary.LittleEndian.PutUint64(want[8*row:], math.Float64bits(m))
				}
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := interpDst(t, pl, src, 8*rows); string(got) != string(want) {
					t.Fatalf("%v fill %d: the interpreter's %x, the oracle's %x", pl, fill, got, want)
				}
				outs := runNative(t, pl, src, 8*rows, nil, []int64{0})
				if outs == nil {
					t.Fatalf("%v: no machine code ran", pl)
				}
				if string(outs[0]) != string(want) {
					t.Fatalf("%v fill %d: %x, the oracle's %x", pl, fill, outs[0], want)
				}
			}
		}
	}
}

// fillIntExtremes fills b with dt's largest value and, for a signed dt,
// runs of its least one, so that some means are of one extreme.
func fillIntExtremes(dt dtypes.DataType, b []byte) {
	sz := dt.Size()
	top := uint64(1)<<(8*sz-1) - 1
	if !dt.IsSigned() {
		top = top<<1 | 1
	}
	for i := 0; i+sz <= len(b); i += sz {
		u := top
		if dt.IsSigned() && (i/sz/7)%2 == 1 {
			u = top + 1
		}
		for k := range sz {
			b[i+k] = byte(u >> (8 * k))
		}
	}
}

// fillSmallNegative fills b with values from -4 to 0 (0 to 4 for an
// unsigned dt).
func fillSmallNegative(r *rand.Rand, dt dtypes.DataType, b []byte) {
	sz := dt.Size()
	for i := 0; i+sz <= len(b); i += sz {
		u := uint64(r.Intn(5))
		if dt.IsSigned() {
			u = uint64(-int64(r.Intn(5)))
		}
		for k := range sz {
			b[i+k] = byte(u >> (8 * k))
		}
	}
}

// fillWide fills b with f64 values: small integers and halves (sums of
// a few are exact), their negatives, both zeros, and where specials is
// set infinities and NaNs at random positions.
func fillWide(r *rand.Rand, b []byte, specials bool) {
	for i := 0; i < len(b)/8; i++ {
		v := float64(r.Intn(41)-20) / 2
		switch r.Intn(16) {
		case 0:
			v = math.Copysign(0, -1)
		case 1:
			v = 0
		case 2:
			if specials {
				v = math.Inf(2*r.Intn(2) - 1)
			}
		case 3:
			if specials && r.Intn(4) == 0 {
				v = math.NaN()
			}
		}
		plan.StoreF64(dtypes.F64, b, int64(i), v)
	}
}

// checkNativeWide runs the f64 problem p's kernel and compares every run
// with the oracle's bounds (kerneltest.CheckWide: sums and products
// within their rounding, max and min exact), and the max and min with
// the interpreter bit for bit (any NaN matching any NaN).
func checkNativeWide(t *testing.T, r *rand.Rand, what string, p *plan.Problem, specials, fenced bool) {
	t.Helper()
	checkNativeWideFilled(t, r, what, p, func(b []byte) { fillWide(r, b, specials) }, fenced)
}

// checkNativeWideFilled is checkNativeWide with the src filled by fill.
func checkNativeWideFilled(t *testing.T, r *rand.Rand, what string, p *plan.Problem, fill func([]byte), fenced bool) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("%s: Canonicalize(%+v): %v", what, p, err)
	}
	src, dst0, _ := kerneltest.Buffers(t, p, nativeSentinel, func(dt dtypes.DataType, b []byte) { fill(b) }, nil)
	var fence *kerneltest.Fence
	if fenced {
		fence = kerneltest.NewFence(t, r.Intn(2) == 0)
		defer fence.Free()
	}
	outs := runNative(t, pl, src, len(dst0), fence, []int64{0, 1, 3})
	if outs == nil {
		return
	}
	want := interpDst(t, pl, src, len(dst0))
	exact := p.Reduction.Combine == plan.CombineMax || p.Reduction.Combine == plan.CombineMin
	for i, got := range outs {
		name := fmt.Sprintf("%s %v %v>%v run %d", what, p.Reduction, p.SrcDT, p.DstDT, i)
		kerneltest.CheckWide(t, name, p, src, got, nil, nativeSentinel)
		if !exact {
			continue
		}
		for j := int64(0); j < int64(len(got))/int64(p.DstDT.Size()); j++ {
			a, b := oracle.Get(p.DstDT, got, j), oracle.Get(p.DstDT, want, j)
			if a != b && !(a != a && b != b) || math.Signbit(a) != math.Signbit(b) && a == a {
				t.Fatalf("%s: dst element %d is %v, the interpreter's %v\nproblem %+v\nplan %v", name, j, a, b, p, pl)
			}
		}
	}
}

// wideReductions are the f64 reductions the native kernel takes.
var wideReductions = append([]plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMul.Reduction(0, 0),
	plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0), plan.AlgMean.Reduction(0, 0)}, append(kerneltest.WideTransformed, kerneltest.WideLp...)...)

// TestNativeWideShapes runs every shape with every f64 reduction, both
// dst types and every tail, with and without infinities and NaNs,
// next to guard pages.
func TestNativeWideShapes(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(53))
	for _, red := range wideReductions {
		for _, ddt := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
			for _, n := range nativeTails {
				for _, s := range nativeShapes(n, dtypes.F64, ddt, red) {
					checkNativeWide(t, r, fmt.Sprintf("%s n=%d", s.name, n), s.p, n%2 == 1, true)
				}
			}
		}
	}
}

// TestNativeLpPowWide runs the f64 Lp norms of p other than 1 and 2
// (|x|^p as exp(p*log|x|), the root as exp(log(y)/p)) over values from
// the least subnormal to the largest f64 (kerneltest.FillWideWide:
// subnormals, 1e300s, zeros, infinities, NaN) in every shape, into f64 and f32 dst, against the
// oracle's bounds, which widen for the exp and log.
func TestNativeLpPowWide(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(56))
	for _, red := range kerneltest.WideLpP {
		for _, ddt := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
			for _, n := range nativeTails {
				for _, s := range nativeShapes(n, dtypes.F64, ddt, red) {
					specials := n%2 == 1
					checkNativeWideFilled(t, r, fmt.Sprintf("%s n=%d", s.name, n), s.p,
						func(b []byte) { kerneltest.FillWideWide(r, b, specials) }, true)
				}
			}
		}
	}
}

// TestNativePowSubnormal runs |x|^p for p 0.25, 0.5 and 0.75 of
// subnormal x of either sign, one element an output, on the interpreter
// (plan.PowF64) and the machine code, each against the exact value in
// math/big, within its own error (kerneltest.PowTol, NativePowTol).
func TestNativePowSubnormal(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(57))
	const n = 200
	for _, q := range [][2]int{{1, 4}, {1, 2}, {3, 4}} {
		pw := float64(q[0]) / float64(q[1])
		p := &plan.Problem{Reduction: plan.AlgNormLpPowerPSum.Reduction(float32(pw), 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
			Dims: []int64{n, 1}, SrcStrides: []int64{1, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		src := kerneltest.SubnormalSrc(r, n)
		ref := make([]byte, 8*n)
		if err := interp.Run(pl, src, ref, nil); err != nil {
			t.Fatal(err)
		}
		if msg := kerneltest.SubnormalPowMismatch(src, ref, n, q[0], q[1], func(x float64) int { return kerneltest.PowTol(x, pw) }); msg != "" {
			t.Fatalf("interpreter: %s", msg)
		}
		outs := runNative(t, pl, src, 8*n, nil, []int64{0})
		if outs == nil {
			t.Fatalf("%v: refused", pl)
		}
		for _, dst := range outs {
			if msg := kerneltest.SubnormalPowMismatch(src, dst, n, q[0], q[1], func(x float64) int { return kerneltest.NativePowTol(x, pw) }); msg != "" {
				t.Fatal(msg)
			}
		}
	}
}

// TestNativeWideNaN puts one NaN at each position of a row, a column
// and an element reduction, and -0 beside +0: the max and min must give
// NaN wherever it is, and order -0 below +0, as the interpreter does.
func TestNativeWideNaN(t *testing.T) {
	needARM64(t)
	const n = 37
	for _, red := range wideReductions[2:4] {
		for _, s := range nativeShapes(n, dtypes.F64, dtypes.F64, red) {
			pl, err := plan.Canonicalize(s.p)
			if err != nil {
				t.Fatal(err)
			}
			src, dst0, _ := kerneltest.Buffers(t, s.p, nativeSentinel, func(dt dtypes.DataType, b []byte) {
				for i := 0; i < len(b)/8; i++ {
					plan.StoreF64(dt, b, int64(i), math.Copysign(0, float64(i%2)-0.5))
				}
			}, nil)
			code, err := Emit(pl)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			k := kerneltest.Map(t, code)
			for pos := 0; pos < len(src)/8; pos++ {
				one := append([]byte(nil), src...)
				plan.StoreF64(dtypes.F64, one, int64(pos), math.NaN())
				got := append([]byte(nil), dst0...)
				k.RunBlocks(pl, one, got, nil, 0)
				want := interpDst(t, pl, one, len(dst0))
				for j := int64(0); j < int64(len(got))/8; j++ {
					a, b := oracle.Get(dtypes.F64, got, j), oracle.Get(dtypes.F64, want, j)
					if math.Float64bits(a) != math.Float64bits(b) && !(a != a && b != b) {
						t.Fatalf("%s %v, NaN at %d: dst element %d is %v, the interpreter's %v", s.name, red, pos, j, a, b)
					}
				}
			}
			k.Release()
		}
	}
}

// TestNativeWideLong runs f64 sums, sums of squares and L1 and L2 norms
// long enough to be cut into runs (kernelshape.NativeRun), in rows,
// columns and the element shape.
func TestNativeWideLong(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(54))
	for _, sum := range []plan.Reduction{plan.AlgSum.Reduction(0, 0), kerneltest.WideTransformed[1], kerneltest.WideLp[0], kerneltest.WideLp[1]} {
		testNativeWideLong(t, r, sum)
	}
}

func testNativeWideLong(t *testing.T, r *rand.Rand, sum plan.Reduction) {
	mk := func(dims, ss []int64, reduce []bool, ds []int64) *plan.Problem {
		return &plan.Problem{Reduction: sum, SrcDT: dtypes.F64, DstDT: dtypes.F64, Dims: dims, SrcStrides: ss, Reduce: reduce, DstStrides: ds}
	}
	for _, p := range []*plan.Problem{
		mk([]int64{2, 20011}, []int64{20011, 1}, []bool{false, true}, []int64{1, 0}),
		mk([]int64{3001, 19}, []int64{19, 1}, []bool{true, false}, []int64{0, 1}),
		mk([]int64{4000, 3}, []int64{3, 1}, []bool{true, false}, []int64{0, 1}),
		mk([]int64{7, 700, 9}, []int64{6300, 9, 1}, []bool{true, true, true}, []int64{0, 0, 0}),
	} {
		checkNativeWide(t, r, fmt.Sprint(p.Dims, p.Reduce), p, false, false)
	}
}

// TestNativeRefusals checks that what the native kernel does not take
// is refused as Unimplemented, naming it, so that the interpreter runs
// it: a 64-bit integer mean, a copy, a logical
// reduction of data wider than a byte, the root of p 1/2^k of a negative
// eps + acc, an Lp finalize of untransformed data.
func TestNativeRefusals(t *testing.T) {
	dense := func(sdt, ddt dtypes.DataType, red plan.Reduction, post ...plan.PostOp) *plan.Plan {
		p := &plan.Problem{Reduction: red, SrcDT: sdt, DstDT: ddt, Dims: []int64{4, 8}, SrcStrides: []int64{8, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: post}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatalf("Canonicalize(%+v): %v", p, err)
		}
		return pl
	}
	for _, c := range []struct {
		name string
		pl   *plan.Plan
		says string
	}{
		{"s16 logical and", dense(dtypes.S16, dtypes.Boolean, plan.LogicalAnd), "logical"},
		{"f64 L0.5 norm of eps + acc, eps < 0", dense(dtypes.F64, dtypes.F64, plan.AlgNormLpSum.Reduction(0.5, -1)), "root p=0.5 of eps + acc below 0"},
		{"f64 L0.25 norm of eps + acc, eps < 0", dense(dtypes.F64, dtypes.F32, plan.AlgNormLpSum.Reduction(0.25, -2)), "root p=0.25 of eps + acc below 0"},
		{"f64 eps of a product", dense(dtypes.F64, dtypes.F64,
			plan.Reduction{Combine: plan.CombineMul, Finalize: plan.FinalizeMaxEps, Eps: 1}), "not transformed"},
	} {
		_, err := Emit(c.pl)
		if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: Emit = %v, want Unimplemented naming %q", c.name, err, c.says)
		}
	}
}

// TestNativeWords disassembles the raw words of the native kernels, the
// integer ops at every lane width, with registers that exercise every
// field, and compares with binutils' reading.
func TestNativeWords(t *testing.T) {
	cases := []struct {
		w    uint32
		want string
	}{
		{rrr(intOp(opADDB, 0), 1, 2, 3), "add v1.16b, v2.16b, v3.16b"},
		{rrr(intOp(opADDB, 1), 31, 30, 29), "add v31.8h, v30.8h, v29.8h"},
		{rrr(intOp(opADDB, 2), 0, 17, 8), "add v0.4s, v17.4s, v8.4s"},
		{rrr(intOp(opADDB, 3), 5, 5, 26), "add v5.2d, v5.2d, v26.2d"},
		{rrr(intOp(opMULB, 1), 4, 9, 16), "mul v4.8h, v9.8h, v16.8h"},
		{rrr(intOp(opMULB, 2), 16, 4, 9), "mul v16.4s, v4.4s, v9.4s"},
		{rrr(intOp(opSMAXB, 0), 3, 17, 18), "smax v3.16b, v17.16b, v18.16b"},
		{rrr(intOp(opSMAXB, 1), 21, 21, 19), "smax v21.8h, v21.8h, v19.8h"},
		{rrr(intOp(opSMINB, 2), 1, 30, 9), "smin v1.4s, v30.4s, v9.4s"},
		{rrr(intOp(opUMAXB, 0), 2, 3, 31), "umax v2.16b, v3.16b, v31.16b"},
		{rrr(intOp(opUMAXB, 2), 7, 20, 25), "umax v7.4s, v20.4s, v25.4s"},
		{rrr(intOp(opUMINB, 0), 11, 2, 30), "umin v11.16b, v2.16b, v30.16b"},
		{rrr(intOp(opUMINB, 1), 18, 27, 3), "umin v18.8h, v27.8h, v3.8h"},
		{rrr(opCMGT2D, 18, 27, 3), "cmgt v18.2d, v27.2d, v3.2d"},
		{rrr(opCMGT, 18, 27, 3), "cmgt v18.4s, v27.4s, v3.4s"},
		{rrr(opCMGE, 1, 30, 17), "cmge v1.4s, v30.4s, v17.4s"},
		{rrr(opCMEQ, 31, 0, 9), "cmeq v31.4s, v0.4s, v9.4s"},
		{rr(opABS, 4, 29), "abs v4.4s, v29.4s"},
		{rrr(opCMHI2D, 19, 4, 29), "cmhi v19.2d, v4.2d, v29.2d"},
		{rrr(opCMGE2D, 1, 30, 17), "cmge v1.2d, v30.2d, v17.2d"},
		{rrr(opCMEQ2D, 31, 0, 9), "cmeq v31.2d, v0.2d, v9.2d"},
		{rr(opABS2D, 4, 29), "abs v4.2d, v29.2d"},
		{rrr(opFMAXP2D, 7, 20, 25), "fmaxp v7.2d, v20.2d, v25.2d"},
		{rrr(opFCMPD, 0, 13, 13), "fcmp d13, d13"},
		{rr(opUMAXV, 6, 29), "umaxv s6, v29.4s"},
		{rrr(opAND, 21, 21, 19), "and v21.16b, v21.16b, v19.16b"},
		{rrr(opORR, 1, 30, 9), "orr v1.16b, v30.16b, v9.16b"},
		{rrr(opEOR, 2, 3, 31), "eor v2.16b, v3.16b, v31.16b"},
		{rrr(opFMAX2D, 31, 17, 8), "fmax v31.2d, v17.2d, v8.2d"},
		{rrr(opFMIN2D, 16, 30, 25), "fmin v16.2d, v30.2d, v25.2d"},
		{rrr(opCMTST16B, 1, 2, 2), "cmtst v1.16b, v2.16b, v2.16b"},
		{rr(opFABS2D, 17, 30), "fabs v17.2d, v30.2d"},
		{rr(opREV644S, 16, 31), "rev64 v16.4s, v31.4s"},
		{rr(opSXTL32, 3, 30), "sxtl v3.2d, v30.2s"},
		{rr(opUXTL32, 31, 2), "uxtl v31.2d, v2.2s"},
		{rr(opSCVTF2D, 18, 9), "scvtf v18.2d, v9.2d"},
		{rr(opFCVTZS2D, 4, 27), "fcvtzs v4.2d, v27.2d"},
		{rr(opFCVTZU2D, 29, 1), "fcvtzu v29.2d, v1.2d"},
		{rr(opSQXTN2D, 7, 24), "sqxtn v7.2s, v24.2d"},
		{rr(opUQXTN2D, 24, 7), "uqxtn v24.2s, v7.2d"},
		{rr(opUQXTN16, 5, 19), "uqxtn v5.4h, v19.4s"},
		{rr(opXTN2D, 17, 3), "xtn v17.2s, v3.2d"},
		{rr(opUADDLP4S, 30, 18), "uaddlp v30.2d, v18.4s"},
		{rr(opSHL2D32, 5, 25), "shl v5.2d, v25.2d, #32"},
		{rrr(opUMLAL2S, 4, 17, 26), "umlal v4.2d, v17.2s, v26.2s"},
		{ext(1, 2, 3, 8), "ext v1.16b, v2.16b, v3.16b, #8"},
		{ext(31, 30, 30, 1), "ext v31.16b, v30.16b, v30.16b, #1"},
	}
	code := make([]byte, 4*len(cases))
	for i, c := range cases {
		binary.LittleEndian.PutUint32(code[4*i:], c.w)
	}
	ins := disassemble(t, code)
	for i, c := range cases {
		if ins[i].text != c.want {
			t.Errorf("word %08x disassembles to %q, want %q", c.w, ins[i].text, c.want)
		}
	}
}

// TestNativeDisassembly checks native kernels of every lane width with
// an independent decoder: every word decodes, the key instructions of
// each kind are there, no reserved register appears, and the kernel
// ends in its only RET.
func TestNativeDisassembly(t *testing.T) {
	mk := func(sdt, ddt dtypes.DataType, red plan.Reduction, dims, ss []int64, reduce []bool, ds []int64) *plan.Plan {
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: red, SrcDT: sdt, DstDT: ddt, Dims: dims, SrcStrides: ss, Reduce: reduce, DstStrides: ds})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	row := func(sdt, ddt dtypes.DataType, red plan.Reduction) *plan.Plan {
		return mk(sdt, ddt, red, []int64{3, 101}, []int64{101, 1}, []bool{false, true}, []int64{1, 0})
	}
	col := func(sdt, ddt dtypes.DataType, red plan.Reduction) *plan.Plan {
		return mk(sdt, ddt, red, []int64{7, 100}, []int64{100, 1}, []bool{true, false}, []int64{0, 1})
	}
	sum, mul, mx, mn := plan.AlgSum.Reduction(0, 0), plan.AlgMul.Reduction(0, 0), plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0)
	cases := []struct {
		name string
		pl   *plan.Plan
		want []string
	}{
		{"row f64 sum to f32", row(dtypes.F64, dtypes.F32, sum), []string{"ldr q16, [x1", "fadd v0.2d, v0.2d, v16.2d", "ext v17.16b, v16.16b, v16.16b, #8", "ldr d16", "mov v0.d[0], v17.d[0]", "fcvtn v16.2s", "str s16, [x2]"}},
		{"column f64 mean", col(dtypes.F64, dtypes.F64, plan.AlgMean.Reduction(0, 0)), []string{"fadd v15.2d", "fdiv v16.2d, v16.2d, v27.2d", "str q16, [x2"}},
		{"column f64 max", col(dtypes.F64, dtypes.F64, mx), []string{"mov x16, #0xfff0000000000000", "dup v26.2d, x16", "fmax v0.2d"}},
		{"row s16 product", row(dtypes.S16, dtypes.S16, mul), []string{"mul v0.8h", "ext v17.16b, v16.16b, v16.16b, #2", "str h16, [x2]"}},
		{"column u32 min", col(dtypes.U32, dtypes.U32, mn), []string{"umin v0.4s", "str q0, [x2]", "str q15, [x2, #240]"}},
		{"row u64 product", row(dtypes.U64, dtypes.U64, mul), []string{"rev64 v17.4s, v16.4s", "xtn v18.2s, v0.2d", "xtn v19.2s, v16.2d",
			"mul v17.4s, v17.4s, v0.4s", "uaddlp v0.2d, v17.4s", "shl v0.2d, v0.2d, #32", "umlal v0.2d, v18.2s, v19.2s", "str d16, [x2]"}},
		{"row s64 max", row(dtypes.S64, dtypes.S64, mx), []string{"cmgt v18.2d", "bit v0.16b", "str d16, [x2]"}},
		{"column u64 min", col(dtypes.U64, dtypes.U64, mn), []string{"cmhi v17.2d", "bit v0.16b"}},
		{"row u8 logical xor", row(dtypes.U8, dtypes.Boolean, plan.LogicalXor), []string{"cmtst v16.16b", "eor v0.16b", "ext v17.16b, v16.16b, v16.16b, #1", "umin v16.16b, v16.16b, v27.16b", "str b16, [x2]"}},
		{"column boolean max", col(dtypes.Boolean, dtypes.Boolean, mx), []string{"umax v0.16b", "umin v16.16b, v16.16b, v27.16b"}},
		{"row s32 and", row(dtypes.S32, dtypes.S32, plan.Bitwise(plan.CombineAnd)), []string{"and v0.16b", "mov x16, #0xffffffffffffffff", "str s16, [x2]"}},
	}
	for _, c := range cases {
		code, err := Emit(c.pl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ins := disassemble(t, code.Text)
		var text []string
		for i, in := range ins {
			text = append(text, in.text)
			if strings.HasPrefix(in.text, ".inst") || strings.Contains(in.text, "undefined") || in.word == 0 {
				t.Errorf("%s: word %d (%08x) does not decode: %q", c.name, i, in.word, in.text)
			}
			if reserved.MatchString(in.text) {
				t.Errorf("%s: word %d uses a reserved register: %q", c.name, i, in.text)
			}
			if in.text == "ret" && i != len(ins)-1 {
				t.Errorf("%s: RET at word %d of %d", c.name, i, len(ins))
			}
		}
		all := strings.Join(text, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, all)
			}
		}
		if ins[len(ins)-1].text != "ret" {
			t.Errorf("%s: kernel ends with %q", c.name, ins[len(ins)-1].text)
		}
	}
}

// TestNativeLpColumnExact runs the f64 Lp norms and sums of squares in
// the column shape, whose adds are the interpreter's for a row of
// outputs in its order (each output one chain from +0 over the reduced
// index, of at most 1000 adds, which neither cuts into runs; longer sums,
// cut differently, are held to the bound in TestNativeWideShapes): the
// results must be the interpreter's bit for bit (any NaN matching any
// NaN), into f64 and f32 dst.
func TestNativeLpColumnExact(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(55))
	ran := 0
	for _, n := range []int64{1, 2, 5, 9, 100, 999, 1000} {
		for _, red := range append(kerneltest.WideLp, kerneltest.WideTransformed[:2]...) {
			for _, ddt := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
				p := &plan.Problem{Reduction: red, SrcDT: dtypes.F64, DstDT: ddt, Dims: []int64{n, 7}, SrcStrides: []int64{7, 1},
					Reduce: []bool{true, false}, DstStrides: []int64{0, 1}}
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				src, dst0, _ := kerneltest.Buffers(t, p, nativeSentinel, func(dt dtypes.DataType, b []byte) { fillWide(r, b, n%2 == 1) }, nil)
				outs := runNative(t, pl, src, len(dst0), nil, []int64{0})
				if outs == nil {
					t.Fatalf("%v n=%d: refused", red, n)
				}
				ran++
				want := interpDst(t, pl, src, len(dst0))
				for _, got := range outs {
					for j := range int64(7) {
						a, b := oracle.Get(ddt, got, j), oracle.Get(ddt, want, j)
						if math.Float64bits(a) != math.Float64bits(b) && !(a != a && b != b) {
							t.Fatalf("%v %v n=%d: dst element %d is %v, the interpreter's %v", red, ddt, n, j, a, b)
						}
					}
				}
			}
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}
