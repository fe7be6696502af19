package reduce

import (
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
)

// argSrcTypes are the src types checkArgType draws from: every ArgSrc.
var argSrcTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8,
	dtypes.S16, dtypes.U16, dtypes.S32, dtypes.U32, dtypes.S64, dtypes.U64, dtypes.F64}

// checkArgType is checkArg for src type dt, each type with one of the
// two index types.
func checkArgType(t *testing.T, r *rand.Rand, c argCase, dt dtypes.DataType, nanRate int) {
	t.Helper()
	switch dt {
	case dtypes.F32:
		checkArg[int64, float32](t, r, c, dt, nanRate)
	case dtypes.BF16:
		checkArg[int32, uint16](t, r, c, dt, nanRate)
	case dtypes.F16:
		checkArg[int64, uint16](t, r, c, dt, nanRate)
	case dtypes.S8:
		checkArg[int32, int8](t, r, c, dt, 0)
	case dtypes.U8:
		checkArg[int32, uint8](t, r, c, dt, 0)
	case dtypes.S16:
		checkArg[int64, int16](t, r, c, dt, 0)
	case dtypes.U16:
		checkArg[int32, uint16](t, r, c, dt, 0)
	case dtypes.S32:
		checkArg[int32, int32](t, r, c, dt, 0)
	case dtypes.U32:
		checkArg[int64, uint32](t, r, c, dt, 0)
	case dtypes.S64:
		checkArg[int64, int64](t, r, c, dt, 0)
	case dtypes.U64:
		checkArg[int32, uint64](t, r, c, dt, 0)
	case dtypes.F64:
		checkArg[int64, float64](t, r, c, dt, nanRate)
	default:
		t.Fatalf("no ArgSrc of type %v", dt)
	}
}

// FuzzArgTypes is TestArgRandom on cases drawn from the fuzzer's seeds:
// ArgMax and ArgMin of one src type of every ArgSrc (the wide integers
// and f64 too), both tie rules, random shapes, axes and strides, ties,
// NaNs, infinities and signed zeros, against argRef, under the ISA here,
// AVX2 below AVX-512, and the interpreter.
func FuzzArgTypes(f *testing.F) {
	for seed := range uint64(len(argSrcTypes)) {
		f.Add(seed, uint8(seed))
	}
	isas := []jit.ISA{jit.EffectiveISA()}
	if isas[0] == jit.AVX512 {
		isas = append(isas, jit.AVX2)
	}
	if isas[0] != jit.None {
		isas = append(isas, jit.None)
	}
	f.Fuzz(func(t *testing.T, seed uint64, typ uint8) {
		r := rand.New(rand.NewPCG(seed, 52))
		c := randomArgCase(r)
		dt := argSrcTypes[int(typ)%len(argSrcTypes)]
		nanRate := []int{0, 3, 40, 400}[r.IntN(4)]
		for _, isa := range isas {
			prev := jit.SetMaxISA(isa)
			checkArgType(t, r, c, dt, nanRate)
			jit.SetMaxISA(prev)
		}
	})
}
