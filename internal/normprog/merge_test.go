package normprog

import (
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// TestMergeKept: neighbouring kept dims that every operand walks as one
// are merged, so that a [4, 512, 512] RMSNorm is cut into chunks of a few
// hundred KiB; dims an operand does not walk as one stay apart.
func TestMergeKept(t *testing.T) {
	d := residualCase(RMSNorm, []int64{4, 512, 512}, 1, dtypes.F32, dtypes.F32, dtypes.F32, true, true, false)
	p, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.d.Dims, []int64{2048, 512}) || p.nChunks < 4 {
		t.Errorf("dims %v in %d chunks; want [2048 512] in several", p.d.Dims, p.nChunks)
	}
	if !slices.Equal(d.Dims, []int64{4, 512, 512}) {
		t.Errorf("Compile changed the caller's dims to %v", d.Dims)
	}
	// x transposed: [4, 512] is not one dim for it.
	d = residualCase(RMSNorm, []int64{4, 512, 64}, 1, dtypes.F32, dtypes.F32, dtypes.F32, true, true, true)
	if p, err = Compile(d); err != nil {
		t.Fatal(err)
	}
	if len(p.d.Dims) != 3 {
		t.Errorf("dims %v; a transposed operand keeps them apart", p.d.Dims)
	}
	// A LayerNorm over the last two dims keeps them: they are normalized.
	d = residualCase(LayerNorm, []int64{4, 8, 64}, 2, dtypes.F32, dtypes.F32, dtypes.F32, false, false, false)
	d.Residual = nil
	if p, err = Compile(d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.d.Dims, []int64{4, 8, 64}) {
		t.Errorf("dims %v; want the normalized dims as they are", p.d.Dims)
	}
}
