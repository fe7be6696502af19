package amd64

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// Tests of 8-bit integer src and integer dst: every value in and out,
// rounding ties, saturation at both ends, NaN and infinities reaching an
// integer dst, guard pages. The random differential tests (TestRandomPlans,
// TestRandomKinds, TestKindStages) draw int8Pairs too.

// intDsts are the dst types an 8-bit src is stored to, 16-bit floats left
// out under GDNN_TEST_OUTPUTS=f32 (see TestMain).
func intDsts() []dtypes.DataType {
	var out []dtypes.DataType
	for _, p := range int8Pairs {
		if p[0] == dtypes.S8 {
			out = append(out, p[1])
		}
	}
	return out
}

// checkGiven runs p on src and operands bins (dst starting as sentinel
// bytes) on every ISA, whole and in blocks of the outermost loop, and
// compares bit for bit with the reference and the interpreter.
func checkGiven(t *testing.T, p *plan.Problem, src []byte, bins [][]byte) {
	t.Helper()
	checkGivenOutputs(t, p, src, bins, oracle.Reduce(p, src))
}

// checkGivenOutputs is checkGiven against outs, the oracle's outputs of
// p (oracle.Reduce): problems that differ only in their dst type share
// them.
func checkGivenOutputs(t *testing.T, p *plan.Problem, src []byte, bins [][]byte, outs []oracle.Output) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize(%+v): %v", p, err)
	}
	dst0 := kerneltest.Dst(t, p, 0xA5)
	want, written := kerneltest.Expect(p, outs, dst0, bins, func(o oracle.Output) float32 {
		return oracle.FinalizeF32(p.Reduction, float32(o.Acc), o.N)
	})
	kerneltest.CheckInterp(t, p, pl, src, dst0, bins, want, written, true)
	for _, isa := range isas(t) {
		blocks := []int64{0}
		if len(pl.Outer) > 0 && pl.Outer[0].Size > 2 {
			blocks = append(blocks, pl.Outer[0].Size/2+1)
		}
		func() {
			k := compile(t, pl, isa.o)
			defer k.Release()
			kerneltest.CheckBlocks(t, isa.name, k, p, pl, src, dst0, bins, blocks, want, written, false, 0)
		}()
	}
}

// f32Bytes encodes vs as f32.
func f32Bytes(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// TestInt8EveryValue takes every s8 and u8 value through every load form
// (full vectors, tails, single elements broadcast) and, scaled by a
// scalar operand, through the store to every dst type: the scales put
// odd values on .5 ties (both signs), past both ends of every integer
// type, and on zero.
func TestInt8EveryValue(t *testing.T) {
	scales := []float32{1, 0.5, -0.5, 1.5, -2.5, 1 << 24, -(1 << 24), 1e10, -1e10, 0}
	if testing.Short() {
		scales = []float32{0.5, -2.5, 1e10, -1e10}
	}
	for _, sdt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		src := make([]byte, 3*259)
		for i := range src {
			src[i] = byte(i)
		}
		for _, ddt := range intDsts() {
			for _, c := range scales {
				op := []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{0}}}
				for _, n := range []int64{256, 259, 7} {
					for _, stride := range []int64{1, 3} {
						p := &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{n}, SrcStrides: []int64{stride},
							Reduce: []bool{false}, DstStrides: []int64{1}, PostOps: op}
						checkGiven(t, p, src[:stride*(n-1)+1], [][]byte{f32Bytes(c)})
					}
				}
				// Column sums of one value and a zero: full and tail
				// vectors read from two rows.
				col := make([]byte, 2*259)
				copy(col, src[:259])
				p := &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{2, 259}, SrcStrides: []int64{259, 1},
					Reduce: []bool{true, false}, DstStrides: []int64{0, 1},
					PostOps: []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{0, 0}}}}
				checkGiven(t, p, col, [][]byte{f32Bytes(c)})
			}
		}
	}
}

// TestInt8MeanTies takes means that land exactly on .5, for every pair of
// neighbouring values (a, a+1), rows and columns, into every integer
// dst: ties go to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2).
func TestInt8MeanTies(t *testing.T) {
	mean := plan.AlgMean.Reduction(0, 0)
	for _, sdt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		lo := 0
		if sdt == dtypes.S8 {
			lo = -128
		}
		n := int64(255) // pairs (a, a+1), a = lo .. lo+254
		rows := make([]byte, 2*n)
		cols := make([]byte, 2*n)
		for i := int64(0); i < n; i++ {
			a := lo + int(i)
			rows[2*i], rows[2*i+1] = byte(a), byte(a+1)
			cols[i], cols[n+i] = byte(a), byte(a+1)
		}
		for _, ddt := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32} {
			checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{n, 2}, SrcStrides: []int64{2, 1},
				Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: mean}, rows, nil)
			checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{2, n}, SrcStrides: []int64{n, 1},
				Reduce: []bool{true, false}, DstStrides: []int64{0, 1}, Reduction: mean}, cols, nil)
			// One output per call: the mean of a whole row.
			checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{2}, SrcStrides: []int64{1},
				Reduce: []bool{true}, DstStrides: []int64{0}, Reduction: mean}, rows[4:6], nil)
		}
	}
}

// TestInt8Saturation sums beyond the s32 range (2^24 bytes of 255, and of
// -128) and beyond the 8-bit ranges, and scales a sum onto the edges of
// s32: 2^31 saturates to 2147483647, 2^31-128 (the largest f32 below it)
// is kept, -2^31 is kept, below it saturates, and infinities saturate.
func TestInt8Saturation(t *testing.T) {
	sum := plan.AlgSum.Reduction(0, 0)
	const n = 1 << 24
	big := make([]byte, n)
	for _, c := range []struct {
		sdt dtypes.DataType
		v   byte
	}{{dtypes.U8, 255}, {dtypes.S8, 0x80}} {
		for i := range big {
			big[i] = c.v
		}
		// A whole row into each dst type (the oracle's sum once for all
		// three), and 16 rows of 2^20 into s32.
		row := &plan.Problem{SrcDT: c.sdt, DstDT: dtypes.S32, Dims: []int64{n}, SrcStrides: []int64{1},
			Reduce: []bool{true}, DstStrides: []int64{0}, Reduction: sum}
		outs := oracle.Reduce(row, big)
		for _, ddt := range []dtypes.DataType{dtypes.S32, dtypes.S8, dtypes.U8} {
			p := *row
			p.DstDT = ddt
			checkGivenOutputs(t, &p, big, nil, outs)
		}
		checkGiven(t, &plan.Problem{SrcDT: c.sdt, DstDT: dtypes.S32, Dims: []int64{16, n / 16}, SrcStrides: []int64{n / 16, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: sum}, big, nil)
	}
	inf := float32(math.Inf(1))
	edges := []float32{1 << 31, 1<<31 - 128, -(1 << 31), -(1<<31 + 256), inf, -inf, 3e9, -3e9, 2147483520, 0.5, -0.5}
	for _, sdt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		ones := make([]byte, len(edges)*3)
		for i := range ones {
			ones[i] = 1
		}
		for _, ddt := range []dtypes.DataType{dtypes.S32, dtypes.S8, dtypes.U8} {
			// Each output is the mean of three ones (exactly 1) times
			// its edge.
			checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{int64(len(edges)), 3}, SrcStrides: []int64{3, 1},
				Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: plan.AlgMean.Reduction(0, 0),
				PostOps: []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{1, 0}}}},
				ones, [][]byte{f32Bytes(edges...)})
		}
	}
}

// TestInt8NaNAndInfinities sends NaN and infinities to an integer dst
// through the post-ops: sums divided by an operand of 0 (x/0 is ±Inf,
// 0/0 NaN) and square roots of negative sums (NaN). NaN stores as 0,
// infinities saturate.
func TestInt8NaNAndInfinities(t *testing.T) {
	src := []byte{0, 0, 3, 0, 0x80, 0x80, 5, 0xff, 1, 0xfe, 0, 0} // s8 rows of 2: 0, 3, -256, 4, -1, 0
	for _, ddt := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32} {
		for _, post := range [][]plan.PostOp{
			{{Kind: ops.Divide, BinDT: dtypes.F32, BinStrides: []int64{0, 0}}},
			{{Kind: ops.Sqrt}},
			{{Kind: ops.Sqrt}, {Kind: ops.Divide, BinDT: dtypes.F32, BinStrides: []int64{0, 0}}},
		} {
			var bins [][]byte
			if len(post) > 0 && post[len(post)-1].Kind == ops.Divide {
				bins = [][]byte{f32Bytes(0)}
			}
			for _, sdt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
				checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{6, 2}, SrcStrides: []int64{2, 1},
					Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: post}, src, bins)
			}
		}
	}
}

// TestInt8GuardPages runs every kernel shape with tails of 0..2V+1
// (guardTail) for every int8 pair (-short: half of them for each tail,
// kerneltest.ShortPick) and, in turn, every covered reduction, with each tensor
// ending (and starting) at a PROT_NONE page: byte loads and stores of
// tails must touch nothing past the tensors.
func TestInt8GuardPages(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(24))
	for tail := int64(0); tail <= 33; tail++ {
		if !guardTail(tail) {
			continue
		}
		for i, pair := range int8Pairs {
			if !kerneltest.ShortPick(i, int(tail)) {
				continue
			}
			for j, p := range guardShapes(tail, pair[0], pair[1]) {
				p.Reduction = kindReductions[(int(tail)+i+j)%len(kindReductions)]
				runGuarded(t, r, p, isaList)
			}
		}
	}
}

// TestInt8Covers checks the declared data types: every src a plan takes
// with every dst, and nothing else.
func TestInt8Covers(t *testing.T) {
	all := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32, dtypes.Undef}
	for _, o := range []Options{{}, {AVX512: true}} {
		c := Covers(o)
		for _, s := range all {
			for _, d := range all {
				want := plan.IsSrcType(s) && plan.IsDstType(d)
				if got := c.TakesDataTypes(s, d); got != want {
					t.Errorf("%+v: TakesDataTypes(%v, %v) = %v, want %v", o, s, d, got, want)
				}
			}
		}
	}
}

// TestInt8ExactRowSums sums rows of 8-bit data whose totals pass 2^24,
// where f32 accumulation would round and the exact integer sums
// (sadRow) are bit-equal to the reference's exact sum rounded once: long
// rows, rows under an outer reduced loop, and tails of every length mod
// 16.
func TestInt8ExactRowSums(t *testing.T) {
	r := rand.New(rand.NewSource(25))
	for _, sdt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		for _, ddt := range []dtypes.DataType{dtypes.F32, dtypes.S32} {
			for _, red := range []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMean.Reduction(0, 0)} {
				n := int64(1<<20 + 13)
				src := make([]byte, 2*n)
				fillInt8(r, sdt, src, 255)
				if sdt == dtypes.S8 {
					for i := range src {
						src[i] |= 0x80 >> (i % 2) // mostly negative: the sums do not cancel
					}
				}
				checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{2, n}, SrcStrides: []int64{n, 1},
					Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: red}, src, nil)
				// [5, 2, 100003] over axes 0 and 2: an outer reduced loop.
				checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{5, 2, 100003},
					SrcStrides: []int64{200006, 100003, 1}, Reduce: []bool{true, false, true}, DstStrides: []int64{0, 1, 0},
					Reduction: red}, src[:5*200006], nil)
				for tail := int64(0); tail < 16; tail++ {
					m := 4*64 + 16 + tail
					checkGiven(t, &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{3, m}, SrcStrides: []int64{m, 1},
						Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: red}, src[:3*m], nil)
				}
			}
		}
	}
}
