package amd64

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestWordsMinMax runs 16-bit max and min rows and columns, of the values
// and of their magnitudes, which
// rowWords and colBlock take as words, over outputs built to part a wrong
// choice from the right one: all values of one sign, only zeros of both
// signs, infinities, and NaNs of either sign at any place, among ordinary
// values. Rows of whole registers, with tails, long and short; column
// blocks of whole pairs, odd vectors and tails; every ISA, NaN-free and
// paced code; bf16 and f16 in, f32 and the src type out; bit for bit
// with the reference.
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
	// fill gives each output (a row, or with columns a column) a class of
	// values, and a third of them a NaN somewhere.
	fill := func(sdt dtypes.DataType, rows, cols int64, columns bool) []byte {
		src := make([]byte, rows*cols*int64(sdt.Size()))
		outs, n := rows, cols // outputs, and elements of each
		at := func(o, e int64) int64 { return o*cols + e }
		if columns {
			outs, n = cols, rows
			at = func(o, e int64) int64 { return e*cols + o }
		}
		for o := range outs {
			class := r.Intn(4)
			for e := range n {
				dtypes.StoreF32(sdt, src, at(o, e), float32(value(class)))
			}
			if r.Intn(3) == 0 {
				// A NaN of either sign, anywhere: quiet, or the word
				// just past an infinity's.
				nans := []uint16{0x7fc0, 0x7f81}
				if sdt == dtypes.F16 {
					nans = []uint16{0x7e00, 0x7c01}
				}
				w := nans[r.Intn(2)] | uint16(r.Intn(2))<<15
				binary.LittleEndian.PutUint16(src[2*at(o, r.Int63n(n)):], w)
			}
		}
		return src
	}
	// Six draws of data per case, a NaN in a third of the outputs of
	// each; in -short runs (the AVX-512 stage, which runs under Bochs on
	// a CPU without AVX-512) two, and each shape with or without Zen's
	// options, in turn (kerneltest.ShortPick): every shape and both options still
	// run, each option on half of the shapes.
	draws := 6
	if testing.Short() {
		draws = 2
	}
	var opts []isaCase
	for _, isa := range isas(t) {
		zen := isa
		zen.name += "+zen"
		zen.o.Zen = true
		opts = append(opts, isa, zen)
	}
	for oi, isa := range opts {
		for _, red := range wordReductions() {
			for _, sdt := range []dtypes.DataType{dtypes.BF16, dtypes.F16} {
				for _, ddt := range []dtypes.DataType{dtypes.F32, kerneltest.OutputDT(sdt)} {
					for ci, c := range []struct {
						shape   [2]int64
						columns bool
					}{
						{[2]int64{40, 16}, false}, {[2]int64{24, 32}, false}, {[2]int64{9, 64}, false}, {[2]int64{9, 100}, false},
						{[2]int64{6, 257}, false}, {[2]int64{4, 1000}, false}, {[2]int64{2, 4096}, false},
						{[2]int64{16, 32}, true}, {[2]int64{33, 64}, true}, {[2]int64{7, 130}, true}, {[2]int64{64, 256}, true},
						{[2]int64{5, 600}, true}, {[2]int64{3, 1030}, true},
					} {
						if !kerneltest.ShortPick(oi, ci) {
							continue // the other option runs it
						}
						shape := c.shape
						p := twoD(red, sdt, ddt, shape[0], shape[1], c.columns)
						pl, err := plan.Canonicalize(p)
						if err != nil {
							t.Fatal(err)
						}
						k := compileHinted(t, pl, kernelconf.Hints{FromMemory: isa.o.Zen}, isa.o)
						for range draws {
							src := fill(sdt, shape[0], shape[1], c.columns)
							db, _ := p.DstBytes()
							dst0 := make([]byte, db)
							want, written := kerneltest.Reference(p, src, dst0, nil)
							got := append([]byte(nil), dst0...)
							k.RunBlocks(pl, src, got, nil, 0)
							if d := kerneltest.CompareExact(ddt, got, want, written, false); d != "" {
								t.Fatalf("%s %v %v -> %v %v columns %v: %s", isa.name, red, sdt, ddt, shape, c.columns, d)
							}
						}
						k.Release()
					}
				}
			}
		}
	}
}

// wordReductions are the reductions taken as words: max and min, of the
// values and of their magnitudes.
func wordReductions() []plan.Reduction {
	var out []plan.Reduction
	for _, alg := range []plan.Alg{plan.AlgMax, plan.AlgMin} {
		for _, t := range []plan.Transform{plan.TransformNone, plan.TransformAbs} {
			red := alg.Reduction(0, 0)
			red.Transform = t
			out = append(out, red)
		}
	}
	return out
}
