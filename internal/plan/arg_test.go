package plan

import (
	"errors"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

// TestCanonicalizeArg checks the loops an index reduction's plan gets:
// kept dims merged where contiguous, the inner loop where its stride is
// below the axis's, size-1 dims dropped.
func TestCanonicalizeArg(t *testing.T) {
	for _, tc := range []struct {
		dims, src, dst []int64
		axis           int
		key            string
	}{
		{[]int64{8, 32000}, []int64{32000, 1}, []int64{1, 0}, 1, "arg f32:s32 r32000,1 8,32000,1"},
		{[]int64{1024, 4096}, []int64{4096, 1}, []int64{0, 1}, 0, "arg f32:s32 r1024,4096 i4096,1,1"},
		{[]int64{2, 3, 4, 5}, []int64{60, 20, 5, 1}, []int64{15, 5, 0, 1}, 2, "arg f32:s32 r4,5 6,20,5 i5,1,1"},
		{[]int64{2, 1, 7}, []int64{7, 7, 1}, []int64{7, 0, 1}, 1, "arg f32:s32 r1,0 i14,1,1"},
		// No outputs: not the key of one output over the same axis.
		{[]int64{0, 3}, []int64{3, 1}, []int64{1, 0}, 1, "arg0 f32:s32 r3,1"},
		{[]int64{3}, []int64{1}, []int64{0}, 0, "arg f32:s32 r3,1"},
	} {
		pl, err := CanonicalizeArg(&ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S32, Dims: tc.dims, SrcStrides: tc.src, DstStrides: tc.dst, Axis: tc.axis})
		if err != nil {
			t.Fatalf("%v axis %d: %v", tc.dims, tc.axis, err)
		}
		if got := pl.Key(); got != tc.key {
			t.Errorf("%v axis %d: key %q, want %q", tc.dims, tc.axis, got, tc.key)
		}
	}
}

// TestArgProblemRefusals checks each refusal of Validate.
func TestArgProblemRefusals(t *testing.T) {
	ok := func() *ArgProblem {
		return &ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: []int64{3, 4}, SrcStrides: []int64{4, 1}, DstStrides: []int64{1, 0}, Axis: 1}
	}
	for _, tc := range []struct {
		name string
		edit func(p *ArgProblem)
		want status.Status
	}{
		{"boolean src", func(p *ArgProblem) { p.SrcDT = dtypes.Boolean }, status.InvalidDataType},
		{"f32 index", func(p *ArgProblem) { p.IdxDT = dtypes.F32 }, status.InvalidDataType},
		{"axis past the rank", func(p *ArgProblem) { p.Axis = 2 }, status.InvalidArguments},
		{"negative axis", func(p *ArgProblem) { p.Axis = -1 }, status.InvalidArguments},
		{"empty axis", func(p *ArgProblem) { p.Dims[1] = 0 }, status.InvalidShape},
		{"strides short", func(p *ArgProblem) { p.SrcStrides = p.SrcStrides[:1] }, status.InvalidArguments},
		{"negative stride", func(p *ArgProblem) { p.SrcStrides[0] = -4 }, status.InvalidArguments},
		{"outputs share an element", func(p *ArgProblem) { p.DstStrides[0] = 0 }, status.InvalidArguments},
		{"s32 index of a long axis", func(p *ArgProblem) {
			p.IdxDT, p.Dims, p.SrcStrides = dtypes.S32, []int64{1, 1<<31 + 1}, []int64{0, 1}
		}, status.InvalidArguments},
	} {
		p := ok()
		tc.edit(p)
		if _, err := CanonicalizeArg(p); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := CanonicalizeArg(nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("nil problem: %v", err)
	}
	p := ok()
	p.Dims[0] = 0 // no output: an empty axis elsewhere is fine
	if _, err := CanonicalizeArg(p); err != nil {
		t.Errorf("no outputs: %v", err)
	}
}
