package shape

import (
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

type named string

func (n named) String() string { return string(n) }

func TestEdgeCases(t *testing.T) {
	if got := ReduceDims([]int64{2, 3}, []bool{true}, false); DimsString(got) != "3" {
		t.Errorf("ReduceDims with a short reduce: %v, want 3", got)
	}
	if _, err := NormalizeAxes(nil, 0, []int64{5}, 2); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("NormalizeAxes(nil op, axis 5 of rank 2): %v", err)
	}
	_, err := NormalizeAxes(named(`op 0 (ReduceSum "s")`), 7, []int64{-1}, 0)
	if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "scalar") || !strings.Contains(err.Error(), "tensor 7") {
		t.Errorf("axes of a rank-0 src: %v", err)
	}
	if _, err := MergeDims(named("op 1 (Add)"), 3, []int64{2, 4}, []int64{2, 5}); !errors.Is(err, status.InvalidShape) ||
		err.Error() != "invalid_shape: op 1 (Add): output tensor 3 is given as 2x4 but the op computes 2x5 (dim 1: 4 vs 5)" {
		t.Errorf("MergeDims of 2x4 and 2x5: %v", err)
	}
	if got := DimsString([]int64{UnknownDim, -1 << 63, 3}); got != "?x?x3" {
		t.Errorf("DimsString of unknown dims: %q", got)
	}
}
