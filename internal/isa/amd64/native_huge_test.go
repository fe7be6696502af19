package amd64

import (
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeHugeBroadcastSum: an f64 sum over 2^31 x (2^31+1) broadcast
// (stride 0) elements is emitted, or refused, in bounded time.
func TestNativeHugeBroadcastSum(t *testing.T) {
	p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
		Dims: []int64{1 << 31, 1<<31 + 1}, SrcStrides: []int64{0, 0}, Reduce: []bool{true, true}, DstStrides: []int64{0, 0}}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Emit(pl, Options{AVX512: true}); done <- err }()
	select {
	case err := <-done:
		t.Logf("Emit: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatalf("Emit(%v) does not return", pl)
	}
}
