package kerneltest

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestCompare checks the comparisons: NaN matches any NaN, zero signs
// count unless anyZero, a near output passes within its tolerance only,
// and a changed byte outside the outputs or a length difference fails.
func TestCompare(t *testing.T) {
	f32 := dtypes.F32
	want := Store(f32, []float32{float32(math.NaN()), 0, 1, 5})
	written := map[int64]bool{0: true, 1: true, 2: true}
	next := math.Float32frombits(math.Float32bits(1) + 1)
	for _, c := range []struct {
		got     []float32
		anyZero bool
		tol     int64
		ok      bool
	}{
		{[]float32{float32(math.NaN()), 0, 1, 5}, false, 0, true},
		{[]float32{-float32(math.NaN()), 0, 1, 5}, false, 0, true},
		{[]float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 1, 5}, false, 0, false},
		{[]float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 1, 5}, true, 0, true},
		{[]float32{float32(math.NaN()), 0, next, 5}, false, 0, false},
		{[]float32{float32(math.NaN()), 0, next, 5}, false, 1, true},
		{[]float32{float32(math.NaN()), 0, 1, 6}, true, 4, false},
		{[]float32{1, 0, 1, 5}, true, 4, false},
	} {
		got := Store(f32, c.got)
		if d := CompareNear(f32, got, want, written, c.anyZero, c.tol); (d == "") != c.ok {
			t.Errorf("CompareNear(%v, anyZero %v, tol %d) = %q, want ok %v", c.got, c.anyZero, c.tol, d, c.ok)
		}
	}
	if d := CompareExact(f32, want[:8], want, written, true); d == "" {
		t.Errorf("CompareExact of a shorter dst: no difference")
	}
	if !SameValue(dtypes.U8, []byte{7}, []byte{7}, 0, false) || SameValue(dtypes.S8, []byte{7}, []byte{8}, 0, true) {
		t.Errorf("SameValue of 8-bit elements")
	}
}

// TestFillInts checks that FillInts keeps to the range given and the
// type's.
func TestFillInts(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	b := make([]byte, 1000)
	for _, c := range []struct {
		dt             dtypes.DataType
		lo, hi, wl, wh int
	}{{dtypes.S8, -3, 3, -3, 3}, {dtypes.U8, -3, 3, 0, 3}, {dtypes.S8, -1000, 1000, -128, 127}, {dtypes.U8, 0, 1000, 0, 255}} {
		FillInts(r, c.dt, b, c.lo, c.hi)
		for _, x := range b {
			v := int(x)
			if c.dt == dtypes.S8 {
				v = int(int8(x))
			}
			if v < c.wl || v > c.wh {
				t.Fatalf("FillInts(%v, %d, %d) gave %d", c.dt, c.lo, c.hi, v)
			}
		}
	}
}

// TestDeepPlan checks that DeepPlan's plans are valid, as deep as asked,
// and that DeepOutputs lists 2^nOuter distinct elements inside dst.
func TestDeepPlan(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {2, 3}, {4, 1}} {
		pl := DeepPlan(c[0], c[1])
		if len(pl.Outer) != c[0] || len(pl.Reduced) != c[1] || pl.BinaryCount() != plan.MaxBinary {
			t.Errorf("DeepPlan(%d, %d): %d outer, %d reduced loops, %d operands", c[0], c[1], len(pl.Outer), len(pl.Reduced), pl.BinaryCount())
		}
		db, err := pl.DstBytes()
		if err != nil {
			t.Fatal(err)
		}
		outs := DeepOutputs(c[0])
		if len(outs) != 1<<c[0] {
			t.Errorf("DeepOutputs(%d): %d elements", c[0], len(outs))
		}
		for o := range outs {
			if o < 0 || o >= db/4 {
				t.Errorf("DeepOutputs(%d): element %d outside dst (%d bytes)", c[0], o, db)
			}
		}
	}
}
