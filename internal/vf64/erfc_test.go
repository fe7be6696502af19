package vf64

import (
	"math"
	"math/rand"
	"testing"
)

// TestErfcModel holds Erfc, the steps the machine code takes, to
// math.Erfc on the specials, random bit patterns, the exp's range, and a
// dense sweep of [-30, 30] where erfc is neither 0, 1 nor 2: within
// ErfcULP where math.Erfc is normal, within two subnormal steps where it
// is not.
func TestErfcModel(t *testing.T) {
	xs := PostOpInputs(Inputs(rand.New(rand.NewSource(3)), 400_000))
	for i := range 600_000 {
		xs = append(xs, (float64(i)/600_000*2-1)*30)
	}
	for _, e := range []float64{ErfcSplit1, ErfcSplit2, ErfcSplit3, 0.25, ErfcBig, 6, 26.5, 27.2, 27.3} {
		for _, s := range []float64{1, -1} {
			b := math.Float64bits(s * e)
			for d := uint64(0); d <= 8; d++ {
				xs = append(xs, math.Float64frombits(b+d), math.Float64frombits(b-d))
			}
		}
	}
	worst, nbad := int64(0), 0
	for _, x := range xs {
		got, want := Erfc(x), math.Erfc(x)
		d := ULPs(got, want)
		ok := d <= ErfcULP
		if want < 0x1p-1022 && want == want {
			ok = math.Abs(got-want) <= 2*0x1p-1074
		}
		if !ok {
			if nbad++; nbad <= 10 {
				t.Errorf("Erfc(%v (%#x)) = %v (%#x), want %v: %d ulps off", x, math.Float64bits(x), got, math.Float64bits(got), want, d)
			}
			continue
		}
		if want >= 0x1p-1022 {
			worst = max(worst, d)
		}
	}
	t.Logf("erfc: %d inputs, largest error %d ulp, %d bad", len(xs), worst, nbad)
}
