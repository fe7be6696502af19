package arm64

import (
	"encoding/binary"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// Tests of 8-bit integer data: s8 and u8 src (loaded, widened and
// converted to f32 exactly) and s8, u8 and s32 dst (rounded to nearest
// even, saturated, NaN to 0). The random differential tests draw these
// pairs too (randomProblem).

// checkData runs p on the given src and operands through the interpreter
// and the kernel (whole and in blocks of the outermost loop) and compares
// both with the reference, bit for bit; it returns the kernel's dst.
func checkData(t *testing.T, p *plan.Problem, src []byte, bins [][]byte, blocks []int64) []byte {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize(%+v): %v", p, err)
	}
	dst0 := kerneltest.Dst(t, p, 0x5A)
	want, outs := kindResult(p, 0, src, dst0, bins)
	kerneltest.CheckInterp(t, p, pl, src, dst0, bins, want, outs, false)
	k := compile(t, pl)
	defer k.Release()
	return kerneltest.CheckBlocks(t, "neon", k, p, pl, src, dst0, bins, blocks, want, outs, false, 0)
}

// intAt reads element i of integer type dt.
func intAt(dt dtypes.DataType, b []byte, i int) int64 {
	switch dt {
	case dtypes.S8:
		return int64(int8(b[i]))
	case dtypes.U8:
		return int64(b[i])
	}
	return int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
}

// copyProblem is a plan that reduces nothing over n elements of src
// (stride ss) into dense dst: every element goes through one load and
// one store.
func copyProblem(sdt, ddt dtypes.DataType, n, ss int64) *plan.Problem {
	return &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{n}, SrcStrides: []int64{ss}, Reduce: []bool{false},
		DstStrides: []int64{1}, Reduction: plan.Copy}
}

// TestInt8EveryValue loads every s8 and u8 value and stores it to every
// dst type, through contiguous loads (vector runs, the 3-element tail)
// and strided ones (element by element), and checks each result against
// its direct conversion as well as the reference.
func TestInt8EveryValue(t *testing.T) {
	needARM64(t)
	for _, pr := range intPairs {
		for _, ss := range []int64{1, 3} {
			// 259 elements: every byte value and a tail of three.
			n := int64(259)
			src := make([]byte, (n-1)*ss+1)
			for i := range n {
				src[i*ss] = byte(i)
			}
			got := checkData(t, copyProblem(pr[0], pr[1], n, ss), src, nil, []int64{0, 5})
			for i := range n {
				v := dtypes.LoadF32(pr[0], src, i*ss)
				want := v
				if pr[1].IsInt8() {
					lo, hi := kerneltest.IntRange(pr[1])
					want = min(max(v, float32(lo)), float32(hi))
				}
				if w := dtypes.LoadF32(pr[1], got, i); w != want {
					t.Fatalf("%v -> %v: value %v stored as %v, want %v", pr[0], pr[1], v, w, want)
				}
			}
		}
	}
}

// TestInt8StoreRounding stores f32 values around every integer of the
// 8-bit ranges (every quarter from -300 to 300, so every tie), the s32
// limits, ±0, subnormals, ±Inf and NaN to s8, u8 and s32: nearest even,
// saturated, NaN 0, as dtypes.F32ToS8/U8/S32.
func TestInt8StoreRounding(t *testing.T) {
	needARM64(t)
	var vals []float32
	for q := -1200; q <= 1200; q++ {
		vals = append(vals, float32(q)/4)
	}
	two31 := float32(1 << 31)
	vals = append(vals, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		two31, -two31, math.Nextafter32(two31, 0), math.Nextafter32(-two31, 0), math.Nextafter32(two31, math.MaxFloat32),
		math.Nextafter32(-two31, -math.MaxFloat32), 1<<24+1, 1<<23+0.5, -(1<<23 + 0.5), 8388609.5)
	src := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
	}
	for _, ddt := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32} {
		got := checkData(t, copyProblem(dtypes.F32, ddt, int64(len(vals)), 1), src, nil, []int64{0, 7})
		for i, v := range vals {
			var want int64
			switch ddt {
			case dtypes.S8:
				want = int64(dtypes.F32ToS8(v))
			case dtypes.U8:
				want = int64(dtypes.F32ToU8(v))
			default:
				want = int64(dtypes.F32ToS32(v))
			}
			if g := intAt(ddt, got, i); g != want {
				t.Fatalf("f32 %v -> %v: got %d, want %d", v, ddt, g, want)
			}
		}
	}
}

// TestInt8MeanTies takes means of two and of four 8-bit values that land
// exactly on .5 (and the rest, in the same rows) into every integer dst:
// ties go to even, so the mean of 2 and 3 is 2, of 3 and 4 is 4.
func TestInt8MeanTies(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(31))
	for _, pr := range intPairs {
		if !pr[1].IsInt() {
			continue
		}
		for _, w := range []int64{2, 4} {
			rows := int64(203)
			p := &plan.Problem{SrcDT: pr[0], DstDT: pr[1], Dims: []int64{rows, w}, SrcStrides: []int64{w, 1},
				Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
			src := make([]byte, rows*w)
			lo, hi := kerneltest.IntRange(pr[0])
			for i := range rows {
				// Mostly rows whose sum is w/2 modulo w: a mean on .5.
				for {
					sum := int64(0)
					for j := range w {
						v := lo + r.Intn(hi-lo+1)
						src[i*w+j] = byte(v)
						sum += int64(v)
					}
					if i%4 == 3 || ((sum%w)+w)%w == w/2 {
						break
					}
				}
			}
			// The two README examples in the first rows.
			if w == 2 {
				copy(src, []byte{2, 3, 3, 4})
			}
			got := checkData(t, p, src, nil, []int64{0, 3})
			if w == 2 && (intAt(pr[1], got, 0) != 2 || intAt(pr[1], got, 1) != 4) {
				t.Fatalf("%v: means of 2,3 and 3,4 are %d and %d, want 2 and 4", pr, intAt(pr[1], got, 0), intAt(pr[1], got, 1))
			}
		}
	}
}

// TestInt8Saturation drives sums past both ends of every integer dst:
// rows of the largest and smallest 8-bit values into s8 and u8 (short
// rows and rows long enough for the vector runs), and a u8 sum past
// 2^31 (2^23 + 2^21 elements of 255) and scaled sums past ±2^31 into s32.
func TestInt8Saturation(t *testing.T) {
	needARM64(t)
	for _, sdt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		lo, hi := kerneltest.IntRange(sdt)
		for _, ddt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
			for _, n := range []int64{2, 3, 37, 300} {
				// Row 0 all hi, row 1 all lo, row 2 alternating.
				p := &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{3, n}, SrcStrides: []int64{n, 1},
					Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: plan.AlgSum.Reduction(0, 0)}
				src := make([]byte, 3*n)
				for j := range n {
					src[j], src[n+j] = byte(hi), byte(lo)
					src[2*n+j] = byte([2]int{lo, hi}[j%2])
				}
				got := checkData(t, p, src, nil, []int64{0, 1})
				dlo, dhi := kerneltest.IntRange(ddt)
				if want := int64(min(max(hi*int(n), dlo), dhi)); intAt(ddt, got, 0) != want {
					t.Errorf("%v -> %v, %d x %d: got %d, want %d", sdt, ddt, n, hi, intAt(ddt, got, 0), want)
				}
				if want := int64(min(max(lo*int(n), dlo), dhi)); intAt(ddt, got, 1) != want {
					t.Errorf("%v -> %v, %d x %d: got %d, want %d", sdt, ddt, n, lo, intAt(ddt, got, 1), want)
				}
			}
		}
	}
	// Past the s32 range: a long u8 sum, and small sums scaled by a
	// large operand of either sign.
	n := int64(1<<23 + 1<<21)
	src := make([]byte, n)
	for i := range src {
		src[i] = 255
	}
	p := &plan.Problem{SrcDT: dtypes.U8, DstDT: dtypes.S32, Dims: []int64{n}, SrcStrides: []int64{1}, Reduce: []bool{true},
		DstStrides: []int64{0}, Reduction: plan.AlgSum.Reduction(0, 0)}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	k := compile(t, pl)
	got := make([]byte, 4)
	k.RunBlocks(pl, src, got, nil, 0)
	k.Release()
	if g := intAt(dtypes.S32, got, 0); g != math.MaxInt32 {
		t.Errorf("u8 sum of %d x 255 to s32: got %d, want %d", n, g, math.MaxInt32)
	}
	for _, scale := range []float32{3e9, -3e9, 1e30, -1e30} {
		p := &plan.Problem{SrcDT: dtypes.S8, DstDT: dtypes.S32, Dims: []int64{5, 6}, SrcStrides: []int64{6, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: plan.AlgSum.Reduction(0, 0),
			PostOps: []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{0, 0}}}}
		src := []byte{1, 1, 1, 1, 1, 1, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
			127, 127, 127, 127, 127, 127}
		bin := make([]byte, 4)
		binary.LittleEndian.PutUint32(bin, math.Float32bits(scale))
		got := checkData(t, p, src, [][]byte{bin}, []int64{0, 2})
		sign := int64(1)
		if scale < 0 {
			sign = -1
		}
		for i, s := range []int64{1, -1, 0, -1, 1} {
			want := int64(0)
			switch s * sign {
			case 1:
				want = math.MaxInt32
			case -1:
				want = math.MinInt32
			}
			if g := intAt(dtypes.S32, got, i); g != want {
				t.Errorf("sum row %d times %v to s32: got %d, want %d", i, scale, g, want)
			}
		}
	}
}

// TestInt8SpecialsThroughPostOps sends NaN, +Inf and -Inf into integer
// dst through binary post-ops (Add of a special operand; Divide by ±0):
// NaN stores 0, the infinities the type's limits.
func TestInt8SpecialsThroughPostOps(t *testing.T) {
	needARM64(t)
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0,
		float32(math.Copysign(0, -1)), 1e20, -1e20}
	for _, pr := range intPairs {
		if !pr[1].IsInt() {
			continue
		}
		for _, kind := range []ops.Kind{ops.Add, ops.Divide} {
			m := int64(len(specials))
			p := &plan.Problem{SrcDT: pr[0], DstDT: pr[1], Dims: []int64{m, 5}, SrcStrides: []int64{5, 1},
				Reduce: []bool{false, true}, DstStrides: []int64{1, 0},
				PostOps: []plan.PostOp{{Kind: kind, BinDT: dtypes.F32, BinStrides: []int64{1, 0}}, {Kind: ops.Abs}}}
			src := make([]byte, 5*m)
			for i := range src {
				src[i] = byte(1 + i%7)
			}
			bin := make([]byte, 4*m)
			for i, v := range specials {
				binary.LittleEndian.PutUint32(bin[4*i:], math.Float32bits(v))
			}
			got := checkData(t, p, src, [][]byte{bin}, []int64{0, 3})
			// NaN in either post-op gives 0; an infinity (Abs: +Inf)
			// the top of the range.
			_, hi := kerneltest.IntRange(pr[1])
			if pr[1] == dtypes.S32 {
				hi = math.MaxInt32
			}
			if g := intAt(pr[1], got, 0); g != 0 {
				t.Errorf("%v %v NaN: got %d, want 0", pr, kind, g)
			}
			// Add ±Inf, or Divide by ±0, gives an infinity.
			inf := []int{1, 2}
			if kind == ops.Divide {
				inf = []int{3, 4}
			}
			for _, i := range inf {
				if g := intAt(pr[1], got, i); g != int64(hi) {
					t.Errorf("%v %v %v: got %d, want %d", pr, kind, specials[i], g, hi)
				}
			}
		}
	}
}

// TestInt8Shapes runs every kernel shape with every 8-bit integer pair,
// tails around the vector width, an operand of each float type and a
// unary post-op, like TestShapes.
func TestInt8Shapes(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(32))
	for _, n := range []int64{1, 7, 13, 20} {
		for pi, pr := range intPairs {
			bi := (int(n) + pi) % len(floatTypes)
			for _, s := range shapes(n, pr[0], pr[1], floatTypes[bi]) {
				p := s.p
				p.PostOps = append(p.PostOps, plan.PostOp{Kind: kinds[(int(n)+pi)%7], Alpha: -0.5, Beta: 1.25})
				t.Run(s.name, func(t *testing.T) {
					checkProblem(t, r, p, false, bi == 2, []int64{0, 1, 3})
				})
			}
		}
	}
}

// TestInt8Kinds runs every covered reduction on every kernel shape with
// 8-bit integer src and a rotating dst type, at tail lengths 1..2V+1.
func TestInt8Kinds(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(33))
	for ci, c := range reductions {
		n := int64(1 + ci%(2*lanes+1))
		pr := intPairs[ci%len(intPairs)]
		for _, s := range shapes(n, pr[0], pr[1], floatTypes[ci%len(floatTypes)]) {
			s.p.Reduction = c.r
			checkKind(t, r, c.name+" "+s.name, s.p, 0, false, ci%3 == 0, true, false, []int64{0, 2})
		}
	}
}

// TestInt8GuardPages runs every kernel shape with 8-bit integer src and
// integer dst next to guard pages, at every tail length 0..2V+3: partial
// loads and stores of one, two and three bytes end at a PROT_NONE page.
func TestInt8GuardPages(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(34))
	for n := int64(0); n <= 2*lanes+3; n++ {
		for i := range 3 {
			pr := intPairs[(int(n)*3+i)%len(intPairs)]
			bdt := floatTypes[(int(n)+i)%len(floatTypes)]
			for _, s := range shapes(n, pr[0], pr[1], bdt) {
				runFenced(t, r, s.name, s.p)
			}
		}
	}
}

// TestInt8Disassembly checks that 8-bit kernels widen and convert
// (sxtl/uxtl, scvtf/ucvtf) and round and narrow (fcvtns, sqxtn, sqxtun,
// uqxtn) with the instructions intended; on every GOARCH.
func TestInt8Disassembly(t *testing.T) {
	cases := []struct {
		sdt, ddt dtypes.DataType
		want     []string
	}{
		{dtypes.S8, dtypes.S8, []string{"sxtl v", "sxtl2 v", "scvtf v", "fcvtns v", "sqxtn v"}},
		{dtypes.U8, dtypes.U8, []string{"uxtl v", "uxtl2 v", "ucvtf v", "fcvtns v", "sqxtun v", "uqxtn v"}},
		{dtypes.U8, dtypes.S32, []string{"uxtl v", "ucvtf v", "fcvtns v"}},
	}
	// Sums of untransformed 8-bit rows add bytes pairwise in integers.
	for _, dt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		p := &plan.Problem{SrcDT: dt, DstDT: dtypes.S32, Dims: []int64{3, 100}, SrcStrides: []int64{100, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, Reduction: plan.AlgSum.Reduction(0, 0)}
		prefix := map[dtypes.DataType]string{dtypes.S8: "s", dtypes.U8: "u"}[dt]
		for _, sq := range []bool{false, true} {
			if sq {
				p.Reduction = plan.AlgNormLpPowerPSum.Reduction(2, 0)
			}
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			code, err := Emit(pl)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, in := range disassemble(t, code.Text) {
				if strings.HasPrefix(in.text, prefix+"addlp v") {
					n++
				}
			}
			// Some for the sum; none for a sum of squares.
			if (n > 0) == sq {
				t.Errorf("%v sum (squares %v) of rows of 100: %d %saddlp", dt, sq, n, prefix)
			}
		}
	}
	for _, c := range cases {
		for _, s := range shapes(13, c.sdt, c.ddt, dtypes.F32) {
			if s.name != "row long" && s.name != "column wide" {
				continue
			}
			pl, err := plan.Canonicalize(s.p)
			if err != nil {
				t.Fatal(err)
			}
			code, err := Emit(pl)
			if err != nil {
				t.Fatalf("%v:%v %s: %v", c.sdt, c.ddt, s.name, err)
			}
			var text strings.Builder
			for _, in := range disassemble(t, code.Text) {
				text.WriteString(in.text + "\n")
			}
			for _, w := range c.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("%v:%v %s: no %q in\n%s", c.sdt, c.ddt, s.name, w, text.String())
				}
			}
		}
	}
}

// TestInt8Covers checks the data type pairs the emitter declares: every
// src type a plan takes with every dst type, nothing else.
func TestInt8Covers(t *testing.T) {
	all := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32, dtypes.Undef}
	for _, s := range all {
		for _, d := range all {
			want := s != dtypes.S32 && s != dtypes.Undef && d != dtypes.Undef
			if got := Covers.TakesDataTypes(s, d); got != want {
				t.Errorf("Covers.TakesDataTypes(%v, %v) = %v, want %v", s, d, got, want)
			}
		}
	}
}
