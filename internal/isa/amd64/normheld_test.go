package amd64

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
)

// accZero matches an xor of registers 0 to 3, which zeroes a sum
// accumulator where its three operands are one register (accZeroes).
var accZero = regexp.MustCompile(`^v(?:pxor[dq]?|xorps)\s+(%[xyz]mm[0-3]),(%[xyz]mm[0-3]),(%[xyz]mm[0-3])$`)

// accZeroes reports whether instruction in zeroes a sum accumulator.
func accZeroes(in string) bool {
	m := accZero.FindStringSubmatch(in)
	return m != nil && m[1] == m[2] && m[2] == m[3]
}

// TestNormHeldRowsStartAtFirstVectors checks that softmax and log-softmax
// rows held in registers, and the groups of f32 log-softmax rows,
// start each accumulator of their max and of their sum of exps at its
// first whole vector, as kernelshape's normFold does (the same bits:
// max(-Inf, x) is x, and 0 + e is e for an exp e), so that no -Inf or 0
// is built for them;
// a row of fewer whole vectors than accumulators (AVX2 holds two at
// most) still starts the others at the identity.
func TestNormHeldRowsStartAtFirstVectors(t *testing.T) {
	for _, c := range []struct {
		name  string
		kind  kernelshape.NormKind
		dt    dtypes.DataType
		n     int64
		o     Options
		inits bool
	}{
		{"f32 softmax of 128, avx512", kernelshape.NormSoftmax, dtypes.F32, 128, Options{AVX512: true}, false},
		{"bf16 log-softmax of 128, avx512", kernelshape.NormLogSoftmax, dtypes.BF16, 128, Options{AVX512: true}, false},
		{"f32 log-softmax of 128, avx512 (groups of four rows)", kernelshape.NormLogSoftmax, dtypes.F32, 128, Options{AVX512: true}, false},
		{"f32 softmax of 40, avx512 (three vectors)", kernelshape.NormSoftmax, dtypes.F32, 40, Options{AVX512: true}, true},
		{"f32 softmax of 16, avx2 (two vectors)", kernelshape.NormSoftmax, dtypes.F32, 16, Options{}, true},
	} {
		code, err := EmitNorm(&kernelshape.Norm{Kind: c.kind, Plan: normRowsPlan(t, c.dt, c.dt, 8, c.n)}, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var negInf, zeros int
		for _, in := range disassemble(t, code.Text) {
			if strings.HasPrefix(in, "mov    $0xff800000,") {
				negInf++
			}
			if accZeroes(in) {
				zeros++
			}
		}
		if got := negInf > 0 && zeros > 0; got != c.inits || !c.inits && (negInf > 0 || zeros > 0) {
			t.Errorf("%s: %d builds of -Inf, %d accumulators zeroed; want identities built %v", c.name, negInf, zeros, c.inits)
		}
	}
}
