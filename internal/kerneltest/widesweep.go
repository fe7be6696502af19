package kerneltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vf64"
)

// CheckWideExpLog runs the f64 Exp and Log post-ops on n of vf64.Inputs
// (the specials and random bit patterns; at most 20,000 under -short)
// under each target and holds each result to the float64 oracle within
// vf64.MaxULP (CheckWideSweep).
func CheckWideExpLog(t testing.TB, targets []Target, n int) {
	t.Helper()
	if testing.Short() {
		n = min(n, 20_000)
	}
	xs := vf64.Inputs(rand.New(rand.NewSource(64)), n)
	CheckWideSweep(t, targets, plan.PostOp{Kind: ops.Exp}, xs, vf64.ExpNear)
	CheckWideSweep(t, targets, plan.PostOp{Kind: ops.Log}, xs, vf64.LogNear)
}

// CheckWideSweep runs the f64 post-op op on xs under each target and
// holds each result to near (vf64.ExpNear, vf64.LogNear, vf64.PostOpNear:
// within a bound of the float64 oracle or plan.EltwiseF64, the specials
// exact, any NaN for a NaN). The
// problem is the max of each x with itself, which is x (a NaN stays a
// NaN), into an f64 dst: every element passes through the native
// kernel's f64 epilogue, in full vectors, a tail and the single-output
// path. It returns the largest error seen.
func CheckWideSweep(t testing.TB, targets []Target, op plan.PostOp, xs []float64, near func(x, got float64) (int64, bool)) int64 {
	t.Helper()
	n := int64(len(xs))
	p := &plan.Problem{Reduction: plan.AlgMax.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
		Dims: []int64{n, 2}, SrcStrides: []int64{2, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0},
		PostOps: []plan.PostOp{op}}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 16*n)
	for i, x := range xs {
		binary.LittleEndian.PutUint64(src[16*i:], math.Float64bits(x))
		binary.LittleEndian.PutUint64(src[16*i+8:], math.Float64bits(x))
	}
	var worst int64
	for _, tg := range targets {
		k := tg.Compile(t, pl)
		got := make([]byte, 8*n)
		k.RunBlocks(pl, src, got, nil, 0)
		k.Release()
		var bad []string
		nbad := 0
		for i, x := range xs {
			y := math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:]))
			d, ok := near(x, y)
			if !ok {
				nbad++
				if len(bad) < 5 {
					bad = append(bad, fmt.Sprintf("%v(%v (%#x)) = %v (%#x): %d ulps off", op, x, math.Float64bits(x), y, math.Float64bits(y), d))
				}
				continue
			}
			worst = max(worst, d)
		}
		for _, b := range bad {
			t.Errorf("%s: %s", tg.Name, b)
		}
		if nbad > 0 {
			t.Errorf("%s: %d of %d results break the bound", tg.Name, nbad, n)
		}
		t.Logf("%s: %v of %d inputs, largest error %d ulp", tg.Name, op, n, worst)
	}
	return worst
}

// SweepWidePostOps runs CheckWideSweep for each of package vf64's f64
// post-ops with vf64.PostOpSweep's parameters on vf64.PostOpInputs (n
// random inputs drawn from seed, the specials and the post-ops' edges),
// holding each result to plan.EltwiseF64 within vf64.PostOpNear.
func SweepWidePostOps(t testing.TB, targets []Target, seed int64, n int) {
	t.Helper()
	xs := vf64.PostOpInputs(vf64.Inputs(rand.New(rand.NewSource(seed)), n))
	for _, op := range vf64.PostOpSweep() {
		CheckWideSweep(t, targets, op, xs, func(x, got float64) (int64, bool) { return vf64.PostOpNear(op, x, got) })
	}
}
