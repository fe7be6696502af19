package interp

import (
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// problem2D returns an f32 4x6 mean over axis 1 with a per-row Add
// operand of dt (so the operand spans 4 elements).
func problem2D(dt dtypes.DataType) *plan.Problem {
	return &plan.Problem{
		SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{4, 6}, SrcStrides: []int64{6, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0},
		PostOps: []plan.PostOp{{Kind: ops.Add, BinDT: dt, BinStrides: []int64{1, 0}}},
	}
}

func TestRunErrors(t *testing.T) {
	p := problem2D(dtypes.BF16)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	src, dst, bin := make([]byte, 96), make([]byte, 16), make([]byte, 8)
	bad := pl.Clone()
	bad.Reduced[0].SrcStride = -1
	tests := []struct {
		name     string
		pl       *plan.Plan
		src, dst []byte
		bins     [][]byte
		status   status.Status
		msg      string // what the message must name
	}{
		{"ok", pl, src, dst, [][]byte{bin}, 0, ""},
		{"longer buffers are fine", pl, make([]byte, 200), make([]byte, 99), [][]byte{make([]byte, 9)}, 0, ""},
		{"nil plan", nil, src, dst, [][]byte{bin}, status.InvalidArguments, "nil plan"},
		{"invalid plan", bad, src, dst, [][]byte{bin}, status.InvalidArguments, "negative stride"},
		{"no operands", pl, src, dst, nil, status.InvalidArguments, "0 binary operand buffers given, the plan has 1"},
		{"two operands", pl, src, dst, [][]byte{bin, bin}, status.InvalidArguments, "2 binary operand buffers"},
		{"short src", pl, src[:95], dst, [][]byte{bin}, status.InvalidArguments, "src buffer has 95 bytes, needs 96"},
		{"nil src", pl, nil, dst, [][]byte{bin}, status.InvalidArguments, "src buffer is nil, needs 96 bytes"},
		{"short dst", pl, src, dst[:12], [][]byte{bin}, status.InvalidArguments, "dst buffer has 12 bytes, needs 16"},
		{"nil dst", pl, src, nil, [][]byte{bin}, status.InvalidArguments, "dst buffer is nil"},
		{"short operand", pl, src, dst, [][]byte{bin[:7]}, status.InvalidArguments, "binary operand 0 buffer has 7 bytes, needs 8"},
		{"nil operand", pl, src, dst, [][]byte{nil}, status.InvalidArguments, "binary operand 0 buffer is nil"},
	}
	for _, tc := range tests {
		for i := range tc.dst {
			tc.dst[i] = sentinel
		}
		err := Run(tc.pl, tc.src, tc.dst, tc.bins)
		if tc.status == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, tc.status) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want %v naming %q", tc.name, err, tc.status, tc.msg)
		}
		for i, b := range tc.dst {
			if b != sentinel {
				t.Errorf("%s: dst byte %d written despite the error", tc.name, i)
				break
			}
		}
	}
}

func TestRunProblemErrors(t *testing.T) {
	p := problem2D(dtypes.S64)
	err := RunProblem(p, make([]byte, 96), make([]byte, 16), [][]byte{make([]byte, 32)})
	if !errors.Is(err, status.InvalidDataType) {
		t.Errorf("s64 operand: %v, want invalid_data_type", err)
	}
	if err := RunProblem(nil, nil, nil, nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("nil problem: %v, want invalid_arguments", err)
	}
}

func TestEmptyTensors(t *testing.T) {
	// A zero-size kept dim: nothing is read or written, nil buffers are
	// fine (the spans are 0 bytes), the operand count is still checked.
	p := problem2D(dtypes.F32)
	p.Dims[0] = 0
	if err := RunProblem(p, nil, nil, [][]byte{nil}); err != nil {
		t.Errorf("empty dst: %v", err)
	}
	if err := RunProblem(p, nil, nil, nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("empty dst without operand: %v, want invalid_arguments", err)
	}
	// A zero-size reduced dim: no src is read, every output is NaN (0/0)
	// and still goes through the post-ops.
	p = problem2D(dtypes.F32)
	p.Dims[1] = 0
	dst := make([]byte, 16)
	if err := RunProblem(p, nil, dst, [][]byte{make([]byte, 16)}); err != nil {
		t.Fatal(err)
	}
	for i := range int64(4) {
		if v := decode(dtypes.F32, dst, i); v == v {
			t.Errorf("dst[%d] = %v, want NaN", i, v)
		}
	}
}
