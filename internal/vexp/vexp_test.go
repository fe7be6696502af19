package vexp

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// TestModel holds the scalar model, the steps the emitters follow, to the
// contract the emitters are tested against: so a failure of an emitter's
// sweep is the emitter's, not the algorithm's.
func TestModel(t *testing.T) {
	var worst int64
	for _, x := range Sweep(4099) {
		u, ok := Check(x, Model(x))
		if !ok {
			t.Fatalf("Model(%v) = %v (bits %#x), want float32(math.Exp) = %v", x, Model(x), math.Float32bits(Model(x)),
				float32(math.Exp(float64(x))))
		}
		worst = max(worst, u)
	}
	t.Logf("largest error %d ulp", worst)
}

// TestCheck pins the contract's edges.
func TestCheck(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		x, got float32
		ok     bool
	}{
		{0, 1, true},
		{0, math.Nextafter32(1, 2), true},
		{0, math.Nextafter32(math.Nextafter32(1, 2), 2), false},
		{89, inf, true},
		{89, math.MaxFloat32, false},
		{88, inf, false},
		{-200, 0, true},
		{-200, math.SmallestNonzeroFloat32, false},
		{float32(math.Inf(-1)), 0, true},
		{f32(0x7f800001), f32(0x7f800001), true},
		{f32(0x7f800001), f32(0x7fc00001), false},
		{-90, math.Float32frombits(math.Float32bits(float32(math.Exp(-90))) + 1), true},
	} {
		if _, ok := Check(c.x, c.got); ok != c.ok {
			t.Errorf("Check(%v, %v) ok %v, want %v", c.x, c.got, ok, c.ok)
		}
	}
	if ULPs(0, float32(math.Copysign(0, -1))) != 0 || ULPs(math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32) != 2 {
		t.Error("ULPs does not count across zero")
	}
}

// TestNear pins the dst tolerance: one step of each type, not two.
func TestNear(t *testing.T) {
	le32 := func(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
	le16 := func(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }
	for _, c := range []struct {
		dt   dtypes.DataType
		a, b []byte
		want bool
	}{
		{dtypes.F32, le32(0x3f800000), le32(0x3f800001), true},
		{dtypes.F32, le32(0x3f800000), le32(0x3f800002), false},
		{dtypes.F32, le32(0x7f7fffff), le32(0x7f800000), false}, // MaxFloat32 and +Inf: an overflow is exact
		{dtypes.F32, le32(0x7f800000), le32(0x7f800000), true},
		{dtypes.BF16, le16(0x7f7f), le16(0x7f80), true}, // 16-bit: one side may round to +Inf
		{dtypes.F32, le32(0x7fc00000), le32(0x7fc00000), false},
		{dtypes.BF16, le16(0x3f80), le16(0x3f81), true},
		{dtypes.BF16, le16(0x3f80), le16(0x3f82), false},
		{dtypes.F16, le16(0x8001), le16(0x0000), true},
		{dtypes.F16, le16(0x8001), le16(0x0001), false},
		{dtypes.F16, le16(0x7c01), le16(0x7c00), false},
		{dtypes.S8, []byte{0x80}, []byte{0x81}, true},
		{dtypes.U8, []byte{0}, []byte{2}, false},
		{dtypes.S32, le32(1 << 26), le32(1<<26 + 8), true}, // one f32 ulp past 2^24
		{dtypes.S32, le32(100), le32(102), false},
	} {
		if got := Near(c.dt, c.a, c.b); got != c.want {
			t.Errorf("Near(%v, %x, %x) = %v, want %v", c.dt, c.a, c.b, got, c.want)
		}
	}
}

// TestSumModel holds the exp for sums' scalar model to its contract.
func TestSumModel(t *testing.T) {
	var worst int64
	for _, x := range Sweep(4099) {
		u, ok := CheckSum(Quiet(x), SumModel(x))
		if !ok {
			t.Fatalf("SumModel(%v) = %v (bits %#x), want e^x = %v", x, SumModel(x), math.Float32bits(SumModel(x)), math.Exp(float64(x)))
		}
		worst = max(worst, u)
	}
	t.Logf("largest error %d x 2^-24", worst)
}

// TestExpOfZero: both exps give e^0 (and e^-0) exactly 1, the Exp
// post-op's by its c0 = 1 and r = 0, the exp for sums' by its c0 = 1 and
// f = 0: a log-sum-exp of [0, -Inf, ...] is then exactly 0.
func TestExpOfZero(t *testing.T) {
	if SumPoly[0] != OneBits || Poly[0] != OneBits {
		t.Errorf("c0 is %#x (SumPoly) and %#x (Poly), want 1's bits %#x", SumPoly[0], Poly[0], OneBits)
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1))} {
		if got := SumModel(x); math.Float32bits(got) != OneBits {
			t.Errorf("SumModel(%v) = %v (bits %#x), want 1", x, got, math.Float32bits(got))
		}
		if got := Model(x); math.Float32bits(got) != OneBits {
			t.Errorf("Model(%v) = %v (bits %#x), want 1", x, got, math.Float32bits(got))
		}
	}
}

// TestSumPoly holds SumPoly, evaluated as the emitters do (Horner's rule
// with FMAs, FMA32), to SumPolyError against 2^f: at every f32 f in
// [1/32, 1], which holds all of its error's peaks, and every 251st
// below (every 31st above and 4001st below with -short).
func TestSumPoly(t *testing.T) {
	above, below := uint32(1), uint32(251)
	if testing.Short() {
		above, below = 31, 4001
	}
	lo, hi := math.Float32bits(1.0/32), math.Float32bits(1)
	var worst float64
	var at float32
	check := func(b uint32) {
		f := f32(b)
		p := f32(SumPoly[SumPolyDegree])
		for k := SumPolyDegree - 1; k >= 0; k-- {
			p = FMA32(p, f, f32(SumPoly[k]))
		}
		want := math.Exp2(float64(f))
		if e := math.Abs(float64(p)-want) / want / 0x1p-24; e > worst {
			worst, at = e, f
		}
	}
	for b := uint32(0); b < lo; b += below {
		check(b)
	}
	for b := lo; b < hi; b += above {
		check(b)
	}
	check(hi)
	if worst > SumPolyError {
		t.Errorf("SumPoly's error at f = %v is %.4f x 2^-24, above SumPolyError = %v", at, worst, SumPolyError)
	}
	t.Logf("largest error %.4f x 2^-24, at f = %v", worst, at)
}

// TestSumScale checks step 4's 2^n: for every n the clamp allows, the
// bits of n + SumScaleBits shifted into the exponent field are those of
// 2^n (+Inf's at n = 128).
func TestSumScale(t *testing.T) {
	for n := -126; n <= 128; n++ {
		got := f32(math.Float32bits(float32(n)+f32(SumScaleBits)) << MantBits)
		if want := math.Ldexp(1, n); float64(got) != want && !(n == 128 && math.IsInf(float64(got), 1)) {
			t.Fatalf("2^%d built as %v (bits %#x), want %v", n, got, math.Float32bits(got), want)
		}
	}
}

// TestSumProductExact checks step 4's claim that p * 2^n is exact (or
// +Inf at n = 128), which lets AVX2 and NEON fuse it with the sum's add:
// over the sweep, and for every x where n is -126, the lowest n.
func TestSumProductExact(t *testing.T) {
	xs := Sweep(4099)
	swept := len(xs)
	for x := f32(SumLoBits); math.Floor(float64(float32(x*f32(Log2eBits)))) == -126; x = math.Nextafter32(x, 0) {
		xs = append(xs, x)
	}
	if walked := len(xs) - swept; walked < 40000 {
		t.Fatalf("only %d inputs with n = -126: the range was not walked", walked)
	}
	for _, x := range xs {
		if x != x {
			continue
		}
		p, scale := sumFactors(x)
		exact := float64(p) * float64(scale)
		if got := p * scale; float64(got) != exact && !math.IsInf(float64(scale), 1) {
			t.Fatalf("x = %v: p * 2^n = %v * %v rounds to %v, exactly %v", x, p, scale, got, exact)
		}
	}
}

// TestCheckSum pins the exp for sums' contract at its edges.
func TestCheckSum(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	e4 := float32(math.Exp(4))
	for _, c := range []struct {
		x, got float32
		ok     bool
	}{
		{0, 1, true},
		{0, 1 + 4*0x1p-23, false},
		{4, e4 * (1 + 8*0x1p-24), true},
		{4, e4 * (1 + 10*0x1p-24), false},
		{89, inf, true},
		{89, math.MaxFloat32, false},
		{88, inf, false},
		{88.72283, inf, false},
		{88.72284, inf, true},
		{88.72284, math.MaxFloat32, true},
		{-200, 0, true},
		{-200, 1.6e-38, true},
		{-200, 1.7e-38, false},
		{-200, -1e-40, false},
		{float32(math.Inf(-1)), 0, true},
		{nan, nan, true},
		{nan, 0, false},
		{1, nan, false},
	} {
		if _, ok := CheckSum(c.x, c.got); ok != c.ok {
			t.Errorf("CheckSum(%v, %v) ok %v, want %v", c.x, c.got, ok, c.ok)
		}
	}
}
