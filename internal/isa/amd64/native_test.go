package amd64

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The native kernel (native.go) against the exact oracle and the
// interpreter (integers: the same bytes), and for f64 against the
// oracle's bounds, on every ISA this CPU runs, next to guard pages.

// nativeWanted reports whether the native kernel of o should take pl:
// nil, or the refusal it should give.
func nativeWanted(pl *plan.Plan, o Options) error {
	k, err := kernelshape.NativeKindOf(pl)
	if err != nil {
		return err
	}
	isa := nativeISA(o)
	if err := kernelshape.CheckNativeRuns(pl, k, isa.VectorBytes/k.Bytes, isa.Accs); err != nil {
		return err
	}
	return nativeTakes(k, o.AVX512)
}

// runNative emits pl for each ISA and checks the refusal or the results:
// fenced at the end and at the start of the buffers, whole and in calls
// of one outermost Outer iteration. check compares a dst. It returns
// how many ISAs ran machine code.
func runNative(t *testing.T, isaList []isaCase, p *plan.Problem, src0 []byte, check func(name string, dst []byte)) int {
	t.Helper()
	return runNativeBins(t, isaList, p, src0, nil, check)
}

// runNativeBins is runNative with the binary operands bins0.
func runNativeBins(t *testing.T, isaList []isaCase, p *plan.Problem, src0 []byte, bins0 [][]byte, check func(name string, dst []byte)) int {
	t.Helper()
	return runNativeHinted(t, isaList, kernelconf.Hints{}, p, src0, bins0, check)
}

// runNativeHinted is runNativeBins with the kernels emitted under the
// runtime's hints h.
func runNativeHinted(t *testing.T, isaList []isaCase, h kernelconf.Hints, p *plan.Problem, src0 []byte, bins0 [][]byte, check func(name string, dst []byte)) int {
	t.Helper()
	return runNativeEach(t, isaList, h, p, [][]byte{src0}, bins0, func(name string, _ int, dst []byte) { check(name, dst) })
}

// runNativeEach is runNativeHinted over each src of srcs in turn, the
// code emitted and mapped once per ISA for all of them; check is told
// which src (its index) a dst is of.
func runNativeEach(t *testing.T, isaList []isaCase, h kernelconf.Hints, p *plan.Problem, srcs [][]byte, bins0 [][]byte, check func(name string, at int, dst []byte)) int {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	if !kernelshape.IsNative(pl) {
		return 0 // an 8-bit copy, say: f32 lanes, tested elsewhere
	}
	ran := 0
	for _, isa := range isaList {
		code, err := EmitHinted(pl, h, isa.o)
		want := nativeWanted(pl, isa.o)
		switch {
		case want != nil && err == nil:
			t.Fatalf("%s: %v was emitted, want the refusal %v", isa.name, pl, want)
		case want != nil:
			if !errors.Is(err, status.Unimplemented) {
				t.Fatalf("%s: %v refused with %v, want Unimplemented", isa.name, pl, err)
			}
			continue
		case err != nil:
			t.Fatalf("%s: Emit(%v): %v", isa.name, pl, err)
		}
		ran++
		dst0 := kerneltest.Dst(t, p, 0xa5)
		// One mapping of the code serves both placements.
		k := kerneltest.Map(t, code)
		if isa.o.AVX512 {
			k.Count = &kerneltest.AVX512Calls
		}
		for at, src0 := range srcs {
			for _, atEnd := range []bool{true, false} {
				fence := kerneltest.NewFence(t, atEnd)
				src, dst, bins := fence.Place(src0), fence.Place(dst0), fence.PlaceEach(bins0)
				for _, blk := range []int64{0, 1} {
					copy(dst, dst0)
					k.RunBlocks(pl, src, dst, bins, blk)
					check(fmt.Sprintf("%s (blocks of %d, guard after %v) %v", isa.name, blk, atEnd, pl), at, dst)
				}
				fence.Free()
			}
		}
		k.Release()
	}
	return ran
}

// checkNativeExact runs the exact problem p on src against the oracle and
// the interpreter, byte for byte.
func checkNativeExact(t *testing.T, isaList []isaCase, p *plan.Problem, src []byte) int {
	t.Helper()
	return checkNativeExactHinted(t, isaList, kernelconf.Hints{}, p, src)
}

// checkNativeExactHinted is checkNativeExact with the kernels emitted
// under the runtime's hints h.
func checkNativeExactHinted(t *testing.T, isaList []isaCase, h kernelconf.Hints, p *plan.Problem, src []byte) int {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	ref := kerneltest.Dst(t, p, 0xa5)
	if err := interp.Run(pl, src, ref, nil); err != nil {
		t.Fatalf("interp: %v", err)
	}
	// The oracle's outputs once, held against the interpreter's dst once:
	// every run of every ISA must then give the interpreter's bytes, and
	// only a run that does not is held to the oracle itself, to say where.
	var outs []oracle.ExactOutput
	return runNativeHinted(t, isaList, h, p, src, nil, func(name string, dst []byte) {
		if outs == nil {
			outs = oracle.ReduceExact(p, src)
			kerneltest.CheckExactOutputs(t, "interpreter", p, outs, ref, 0xa5)
		}
		if !bytes.Equal(dst, ref) {
			kerneltest.CheckExactOutputs(t, name, p, outs, dst, 0xa5)
			t.Fatalf("%s: dst differs from the interpreter's", name)
		}
	})
}

// nativeShapes are problems of each shape of n elements per output: row
// (contiguous reduction), column (contiguous Inner n wide), element
// (strided reduction), a row under a strided reduced loop, and a strided
// Inner.
func nativeShapes(n int64) [][3][]int64 {
	// dims, src strides, reduce (1) or keep (0)
	return [][3][]int64{
		{{3, n}, {n, 1}, {0, 1}},
		{{5, n}, {n, 1}, {1, 0}},
		{{3, 2*n + 40}, {2*n + 40, 1}, {1, 0}},
		{{2, n}, {3 * n, 3}, {0, 1}},
		{{3, 4, n}, {4 * n, n, 1}, {0, 1, 1}},
		{{n, 3}, {1, n}, {1, 0}},
		{{n}, {1}, {1}},
	}
}

// exactSrc is a src of p filled by kerneltest.FillExact.
func exactSrc(t *testing.T, r *rand.Rand, p *plan.Problem) []byte {
	t.Helper()
	sb, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, sb)
	kerneltest.FillExact(r, p.SrcDT, src)
	return src
}

// problemOf builds a dense-dst problem from a shape.
func problemOf(s [3][]int64, sdt, ddt dtypes.DataType, r plan.Reduction) *plan.Problem {
	dims, ss := s[0], s[1]
	p := &plan.Problem{Reduction: r, SrcDT: sdt, DstDT: ddt, Dims: dims, SrcStrides: ss, Reduce: make([]bool, len(dims))}
	for i, v := range s[2] {
		p.Reduce[i] = v == 1
	}
	p.DstStrides = make([]int64, len(dims))
	st := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		if !p.Reduce[i] {
			p.DstStrides[i] = st
			st *= dims[i]
		}
	}
	return p
}

// TestNativeExactShapes runs every exact reduction of every exact type in
// every shape, with every length from 0 to past two vectors of bytes.
func TestNativeExactShapes(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(51))
	ran := 0
	for _, sdt := range kerneltest.ExactTypes {
		for _, n := range []int64{0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 129, 200} {
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				for _, s := range nativeShapes(n) {
					p := problemOf(s, sdt, c.DstDT, c.Reduction)
					ran += checkNativeExact(t, isaList, p, exactSrc(t, r, p))
				}
			}
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// TestNativeProduct64 runs s64 and u64 products of odd full-width
// values (no zero ends a product early, and every partial product of
// the halves counts) in every shape and length, and requires machine
// code on every ISA: AVX-512's VPMULLQ and AVX2's three VPMULUDQ.
func TestNativeProduct64(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(54))
	for _, sdt := range []dtypes.DataType{dtypes.S64, dtypes.U64} {
		for _, n := range []int64{0, 1, 2, 3, 4, 5, 8, 9, 17, 33, 65, 200} {
			for _, s := range nativeShapes(n) {
				p := problemOf(s, sdt, sdt, plan.AlgMul.Reduction(0, 0))
				sb, err := p.SrcBytes()
				if err != nil {
					t.Fatal(err)
				}
				src := make([]byte, sb)
				for i := 0; i+8 <= len(src); i += 8 {
					binary.LittleEndian.PutUint64(src[i:], r.Uint64()|1)
				}
				if ran := checkNativeExact(t, isaList, p, src); ran != len(isaList) {
					t.Fatalf("%v: machine code ran on %d of %d ISAs", p, ran, len(isaList))
				}
			}
		}
	}
}

// TestNativeIntMean runs the means of 16-, 32- and 64-bit integers into
// the src's type, f32 and f64 in every shape and length (0: an empty
// reduction, NaN or 0), on data of the type's extremes (the mean at the
// ends of the range, a 64-bit one saturating), of small negative values
// (truncation toward zero) and FillExact's, and requires machine code on
// every ISA.
func TestNativeIntMean(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(55))
	for _, sdt := range []dtypes.DataType{dtypes.S16, dtypes.U16, dtypes.S32, dtypes.U32, dtypes.S64, dtypes.U64} {
		for _, ddt := range []dtypes.DataType{sdt, dtypes.F32, dtypes.F64} {
			for _, n := range []int64{0, 1, 2, 3, 5, 8, 9, 17, 33, 65, 200} {
				for _, s := range nativeShapes(n) {
					p := problemOf(s, sdt, ddt, plan.AlgMean.Reduction(0, 0))
					sb, err := p.SrcBytes()
					if err != nil {
						t.Fatal(err)
					}
					src := make([]byte, sb)
					for _, fill := range intMeanFills {
						fill(r, sdt, src)
						if ran := checkNativeExact(t, isaList, p, src); ran != len(isaList) {
							t.Fatalf("%v: machine code ran on %d of %d ISAs", p, ran, len(isaList))
						}
					}
				}
			}
		}
	}
}

// TestNativeIntMeanRounded runs 32-bit means whose sums pass 2^53, so
// that their conversion to f64 rounds: one row of 2^23+5 elements of at
// least 2^31 in magnitude, into an f64 dst (the quotient's every bit
// shows), against the interpreter's exact sum rounded once (itself
// checked against the oracle by the shorter tests).
func TestNativeIntMeanRounded(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(56))
	const n = 1<<23 + 5
	for _, sdt := range []dtypes.DataType{dtypes.U32, dtypes.S32} {
		p := problemOf([3][]int64{{n}, {1}, {1}}, sdt, dtypes.F64, plan.AlgMean.Reduction(0, 0))
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
			// Odd, past 2^53: not an f64. The first element's low bit
			// flipped moves the sum by one.
			src[0] ^= 1
			sum += int64(src[0]&1)*2 - 1
		}
		if int64(float64(sum)) == sum {
			t.Fatalf("%v: the sum %d is exact in f64: nothing is rounded", sdt, sum)
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := kerneltest.Dst(t, p, 0xa5)
		if err := interp.Run(pl, src, ref, nil); err != nil {
			t.Fatal(err)
		}
		ran := runNative(t, isaList, p, src, func(name string, dst []byte) {
			if !bytes.Equal(dst, ref) {
				t.Fatalf("%s: %x, the interpreter's %x", name, dst, ref)
			}
		})
		if ran != len(isaList) {
			t.Fatalf("%v: machine code ran on %d of %d ISAs", p, ran, len(isaList))
		}
	}
}

// TestNativeWideMeanRounded runs 64-bit means whose exact sums pass
// 2^64 (the 128-bit sum) and round in f64: rows of random elements of
// the type's whole range, and of elements near its extremes, into an f64
// dst, against a big-integer oracle and the interpreter, bit for bit.
func TestNativeWideMeanRounded(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(57))
	for _, sdt := range []dtypes.DataType{dtypes.S64, dtypes.U64} {
		for _, n := range []int64{3, 17, 1000, 4099} {
			for fill := range 3 {
				const rows = 3
				p := problemOf([3][]int64{{rows, n}, {n, 1}, {0, 1}}, sdt, dtypes.F64, plan.AlgMean.Reduction(0, 0))
				src, want := kerneltest.WideMeanRows(r, sdt, rows, n, fill)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				ref := kerneltest.Dst(t, p, 0xa5)
				if err := interp.Run(pl, src, ref, nil); err != nil {
					t.Fatal(err)
				}
				for row, w := range want {
					if got := math.Float64frombits(binary.LittleEndian.Uint64(ref[8*row:])); got != w {
						t.Fatalf("%v fill %d row %d: the interpreter's %v, the oracle's %v", p, fill, row, got, w)
					}
				}
				ran := runNative(t, isaList, p, src, func(name string, dst []byte) {
					if !bytes.Equal(dst, ref) {
						t.Fatalf("%s fill %d: %x, the interpreter's %x", name, fill, dst, ref)
					}
				})
				if ran != len(isaList) {
					t.Fatalf("%v: machine code ran on %d of %d ISAs", p, ran, len(isaList))
				}
			}
		}
	}
}

// intMeanFills fill an integer mean's src: the type's largest and least
// values (signed: in runs, so that some means are of one extreme), small
// negative ones for signed types (small values else), and FillExact's.
var intMeanFills = []func(r *rand.Rand, dt dtypes.DataType, b []byte){
	func(r *rand.Rand, dt dtypes.DataType, b []byte) {
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
	},
	func(r *rand.Rand, dt dtypes.DataType, b []byte) {
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
	},
	kerneltest.FillExact,
}

// TestNativeExactRandom runs random exact problems (any rank, layout and
// padding).
func TestNativeExactRandom(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(52))
	for i := range 300 {
		sdt := kerneltest.ExactTypes[i%len(kerneltest.ExactTypes)]
		cs := kerneltest.ExactPairs(r, sdt)
		p := kerneltest.RandomExactProblem(r, 20000, sdt, cs[r.Intn(len(cs))])
		sb, err := p.SrcBytes()
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, sb)
		kerneltest.FillExact(r, sdt, src)
		checkNativeExact(t, isaList, p, src)
	}
}

// TestNativeRefusals checks that what the native kernel does not take is
// refused as Unimplemented with a reason: an integer mean, a copy, a
// logical reduction of wide data, an f64 |x|^p or root of
// p other than 1 and 2, an f64 Lp finalize of untransformed data.
func TestNativeRefusals(t *testing.T) {
	mk := func(sdt, ddt dtypes.DataType, r plan.Reduction) *plan.Plan {
		p := &plan.Problem{Reduction: r, SrcDT: sdt, DstDT: ddt, Dims: []int64{4, 64}, SrcStrides: []int64{64, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	for _, c := range []struct {
		pl   *plan.Plan
		o    Options
		says string
	}{
		{mk(dtypes.S32, dtypes.U8, plan.LogicalOr), Options{AVX512: true}, "logical"},
		{mk(dtypes.F64, dtypes.F64, plan.AlgNormLpSum.Reduction(0.5, -1)), Options{AVX512: true}, "root p=0.5 of eps + acc below 0"},
		{mk(dtypes.F64, dtypes.F32, plan.AlgNormLpSum.Reduction(0.25, -2)), Options{}, "root p=0.25 of eps + acc below 0"},
		{mk(dtypes.F64, dtypes.F32, plan.Reduction{Combine: plan.CombineMul, Finalize: plan.FinalizeMaxEps, Eps: 1}), Options{}, "not transformed"},
	} {
		_, err := Emit(c.pl, c.o)
		if !errors.Is(err, status.Unimplemented) || !bytes.Contains([]byte(err.Error()), []byte(c.says)) {
			t.Errorf("Emit(%v, %+v) = %v, want Unimplemented naming %q", c.pl, c.o, err, c.says)
		}
	}
	// An f64 sum whose runs cannot keep the interpreter's bound: a long
	// innermost reduced loop in runs of its own under a long outer one.
	long := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
		Dims: []int64{2000, 1500, 2}, SrcStrides: []int64{3002, 2, 1}, Reduce: []bool{true, true, false}, DstStrides: []int64{0, 0, 1}}
	pl, err := plan.Canonicalize(long)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{AVX512: true}, {}} {
		if _, err := Emit(pl, o); !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), "bound") {
			t.Errorf("Emit(%v, %+v) = %v, want Unimplemented naming the bound", pl, o, err)
		}
	}
	for _, sdt := range []dtypes.DataType{dtypes.S64, dtypes.U64} {
		for _, o := range []Options{{AVX512: true}, {}} {
			if _, err := Emit(mk(sdt, sdt, plan.AlgMul.Reduction(0, 0)), o); err != nil {
				t.Errorf("%v product, %+v: %v", sdt, o, err)
			}
		}
	}
}

// TestNativeWideShapes runs f64 sums, products, maxima, minima and means,
// of the elements and of their |x| and x*x, and the Lp norms of p 1 and
// 2, in every shape into f64 and f32 dst, against the oracle's bounds, with
// and without NaN, infinities and signed zeros.
func TestNativeWideShapes(t *testing.T) {
	checkNativeWideShapes(t, isas(t), kernelconf.Hints{}, []int64{0, 1, 2, 3, 7, 8, 9, 16, 17, 33, 65, 200, 3000})
}

// checkNativeWideShapes is TestNativeWideShapes over rows of ns elements
// (each shape of nativeShapes) under the runtime's hints h.
func checkNativeWideShapes(t *testing.T, isaList []isaCase, h kernelconf.Hints, ns []int64) {
	r := rand.New(rand.NewSource(53))
	reds := append([]plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0),
		plan.AlgMean.Reduction(0, 0), plan.AlgMul.Reduction(0, 0)}, append(kerneltest.WideTransformed, kerneltest.WideLp...)...)
	ran := 0
	for _, n := range ns {
		for _, red := range reds {
			for _, ddt := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
				for _, specials := range []bool{false, true} {
					for _, s := range nativeShapes(n) {
						p := problemOf(s, dtypes.F64, ddt, red)
						sb, err := p.SrcBytes()
						if err != nil {
							t.Fatal(err)
						}
						src := make([]byte, sb)
						kerneltest.FillWide(r, dtypes.F64, src, specials)
						if red.Combine == plan.CombineMul {
							fillNearOne64(r, src)
						}
						if hintIdle(t, isaList, h, p) {
							continue
						}
						want := kerneltest.WideBounds(p, src, nil)
						ran += runNativeHinted(t, isaList, h, p, src, nil, func(name string, dst []byte) {
							kerneltest.CheckWideBounds(t, name, p, want, dst, 0xa5)
						})
					}
				}
			}
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// TestNativeLpPowWide runs the f64 Lp norms of p other than 1 and 2
// (|x|^p as exp(p*log|x|), the root as exp(log(y)/p)) over values from
// the least subnormal to the largest f64 (kerneltest.FillWideWide:
// subnormals, 1e300s, zeros, infinities, NaN) in every shape, into f64 and f32 dst, against the
// oracle's bounds, which widen for the exp and log.
func TestNativeLpPowWide(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(56))
	ran := 0
	for _, n := range []int64{1, 2, 7, 8, 9, 17, 65, 300, 3000} {
		for _, red := range kerneltest.WideLpP {
			for _, ddt := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
				for _, specials := range []bool{false, true} {
					for _, s := range nativeShapes(n) {
						p := problemOf(s, dtypes.F64, ddt, red)
						sb, err := p.SrcBytes()
						if err != nil {
							t.Fatal(err)
						}
						src := make([]byte, sb)
						kerneltest.FillWideWide(r, src, specials)
						want := kerneltest.WideBounds(p, src, nil)
						ran += runNative(t, isaList, p, src, func(name string, dst []byte) {
							kerneltest.CheckWideBounds(t, name, p, want, dst, 0xa5)
						})
					}
				}
			}
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// TestNativePowSubnormal runs |x|^p for p 0.25, 0.5 and 0.75 of
// subnormal x of either sign, one element an output, on the interpreter
// (plan.PowF64) and the machine code, each against the exact value in
// math/big, within its own error (kerneltest.PowTol, NativePowTol).
func TestNativePowSubnormal(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(57))
	const n = 200
	ran := 0
	for _, q := range [][2]int{{1, 4}, {1, 2}, {3, 4}} {
		pw := float64(q[0]) / float64(q[1])
		p := problemOf([3][]int64{{n, 1}, {1, 1}, {0, 1}}, dtypes.F64, dtypes.F64, plan.AlgNormLpPowerPSum.Reduction(float32(pw), 0))
		src := kerneltest.SubnormalSrc(r, n)
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := kerneltest.Dst(t, p, 0xa5)
		if err := interp.Run(pl, src, ref, nil); err != nil {
			t.Fatal(err)
		}
		if msg := kerneltest.SubnormalPowMismatch(src, ref, n, q[0], q[1], func(x float64) int { return kerneltest.PowTol(x, pw) }); msg != "" {
			t.Fatalf("interpreter: %s", msg)
		}
		ran += runNative(t, isaList, p, src, func(name string, dst []byte) {
			if msg := kerneltest.SubnormalPowMismatch(src, dst, n, q[0], q[1], func(x float64) int { return kerneltest.NativePowTol(x, pw) }); msg != "" {
				t.Fatalf("%s: %s", name, msg)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// fillNearOne64 fills f64 src with values near 1, so that long products
// neither overflow nor underflow (whose order would then matter).
func fillNearOne64(r *rand.Rand, b []byte) {
	for i := int64(0); i < int64(len(b)/8); i++ {
		plan.StoreF64(dtypes.F64, b, i, 1+r.NormFloat64()/64)
	}
}

// TestNativeMaxMinSpecials checks f64 max and min over every pair of
// special values in one row and one column: NaN wins, -0 below +0.
func TestNativeMaxMinSpecials(t *testing.T) {
	isaList := isas(t)
	vals := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, math.SmallestNonzeroFloat64}
	for _, red := range []plan.Reduction{plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0)} {
		for _, a := range vals {
			for _, b := range vals {
				for _, s := range [][3][]int64{{{2, 9}, {9, 1}, {0, 1}}, {{9, 8}, {8, 1}, {1, 0}}} {
					p := problemOf(s, dtypes.F64, dtypes.F64, red)
					sb, _ := p.SrcBytes()
					src := make([]byte, sb)
					for i := int64(0); i < sb/8; i++ {
						v := 0.5
						switch i % 5 {
						case 1:
							v = a
						case 3:
							v = b
						}
						plan.StoreF64(dtypes.F64, src, i, v)
					}
					pl, _ := plan.Canonicalize(p)
					ref := kerneltest.Dst(t, p, 0xa5)
					if err := interp.Run(pl, src, ref, nil); err != nil {
						t.Fatal(err)
					}
					runNative(t, isaList, p, src, func(name string, dst []byte) {
						for i := int64(0); i < int64(len(dst)/8); i++ {
							g, w := plan.LoadF64(dtypes.F64, dst, i), plan.LoadF64(dtypes.F64, ref, i)
							if !sameF64(g, w) {
								t.Fatalf("%s: %v of %v and %v: dst[%d] = %v, interpreter %v", name, red, a, b, i, g, w)
							}
						}
					})
				}
			}
		}
	}
}

// TestNativeMaxMinNaNAt checks f64 max and min, which speculate on
// NaN-free data (nativespec.go), with one NaN at chosen places in every
// shape: the first and last elements, both vectors of a checked pair,
// inside a block past a check, one column of many; and data of signed
// zeros and negatives, where AVX2's NaN-free max may give -0 for +0.
func TestNativeMaxMinNaNAt(t *testing.T) {
	checkNativeMaxMinNaNAt(t, isas(t), kernelconf.Hints{})
}

// checkNativeMaxMinNaNAt is TestNativeMaxMinNaNAt under the runtime's
// hints h.
func checkNativeMaxMinNaNAt(t *testing.T, isaList []isaCase, h kernelconf.Hints) {
	r := rand.New(rand.NewSource(54))
	ran := 0
	for _, red := range []plan.Reduction{plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0)} {
		for _, n := range []int64{1, 9, 17, 65, 200, 3000} {
			for _, s := range nativeShapes(n) {
				p := problemOf(s, dtypes.F64, dtypes.F64, red)
				sb, err := p.SrcBytes()
				if err != nil {
					t.Fatal(err)
				}
				total := sb / 8
				var places []int64
				for _, i := range []int64{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 127, 128, 129, 130, 255, 256, total / 2, total - 2, total - 1} {
					if i >= 0 && i < total {
						places = append(places, i)
					}
				}
				places = append(places, -1) // no NaN: signed zeros
				if hintIdle(t, isaList, h, p) {
					continue
				}
				ran += checkNaNPlaces(t, r, isaList, h, p, places)
			}
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// sameF64 reports whether g is w as the exact f64 max and min give it:
// equal with the sign of a zero, or both NaN (any NaN).
func sameF64(g, w float64) bool {
	return g == w && (g != 0 || math.Signbit(g) == math.Signbit(w)) || g != g && w != w
}

// checkNaNPlaces runs the f64 max or min p, emitted under the hints h on
// every ISA of isaList, with one NaN at each of places in turn (-1: none,
// the data signed zeros and -1), against the interpreter bit for bit (any
// NaN matching any NaN, zeros their signs); it returns the runs made.
func checkNaNPlaces(t *testing.T, r *rand.Rand, isaList []isaCase, h kernelconf.Hints, p *plan.Problem, places []int64) int {
	t.Helper()
	sb, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	total := sb / 8
	// Every place's src and interpreter's dst first, so that one emitted
	// kernel per ISA runs them all.
	srcs, refs := make([][]byte, len(places)), make([][]byte, len(places))
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	for k, at := range places {
		src := make([]byte, sb)
		for i := range total {
			v := r.NormFloat64()
			if at < 0 {
				v = []float64{0, math.Copysign(0, -1), math.Copysign(0, -1), -1}[r.Intn(4)]
			}
			plan.StoreF64(dtypes.F64, src, i, v)
		}
		if at >= 0 {
			plan.StoreF64(dtypes.F64, src, at, math.NaN())
		}
		ref := kerneltest.Dst(t, p, 0xa5)
		if err := interp.Run(pl, src, ref, nil); err != nil {
			t.Fatal(err)
		}
		srcs[k], refs[k] = src, ref
	}
	return runNativeEach(t, isaList, h, p, srcs, nil, func(name string, k int, dst []byte) {
		ref := refs[k]
		for i := int64(0); i < int64(len(dst)/8); i++ {
			g, w := plan.LoadF64(dtypes.F64, dst, i), plan.LoadF64(dtypes.F64, ref, i)
			if !sameF64(g, w) {
				t.Fatalf("%s: NaN at %d: dst[%d] = %v, interpreter %v", name, places[k], i, g, w)
			}
		}
	})
}

// TestNativeLpColumnExact runs the f64 Lp norms and sums of squares in
// the column shape, whose adds are the interpreter's for a row of
// outputs in its order (each output one chain from +0 over the reduced
// index, of at most 1000 adds, which neither cuts into runs; longer sums,
// cut differently, are held to the bound in TestNativeWideShapes): the
// results must be the interpreter's bit for bit (any NaN matching any
// NaN), into f64 and f32 dst.
func TestNativeLpColumnExact(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(55))
	ran := 0
	for _, n := range []int64{1, 2, 5, 9, 100, 999, 1000} {
		for _, red := range append(kerneltest.WideLp, kerneltest.WideTransformed[:2]...) {
			for _, ddt := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
				p := problemOf([3][]int64{{n, 19}, {19, 1}, {1, 0}}, dtypes.F64, ddt, red)
				sb, err := p.SrcBytes()
				if err != nil {
					t.Fatal(err)
				}
				src := make([]byte, sb)
				kerneltest.FillWide(r, dtypes.F64, src, n%2 == 1)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				ref := kerneltest.Dst(t, p, 0xa5)
				if err := interp.Run(pl, src, ref, nil); err != nil {
					t.Fatal(err)
				}
				ran += runNative(t, isaList, p, src, func(name string, dst []byte) {
					for i := range int64(19) {
						g, w := plan.LoadF64(ddt, dst, i), plan.LoadF64(ddt, ref, i)
						if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
							t.Fatalf("%s: dst[%d] = %v, interpreter %v", name, i, g, w)
						}
					}
				})
			}
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// TestNativeWideColumnBlocks checks which AVX2 column kernels take the
// wide blocks of tuning.avx2WideAcc accumulators (emitNative): sums,
// maxima and minima of f64 and of 32- and 64-bit integers, post-ops
// too, but not an f64 max, which speculates (its NaN-free code holds Y11
// to Y13), nor a 64-bit mean (pairs of accumulators), nor a kind whose
// code needs more temporaries than the wide blocks leave (a u64 max,
// emitted again narrow). The kernels' results are checked on every ISA
// by the tests above.
func TestNativeWideColumnBlocks(t *testing.T) {
	f64, s32, s64, u64 := dtypes.F64, dtypes.S32, dtypes.S64, dtypes.U64
	col := func(dt dtypes.DataType, alg plan.Alg, post ...plan.PostOp) *plan.Plan {
		pl := kerneltest.DensePlan(t, dt, []int64{64, 40}, []int64{40, 1}, []bool{true, false}, alg.Reduction(0, 0))
		pl.PostOps = post
		return pl
	}
	for _, c := range []struct {
		name string
		pl   *plan.Plan
		wide bool
	}{
		{"f64 sum", col(f64, plan.AlgSum), true},
		{"f64 min", col(f64, plan.AlgMin), true},
		{"s32 sum", col(s32, plan.AlgSum), true},
		{"s32 max", col(s32, plan.AlgMax), true},
		{"s64 sum", col(s64, plan.AlgSum), true},
		{"s64 min", col(s64, plan.AlgMin), true},
		{"u64 max (temporaries)", col(u64, plan.AlgMax), false},
		{"f64 max (speculates)", col(f64, plan.AlgMax), false},
		{"s64 mean (pairs)", col(s64, plan.AlgMean), false},
		{"f64 sum, exp", col(f64, plan.AlgSum, plan.PostOp{Kind: ops.Exp}), true},
	} {
		k, err := kernelshape.CheckNative(c.pl, nativeISA(Options{}))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := emitNative(c.pl, kernelconf.Hints{}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, short, err := emitNativeAccs(c.pl, kernelconf.Hints{}, Options{}, k, c.wide)
		if err != nil || short {
			t.Fatalf("%s: wide %v: short %v, %v", c.name, c.wide, short, err)
		}
		if !bytes.Equal(got.Text, want.Text) {
			t.Errorf("%s: the kernel is not the one with wide blocks %v", c.name, c.wide)
		}
	}
}
