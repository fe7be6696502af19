package plan

import (
	"reflect"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
)

// TestProblemClone: a clone equals its problem, field for field, and
// writing any of its slices leaves the problem as it was.
func TestProblemClone(t *testing.T) {
	p := &Problem{Reduction: Reduction{Transform: TransformPow, Combine: CombineAdd, Finalize: FinalizeMean, P: 3, Eps: 1e-6},
		SrcDT: dtypes.F32, DstDT: dtypes.BF16, Dims: []int64{2, 3}, SrcStrides: []int64{3, 1}, Reduce: []bool{false, true},
		DstStrides: []int64{1, 0}, PostOps: []PostOp{{Kind: ops.Add, Alpha: 1, Beta: 2, BinDT: dtypes.F32, BinStrides: []int64{1, 0}}}}
	c := p.Clone()
	if !reflect.DeepEqual(c, p) {
		t.Fatalf("clone %+v of %+v", c, p)
	}
	c.Dims[0], c.SrcStrides[0], c.Reduce[0], c.DstStrides[0], c.PostOps[0].BinStrides[0] = 9, 9, true, 9, 9
	c.PostOps[0].Alpha = 9
	if p.Dims[0] != 2 || p.SrcStrides[0] != 3 || p.Reduce[0] || p.DstStrides[0] != 1 || p.PostOps[0].BinStrides[0] != 1 || p.PostOps[0].Alpha != 1 {
		t.Errorf("writing the clone changed the problem: %+v", p)
	}
}
