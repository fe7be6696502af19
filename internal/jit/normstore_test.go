package jit

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestNormKernelPairSubnormalStore: a softmax whose rows are held two at
// a time stores a bf16 dst with the exact rounding (dtypes.F32ToBF16 of
// the f32 result, which is the same kernel's with an f32 dst) where a
// single result is subnormal: in the last vector of the second row of a
// pair, in the first row, in every row, or in none. Subnormal results
// must not be flushed to zero (AVX-512's VCVTNEPS2BF16 flushes them),
// and the bits are the one-row kernel's. Only AVX-512's exp gives these
// subnormal results (and only its bf16 store has a fast path that gets
// them wrong); elsewhere the case checks the bits alone. Rows of 16 (every ISA pairs
// them), 100 (a tail) and 128 (S1's; AVX-512 pairs them).
func TestNormKernelPairSubnormalStore(t *testing.T) {
	t.Logf("ISAs: %v", argISAs())
	for _, isa := range argISAs() {
		prev := SetMaxISA(isa)
		for _, n := range []int64{16, 100, 128} {
			// Which rows hold the subnormal result, at the row's end.
			for _, sub := range [][]bool{{false, true, false, false}, {true, false, false, false}, {true, true, true, true}, {false, false, false, false}} {
				checkSubnormalStore(t, isa, n, sub)
			}
		}
		SetMaxISA(prev)
	}
}

func checkSubnormalStore(t *testing.T, isa ISA, n int64, sub []bool) {
	t.Helper()
	rows := int64(len(sub))
	name := fmt.Sprintf("%v: rows of %d, subnormal results in rows %v", isa, n, sub)
	c := func(dst dtypes.DataType) interleaveCase {
		return interleaveCase{kind: kernelshape.NormSoftmax, n: n, rows: []int64{rows}, src: dtypes.F32, dst: dst}
	}
	// Each row: 0 at the start (its max), -200 (e^-200 is +0) but for a
	// few normal results, and with sub its last element -88, whose
	// result e^-88/sum (sum in [1, 2.5]) is an f32 subnormal that bf16
	// holds (above 2^-134).
	src := make([]byte, rows*n*4)
	for i := range rows {
		for j := range n {
			v := float32(-200)
			switch {
			case j == 0:
				v = 0
			case j%23 == 5:
				v = -float32(j%7) - 1
			case j == n-1 && sub[i]:
				v = -88
			}
			dtypes.StoreF32(dtypes.F32, src, i*n+j, v)
		}
	}
	run := func(dst dtypes.DataType, one bool) []byte {
		pl, _ := c(dst).plan(t)
		k, why, err := CompileNorm(&kernelshape.Norm{Kind: kernelshape.NormSoftmax, Plan: pl, OneRow: one})
		if err != nil || k == nil {
			t.Fatalf("%s: %v %s", name, err, why)
		}
		f := kerneltest.NewFence(t, true)
		defer f.Free()
		out := f.Place(make([]byte, rows*n*int64(dst.Size())))
		if err := k.Run(f.Place(src), out, nil, 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return append([]byte(nil), out...)
	}
	f32, bf, bfOne := run(dtypes.F32, false), run(dtypes.BF16, false), run(dtypes.BF16, true)
	if !bytes.Equal(bf, bfOne) {
		t.Errorf("%s: the paired kernel's bf16 differs from the one-row kernel's", name)
	}
	for i := range rows {
		for j := range n {
			e := i*n + j
			x := dtypes.LoadF32(dtypes.F32, f32, e)
			want := dtypes.F32ToBF16(x)
			got := uint16(bf[2*e]) | uint16(bf[2*e+1])<<8
			if got != want {
				t.Fatalf("%s: row %d element %d is bf16 %#04x, want %#04x (f32 %v)", name, i, j, got, want, x)
			}
			isSub := x != 0 && math.Abs(float64(x)) < 0x1p-126
			// AVX2's and NEON's exp give +0 for e^-88 (below the exp for
			// sums' range, ExpShifted); their stores have no fast path
			// to check either.
			if isSub != (j == n-1 && sub[i] && isa == AVX512) && !(isa != AVX512 && x == 0) {
				t.Fatalf("%s: row %d element %d is %v: the case does not test what it says", name, i, j, x)
			}
			if isSub && want == 0 {
				t.Fatalf("%s: row %d element %d is %v, which bf16 rounds to 0", name, i, j, x)
			}
		}
	}
}
