package amd64

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/plan"
)

// TestWordsMinMax runs 16-bit max and min rows, which rowWords takes as
// words, over rows built to part a wrong choice from the right one: all
// values of one sign, only zeros of both signs, infinities, and NaNs of
// either sign at any place, among ordinary values. Rows of whole
// registers, with tails, long and short; every ISA, NaN-free and paced
// code; bf16 and f16 in, f32 and the src type out; bit for bit with the
// reference.
func TestWordsMinMax(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	negZero := math.Copysign(0, -1)
	inf := math.Inf(1)
	// value draws a value of a row of the given class.
	value := func(class int) float64 {
		x := math.Ldexp(1+r.Float64(), r.Intn(20)-10)
		switch class {
		case 0: // non-negative, with +0 and +Inf
			switch r.Intn(8) {
			case 0:
				return 0
			case 1:
				return inf
			}
			return x
		case 1: // negative, with -0 and -Inf
			switch r.Intn(8) {
			case 0:
				return negZero
			case 1:
				return -inf
			}
			return -x
		case 2: // zeros of both signs
			if r.Intn(2) == 0 {
				return 0
			}
			return negZero
		}
		if r.Intn(2) == 0 {
			return -x
		}
		return x
	}
	fill := func(sdt dtypes.DataType, rows, cols int64) []byte {
		src := make([]byte, rows*cols*int64(sdt.Size()))
		for i := range rows {
			class := r.Intn(4)
			for j := range cols {
				dtypes.StoreF32(sdt, src, i*cols+j, float32(value(class)))
			}
			if r.Intn(3) == 0 {
				// A NaN of either sign, anywhere in the row: quiet, or
				// the word just past an infinity's.
				nans := []uint16{0x7fc0, 0x7f81}
				if sdt == dtypes.F16 {
					nans = []uint16{0x7e00, 0x7c01}
				}
				w := nans[r.Intn(2)] | uint16(r.Intn(2))<<15
				binary.LittleEndian.PutUint16(src[2*(i*cols+r.Int63n(cols)):], w)
			}
		}
		return src
	}
	var opts []isaCase
	for _, isa := range isas(t) {
		zen := isa
		zen.name += "+zen"
		zen.o.Zen = true
		opts = append(opts, isa, zen)
	}
	for _, isa := range opts {
		for _, alg := range []plan.Alg{plan.AlgMax, plan.AlgMin} {
			for _, sdt := range []dtypes.DataType{dtypes.BF16, dtypes.F16} {
				for _, ddt := range []dtypes.DataType{dtypes.F32, sdt} {
					for _, shape := range [][2]int64{{40, 16}, {24, 32}, {9, 64}, {9, 100}, {6, 257}, {4, 1000}, {2, 4096}} {
						p := twoD(alg.Reduction(0, 0), sdt, ddt, shape[0], shape[1], false)
						pl, err := plan.Canonicalize(p)
						if err != nil {
							t.Fatal(err)
						}
						pl.FromMemory = isa.o.Zen
						k := compile(t, pl, isa.o)
						for range 6 {
							src := fill(sdt, shape[0], shape[1])
							db, _ := p.DstBytes()
							dst0 := make([]byte, db)
							want, written := reference(p, src, dst0, nil)
							got := append([]byte(nil), dst0...)
							k.RunBlocks(pl, src, got, nil, 0)
							if d := compareExact(ddt, got, want, written, false); d != "" {
								t.Fatalf("%s %v %v -> %v %v: %s", isa.name, alg, sdt, ddt, shape, d)
							}
						}
						k.Release()
					}
				}
			}
		}
	}
}
