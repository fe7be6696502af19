package kerneltest

import (
	"math"
	"math/big"
	"math/rand"
)

// The math/big references for the f64 log and power of subnormals,
// where package math's (amd64) is not accurate and plan.LogF64 and
// plan.PowF64 are: every f64 log and pow of the interpreter goes through
// them, and the native kernels' exp and log are checked against these.

// bigLn2 is ln 2 to 300 bits.
var bigLn2, _ = new(big.Float).SetPrec(300).SetString("0.6931471805599453094172321214581765680755001343602552541206800094933936219696947156058633269964186875420014810205706857336855202357581305570326707516350759619307275708283714351903070386238916734711233501153644979552391204751726815749320651555247341395258829504530070953263666426541042391578149520437404303855008019441706416715186447128399681717845469570262716310645461502572074024816377733896385506952606683411372738737229289564935470257626520988596932019650585547647033067936544325476327449512504060694381471046899465062201677204245245296126879465461931651746813926725041038025462596568691441928716082938031727143677826548775664850856740776484514644399404614226031930967354025744460703080960850474866385231381816767514386674766478908814371419854942315199735488037516586127535291661000710535582498794147295092931138971559982056543928717")

// SubnormalXs are subnormals from 2^-1074 up to the least normal: every
// power of two among them, and random significands at every exponent.
func SubnormalXs(r *rand.Rand) []float64 {
	var xs []float64
	for e := -1074; e < -1022; e++ {
		xs = append(xs, math.Ldexp(1, e), math.Ldexp(1+r.Float64(), e), math.Ldexp(1+r.Float64(), e))
	}
	return append(xs, math.Nextafter(0x1p-1022, 0))
}

// BigLog is log(x) for x > 0 finite, rounded to float64 from e*ln 2 +
// log(m) (x = m*2^e, m in [1, 2) and its log, math.Log's of a normal
// number, within 2^-53, far below an ulp of a result beyond 700).
func BigLog(x float64) float64 {
	f, e := math.Frexp(x)
	t := new(big.Float).SetPrec(300).Mul(bigLn2, new(big.Float).SetInt64(int64(e-1)))
	t.Add(t, new(big.Float).SetPrec(300).SetFloat64(math.Log(2*f)))
	v, _ := t.Float64()
	return v
}

// PowWithin reports whether x^(a/b), x > 0, lies within tol float64
// steps of got > 0, exactly: lo^b <= x^a <= hi^b in math/big, lo and hi
// got tol steps down and up; got 0 only where x^(a/b) <= 2^-1075, which
// rounds to 0.
func PowWithin(got, x float64, a, b, tol int) bool {
	if got < 0 || math.IsInf(got, 0) || got != got {
		return false
	}
	lo := math.Float64frombits(math.Float64bits(got) - uint64(min(tol, int(math.Float64bits(got)))))
	hi := math.Float64frombits(math.Float64bits(got) + uint64(tol))
	pw := func(v float64, n int) *big.Float {
		prec := uint(64*n + 64)
		r := new(big.Float).SetPrec(prec).SetFloat64(1)
		for range n {
			r.Mul(r, new(big.Float).SetPrec(prec).SetFloat64(v))
		}
		return r
	}
	xa := pw(x, a)
	if got == 0 {
		half := pw(1, b).SetMantExp(pw(1, b), -1075*b) // (2^-1075)^b
		return xa.Cmp(half) <= 0
	}
	return pw(lo, b).Cmp(xa) <= 0 && xa.Cmp(pw(hi, b)) <= 0
}

// PowTol is the steps plan.PowF64(x, y) may be from x^y: about |y*log x|
// (math.Pow's own error for a base of that log, twice for the two
// factors of a subnormal base) and a few.
func PowTol(x, y float64) int { return 4 + int(2*math.Abs(y*BigLog(math.Abs(x)))) }
