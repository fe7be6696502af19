package arm64

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestChoose is the table of NEON choices: plans built with the plan
// package against the Conf Choose gives them, in its one-line form, with
// no code emitted.
func TestChoose(t *testing.T) {
	f32, bf16, u8 := dtypes.F32, dtypes.BF16, dtypes.U8
	canon := func(dt dtypes.DataType, dims, ss []int64, red []bool) *plan.Plan {
		return kerneltest.DensePlan(t, dt, dims, ss, red, plan.Reduction{})
	}
	rows := func(dt dtypes.DataType, n, rk int64) *plan.Plan {
		return canon(dt, []int64{n, rk}, []int64{rk, 1}, []bool{false, true})
	}
	cols := func(dt dtypes.DataType, rs, w int64) *plan.Plan {
		return canon(dt, []int64{rs, w}, []int64{w, 1}, []bool{true, false})
	}
	cases := []struct {
		pl   *plan.Plan
		want string
	}{
		{rows(f32, 4096, 3), "neon row group=4 gu=1 u=1"},
		{rows(f32, 4096, 8), "neon row group=4 gu=2 u=2"},
		{rows(u8, 4096, 16), "neon row group=4 gu=4 u=4 pair-sums"},
		{rows(f32, 4096, 256), "neon row group=4 gu=2 u=8"},
		{rows(f32, 4096, 257), "neon row u=8"},
		{rows(bf16, 1, 5), "neon row u=2"},
		{canon(f32, []int64{64, 7}, []int64{14, 2}, []bool{false, true}), "neon element u=4"},
		{cols(f32, 4096, 2), "neon flat-column u=8"},
		{cols(f32, 3, 2), "neon flat-column u=1"},
		{cols(f32, 64, 100), "neon column block=16v0:u1 block=9v0:u1"},
		{cols(f32, 64, 8), "neon column block=2v0:u4"},
	}
	for _, c := range cases {
		if got := Choose(c.pl).String(); got != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.pl, got, c.want)
		}
	}
}
