package jit

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestArgShortRowsTakeAVX2: on AVX-512, an index reduction whose rows
// (or contiguous lanes) are too short for AVX-512's vectors but not for
// AVX2's runs AVX2's code, which takes vectors where AVX-512's took one
// element at a time (argNarrowISA); others keep AVX-512's. Each runs
// against the interpreter.
func TestArgShortRowsTakeAVX2(t *testing.T) {
	if !supported(AVX512) || rank(AVX512) > rank(EffectiveISA()) {
		t.Skip("no AVX-512 here: the choice is AVX-512's (CI's Bochs run takes it on AVX2 machines)")
	}
	r := rand.New(rand.NewPCG(14, 15))
	for _, c := range []struct {
		dt   dtypes.DataType
		dims []int64
		axis int
		want ISA
	}{
		{dtypes.F32, []int64{300, 8}, 1, AVX2},
		{dtypes.F32, []int64{300, 10}, 1, AVX2},
		{dtypes.F32, []int64{300, 15}, 1, AVX2},
		{dtypes.F32, []int64{300, 16}, 1, AVX512},
		{dtypes.F32, []int64{300, 100}, 1, AVX512},
		{dtypes.F32, []int64{300, 7}, 1, AVX512}, // one element at a time on both
		{dtypes.F32, []int64{300, 10}, 0, AVX2},  // 10 lanes
		{dtypes.F32, []int64{300, 40}, 0, AVX512},
		{dtypes.F64, []int64{300, 5}, 1, AVX2},
		{dtypes.F64, []int64{300, 8}, 1, AVX512},
		{dtypes.S64, []int64{300, 6}, 1, AVX2},
		{dtypes.S32, []int64{300, 12}, 1, AVX2},
	} {
		ds := denseStrides(c.dims)
		ds[c.axis] = 0
		pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: c.dt, IdxDT: dtypes.S64, Dims: c.dims, Axis: c.axis,
			SrcStrides: denseStrides(c.dims), DstStrides: ds})
		if err != nil {
			t.Fatal(err)
		}
		k, err := buildArg(pl, AVX512)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.Impl(); got != "jit:"+c.want.String() {
			t.Errorf("%v %v over axis %d: %s, want jit:%v", c.dt, c.dims, c.axis, got, c.want)
		}
		k.release()
		checkArgSrc(t, pl, argSrc(r, c.dt, pl.SrcSpan()), []ISA{AVX512}, false)
	}
}

// TestArgCutImplNamesEachISA: an index kernel cut into parts names the
// instruction set of each part it runs, where they differ: one row of
// whole pieces on AVX-512 and a last piece of 10 elements, which takes
// AVX2's code (argNarrowISA), is "jit:avx512+jit:avx2". A row whose
// parts all take AVX-512 names it once. Only the kernels are built: no
// call is made, so any amd64 host checks it.
func TestArgCutImplNamesEachISA(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the x86 emitter builds for amd64 only")
	}
	row := func(r int64) *plan.ArgPlan {
		dims := []int64{r}
		pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: dims, Axis: 0,
			SrcStrides: denseStrides(dims), DstStrides: []int64{0}})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	piece := argPieceR(row(1 << 40))
	for _, c := range []struct {
		r    int64
		want string
	}{
		{2*piece + 10, "jit:avx512+jit:avx2"},
		{2*piece + 100, "jit:avx512"},
		{2 * piece, "jit:avx512"},
	} {
		k, err := buildArg(splitInner(row(c.r)), AVX512)
		if err != nil {
			t.Fatal(err)
		}
		if k.piece == nil {
			t.Fatalf("a row of %d elements is not cut into pieces of %d", c.r, piece)
		}
		if got := k.Impl(); got != c.want {
			t.Errorf("a row of %d elements in pieces of %d: %s, want %s", c.r, piece, got, c.want)
		}
		k.release()
	}
}
