package jit

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestHintsKeyUnits checks that one plan under different hints is
// different units with different cache keys (their code may differ),
// and the same plan and hints one unit.
func TestHintsKeyUnits(t *testing.T) {
	pl, err := plan.Canonicalize(&plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{64, 4096},
		SrcStrides: []int64{4096, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	dc := newDecomposer(AVX512)
	a := dc.unitHinted(pl, kernelconf.Hints{})
	b := dc.unitHinted(pl, kernelconf.Hints{FromMemory: true})
	c := dc.unitHinted(pl.Clone(), kernelconf.Hints{FromMemory: true})
	if a == b || b != c {
		t.Fatalf("units %d, %d, %d: want a new unit for new hints only", a, b, c)
	}
	if dc.d.keys[a] == dc.d.keys[b] || dc.d.hints[b] != (kernelconf.Hints{FromMemory: true}) {
		t.Errorf("keys %q, %q, hints %+v", dc.d.keys[a], dc.d.keys[b], dc.d.hints[b])
	}
}
