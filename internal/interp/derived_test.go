package interp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestDerivedPlans runs plans edited the way the runtime edits them: the
// outermost loop cut into blocks (buffers starting at each block's first
// element) must give the bytes of one full run, and Div=1 without
// post-ops into f32 must give the plain sums.
func TestDerivedPlans(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	blocked, summed := 0, 0
	for c := 0; blocked < 200 || summed < 200; c++ {
		p := randProblem(r, 3000, true)
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		src, full, bins := runCase(t, r, p, func() float32 { return dyadic(r) }, false)
		if len(pl.Outer) > 0 && pl.Outer[0].Size > 1 {
			blocked++
			checkBlocks(t, r, pl, src, full, bins)
		}
		if pl.Outputs > 0 && pl.N > 0 {
			summed++
			checkSums(t, p, pl, src)
		}
	}
}

// checkBlocks runs pl's outermost loop in random blocks and compares with
// the full run's dst.
func checkBlocks(t *testing.T, r *rand.Rand, pl *plan.Plan, src, full []byte, bins [][]byte) {
	t.Helper()
	dst := make([]byte, len(full))
	for i := range dst {
		dst[i] = sentinel
	}
	o := pl.Outer[0]
	ss, ds := int64(pl.SrcDT.Size()), int64(pl.DstDT.Size())
	for b0 := int64(0); b0 < o.Size; {
		n := 1 + r.Int64N(o.Size-b0)
		blk := pl.Clone()
		blk.Outer[0].Size = n
		bb := make([][]byte, len(bins))
		k := 0
		for _, op := range pl.PostOps {
			if op.Kind.IsBinary() {
				bb[k] = bins[k][b0*o.BinStrides[k]*int64(op.BinDT.Size()):]
				k++
			}
		}
		if err := Run(blk, src[b0*o.SrcStride*ss:], dst[b0*o.DstStride*ds:], bb); err != nil {
			t.Fatalf("block [%d,%d) of %v: %v", b0, b0+n, pl, err)
		}
		b0 += n
	}
	if string(dst) != string(full) {
		t.Fatalf("blocked run differs from the full run for %v", pl)
	}
}

// checkSums runs pl with Div 1, no post-ops and an f32 dst, which must
// store the f32 rounding of each float64 sum.
func checkSums(t *testing.T, p *plan.Problem, pl *plan.Plan, src []byte) {
	t.Helper()
	sp := *p
	sp.PostOps, sp.DstDT = nil, dtypes.F32
	sums := pl.Clone()
	sums.PostOps, sums.DstDT, sums.Div = nil, dtypes.F32, 1
	stripBins(sums)
	need, err := sums.DstBytes()
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, need)
	if err := Run(sums, src, dst, nil); err != nil {
		t.Fatalf("sums of %v: %v", sums, err)
	}
	for _, o := range reference(&sp, src, nil) {
		// The reference holds the mean rounded to f32; redo it as a sum.
		want := to32(refSum(&sp, src, o))
		if got := decode(dtypes.F32, dst, o.off); !sameValue(got, want) {
			t.Fatalf("sum at dst[%d] = %v, want %v\n%s", o.off, got, want, describe(&sp))
		}
	}
}

// refSum recomputes the float64 sum behind output o (located by its dst
// offset) by walking the problem.
func refSum(p *plan.Problem, src []byte, o refOut) float64 {
	rank := len(p.Dims)
	kept := make([]int64, rank)
	for {
		var doff int64
		for i := range rank {
			if !p.Reduce[i] {
				doff += kept[i] * p.DstStrides[i]
			}
		}
		if doff == o.off {
			break
		}
		if !nextIndex(kept, p.Dims, p.Reduce, false) {
			return math.NaN()
		}
	}
	sum := 0.0 // +0, as every backend starts its sums
	red := make([]int64, rank)
	for ok := true; ok; ok = nextIndex(red, p.Dims, p.Reduce, true) {
		var off int64
		for i := range rank {
			idx := kept[i]
			if p.Reduce[i] {
				idx = red[i]
			}
			off += idx * p.SrcStrides[i]
		}
		sum += decode(p.SrcDT, src, off)
	}
	return sum
}

// stripBins drops every binary stride of pl's loops.
func stripBins(pl *plan.Plan) {
	for i := range pl.Outer {
		pl.Outer[i].BinStrides = nil
	}
	for i := range pl.Reduced {
		pl.Reduced[i].BinStrides = nil
	}
	pl.Inner.BinStrides = nil
}

func TestDivZero(t *testing.T) {
	p := problem2D(dtypes.F32)
	p.PostOps = nil
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	pl.Div = 0
	src := make([]byte, 96)
	for i := range int64(6) {
		dtypes.StoreF32(dtypes.F32, src, 6+i, 1)   // row 1 sums to 6
		dtypes.StoreF32(dtypes.F32, src, 12+i, -2) // row 2 sums to -12
	}
	dst := make([]byte, 16)
	if err := Run(pl, src, dst, nil); err != nil {
		t.Fatal(err)
	}
	want := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.NaN()}
	for i, w := range want {
		if got := decode(dtypes.F32, dst, int64(i)); !sameValue(got, w) {
			t.Errorf("row %d: sum/0 = %v, want %v", i, got, w)
		}
	}
}
