package jit

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestSumsOfEqualTerms checks the f32 accumulation error of the JIT on
// the data that shows it most: a constant tensor, whose rounding errors
// all lean the same way instead of cancelling. One chain of n adds is
// then off by about n/8 units of 2^-24; a kernel cuts its chains into
// runs of about sqrt(n) adds (kernelshape.Runs), so every result must
// lie inside the interval docs/RELIABILITY.md states for every sum:
// (4*ceil(log2(N+1)) + 8) * 2^-24 relative, plus 2 f32 ulps for the
// division. Before the cut, 2^20 copies of one value came out up to 446
// (AVX-512), 693 (AVX2) and 1392 (NEON) units off, where 92 are allowed.
// The shapes take each kernel shape that sums long chains: one long row,
// flat columns, column blocks, rows in groups with an outer reduced
// loop, strided elements, bf16 pair loads, rows summed row by row. The
// interpreter, which accumulates in float64, must be exact.
func TestSumsOfEqualTerms(t *testing.T) {
	caps := testISAs()
	shapes := []struct {
		name      string
		dt        dtypes.DataType
		dims, src []int64 // dims and src strides
		red       []bool
	}{
		{"full reduce of 2^20", dtypes.F32, []int64{1 << 20}, []int64{1}, []bool{true}},
		{"bf16 full reduce of 2^20", dtypes.BF16, []int64{1 << 20}, []int64{1}, []bool{true}},
		{"flat columns 32768x8", dtypes.F32, []int64{32768, 8}, []int64{8, 1}, []bool{true, false}},
		{"column blocks 4096x40", dtypes.F32, []int64{4096, 40}, []int64{40, 1}, []bool{true, false}},
		{"bf16 column blocks 4096x64", dtypes.BF16, []int64{4096, 64}, []int64{64, 1}, []bool{true, false}},
		{"broadcast columns 64x7x8", dtypes.F32, []int64{64, 7, 8}, []int64{0, 8, 1}, []bool{true, true, false}},
		{"rows 64x4096", dtypes.F32, []int64{64, 4096}, []int64{4096, 1}, []bool{false, true}},
		{"grouped rows 1024x16x24 over 0, 2", dtypes.F32, []int64{1024, 16, 24}, []int64{384, 24, 1}, []bool{true, false, true}},
		{"strided elements 65536 by 2", dtypes.F32, []int64{65536}, []int64{2}, []bool{true}},
		{"row by row 4096x1000", dtypes.F32, []int64{4096, 1000}, []int64{1000, 1}, []bool{true, false}},
		{"bf16 row by row 4096x1000", dtypes.BF16, []int64{4096, 1000}, []int64{1000, 1}, []bool{true, false}},
	}
	// The row-by-row shapes are far smaller than the src size that takes
	// that schedule; no other shape here has rows it applies to.
	withSizeBound(t, &rowByRowMinBytes, 0)
	for _, s := range shapes {
		ds := make([]int64, len(s.dims))
		nOut, span, N := int64(1), int64(1), int64(1)
		for i := len(s.dims) - 1; i >= 0; i-- {
			span += (s.dims[i] - 1) * s.src[i]
			if !s.red[i] {
				ds[i] = nOut
				nOut *= s.dims[i]
			} else {
				N *= s.dims[i]
			}
		}
		bound := (4*math.Ceil(math.Log2(float64(N+1))) + 8 + 4) * 0x1p-24
		// Each shape runs bare, and with plan.MaxBinary Adds of +0
		// (which leave the mean as it is): kernels whose operands'
		// pointers leave no general register for the running totals'
		// address must cut their sums just the same.
		for _, nbin := range []int{0, plan.MaxBinary} {
			p := &plan.Problem{SrcDT: s.dt, DstDT: dtypes.F32, Dims: s.dims, SrcStrides: s.src, Reduce: s.red, DstStrides: ds}
			var bins [][]byte
			for range nbin {
				p.PostOps = append(p.PostOps, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: make([]int64, len(s.dims))})
				bins = append(bins, make([]byte, 4))
			}
			checkEqualTerms(t, fmt.Sprintf("%s, %d operands", s.name, nbin), p, bins, span, nOut, bound, caps)
		}
	}
}

// checkEqualTerms runs p (a mean into f32) with operands bins over src
// tensors of span elements all equal, on each ISA in caps, and checks
// that each of the nOut outputs lies within bound (relative) of the
// value; exactly on it on the interpreter.
func checkEqualTerms(t *testing.T, name string, p *plan.Problem, bins [][]byte, span, nOut int64, bound float64, caps []ISA) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float32{1.1, -10000.47, 0.3} {
		src := make([]byte, span*int64(p.SrcDT.Size()))
		if p.SrcDT == dtypes.BF16 {
			b := dtypes.F32ToBF16(v)
			v = dtypes.BF16ToF32(b)
			for i := int64(0); i < span; i++ {
				binary.LittleEndian.PutUint16(src[2*i:], b)
			}
		} else {
			for i := int64(0); i < span; i++ {
				binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
			}
		}
		for _, isa := range caps {
			prev := SetMaxISA(isa)
			k, err := Compile(pl)
			SetMaxISA(prev)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, nOut*4)
			if err := k.Run(src, dst, bins); err != nil {
				t.Fatal(err)
			}
			b := bound
			if isa == None {
				b = 0
			}
			for o := int64(0); o < nOut; o++ {
				got := math.Float32frombits(binary.LittleEndian.Uint32(dst[4*o:]))
				rel := math.Abs(float64(got)-float64(v)) / math.Abs(float64(v))
				if !(rel <= b) {
					t.Errorf("%s of %g, %s (%s): output %d = %g, relative error %.0f * 2^-24, bound %.0f * 2^-24",
						name, v, isa, k.Impl(), o, got, rel/0x1p-24, b/0x1p-24)
					break
				}
			}
		}
	}
}
