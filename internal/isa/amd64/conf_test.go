package amd64

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// Targets of the choice table.
var (
	intel512 = kernelconf.Target{ISA: kernelconf.AVX512}
	intelBF  = kernelconf.Target{ISA: kernelconf.AVX512BF16}
	intel2   = kernelconf.Target{ISA: kernelconf.AVX2}
	zen512   = kernelconf.Target{ISA: kernelconf.AVX512, Family: kernelconf.Zen}
	zen2     = kernelconf.Target{ISA: kernelconf.AVX2, Family: kernelconf.Zen}
)

// byRow is the hint the runtime gives a stage-1 plan to reduce row by row.
var byRow = kernelconf.Hints{RowByRow: true}

// compileHinted is compile with the runtime's hints h.
func compileHinted(t testing.TB, pl *plan.Plan, h kernelconf.Hints, o Options) *kerneltest.Kernel {
	t.Helper()
	b, err := EmitHinted(pl, h, o)
	if err != nil {
		t.Fatalf("EmitHinted(%v, %+v, %+v): %v", pl, h, o, err)
	}
	k := kerneltest.Map(t, b)
	if o.AVX512 {
		k.Count = &kerneltest.AVX512Calls
	}
	return k
}

// TestChoose is the table of choices: plans built with the plan package
// and targets, against the Conf Choose gives them, in its one-line form
// (the fields each shape reads), with no code emitted.
func TestChoose(t *testing.T) {
	f32, bf16, f16, s8 := dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8
	sum, max, min := plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0)
	l1, l2, mul := plan.AlgNormLpSum.Reduction(1, 0), plan.AlgNormLpSum.Reduction(2, 0), plan.AlgMul.Reduction(0, 0)
	rows := func(dt dtypes.DataType, n, rk int64, r plan.Reduction) *plan.Plan {
		return kerneltest.DensePlan(t, dt, []int64{n, rk}, []int64{rk, 1}, []bool{false, true}, r)
	}
	cols := func(dt dtypes.DataType, rs, stride, w int64, r plan.Reduction) *plan.Plan {
		return kerneltest.DensePlan(t, dt, []int64{rs, w}, []int64{stride, 1}, []bool{true, false}, r)
	}
	// Stage-1 plans of partials, which the runtime may take row by row.
	stage1 := func(pl *plan.Plan) *plan.Plan {
		pl.Stage, pl.DstDT = plan.SkipFinalize, f32
		return pl
	}
	none, mem := kernelconf.Hints{}, kernelconf.Hints{FromMemory: true}
	cases := []struct {
		pl   *plan.Plan
		h    kernelconf.Hints
		t    kernelconf.Target
		want string
	}{
		// Rows: groups of V up to groupMaxF32 (f32) or groupMax, packed
		// when short, gathered when 2 to 4 back to back; one output's
		// rows take 8 accumulators, or one paced to memory on Zen.
		{rows(f32, 4096, 5, sum), none, intel512, "avx512/intel row group=16 pack=1 u=1 pf-group=2048"},
		{rows(f32, 4096, 3, sum), none, intel512, "avx512/intel row group=16 gather pack=2 u=1"},
		{rows(f32, 4096, 3, sum), none, intel2, "avx2/intel row group=8 pack=1 u=1 pf-group=2048"},
		{rows(bf16, 4096, 12, sum), none, intelBF, "avx512_bf16/intel row group=16 pack=1 pair-packed u=1 pf-group=2048 bf16-pairs"},
		{rows(bf16, 4096, 5, sum), none, intel512, "avx512/intel row group=16 pack=1 u=1 pf-group=2048 bf16-pairs"},
		{rows(f32, 4096, 96, sum), none, intel512, "avx512/intel row group=16 u=6"},
		{rows(f32, 4096, 97, sum), none, intel512, "avx512/intel row u=7 streams=2"},
		{rows(bf16, 4096, 256, sum), none, intel512, "avx512/intel row group=16 u=8 bf16-pairs"},
		{rows(f32, 64, 3000, sum), none, intel512, "avx512/intel row u=8 streams=2"},
		{rows(f32, 1, 1<<20, sum), none, intel512, "avx512/intel row u=8 streams=2"},
		{rows(f32, 1, 1<<20, sum), mem, zen512, "avx512/zen row u=1 paced streams=2"},
		{rows(f32, 1, 1<<20, sum), mem, intel512, "avx512/intel row u=8 streams=2"},
		{rows(f32, 1, 1<<20, max), mem, zen512, "avx512/zen row u=1 paced streams=2 nan-free watch"},
		{rows(bf16, 1, 256<<10, sum), none, intel512, "avx512/intel row u=8 pf-row=16384 bf16-pairs"},
		{rows(bf16, 1, 256<<10, sum), none, zen512, "avx512/zen row u=8 bf16-pairs"},
		{rows(bf16, 1, 256<<10-1, sum), none, intel512, "avx512/intel row u=8 bf16-pairs"},
		{rows(f16, 128, 4096, sum), none, intel2, "avx2/intel row u=8 pf-row=16384"},
		{rows(bf16, 64, 1024, sum), none, intel512, "avx512/intel row u=8 bf16-pairs"},
		{rows(s8, 64, 1000, sum), none, intel512, "avx512/intel row u=8 sad"},
		{rows(f32, 64, 1000, l1), none, intel512, "avx512/intel row u=8 streams=2 abs-mask"},
		{rows(bf16, 64, 1000, max), none, intel512, "avx512/intel row u=8 words bf16-pairs nan-free"},
		{rows(bf16, 64, 1000, max), none, intel2, "avx2/intel row u=8 words bf16-pairs"},
		{rows(f32, 64, 1000, min), none, intel2, "avx2/intel row u=8 streams=2"},
		{kerneltest.DensePlan(t, f32, []int64{2, 4096, 2}, []int64{8192, 2, 1}, []bool{true, false, true}, sum), none, intel512, "avx512/intel row group=16 pack=2 u=1 pf-group=2048"},
		{kerneltest.DensePlan(t, f32, []int64{64, 4096, 2}, []int64{8192, 2, 1}, []bool{true, false, true}, sum), none, intel512, "avx512/intel row group=16 pack=2 u=1"},
		{kerneltest.DensePlan(t, f32, []int64{64, 7}, []int64{14, 2}, []bool{false, true}, sum), none, intel512, "avx512/intel element u=4"},
		// Columns: blocks of 16 (AVX2: 8, or 12 for plain f32 sums)
		// vectors, flat streams of narrow Inners, several kept
		// iterations per load, prefetch where measured to pay.
		{kerneltest.DensePlan(t, f32, []int64{4096, 2, 2}, []int64{4, 2, 1}, []bool{false, true, false}, sum), none, intel512, "avx512/intel flat-column outer=4 u=1 pf-kept=2048"},
		{kerneltest.DensePlan(t, f32, []int64{4096, 2, 2}, []int64{4, 2, 1}, []bool{false, true, false}, sum), none, intel2, "avx2/intel flat-column u=1 pf-kept=2048"},
		{kerneltest.DensePlan(t, f32, []int64{4096, 4, 4}, []int64{16, 4, 1}, []bool{false, true, false}, sum), none, intel512, "avx512/intel flat-column u=1"},
		{cols(f32, 1024, 4096, 4096, sum), none, intel2, "avx2/intel column acc=12 block=12v0:u1 block=8v0:u1"},
		{cols(f32, 1024, 4096, 4096, sum), none, intel512, "avx512/intel column acc=16 block=16v0:u1"},
		{cols(bf16, 3136, 256, 64, sum), none, intel2, "avx2/intel column acc=8 block=8v0:u1,pairs4,pf8192 bf16-pairs"},
		{cols(bf16, 512, 4096, 64, sum), none, intel2, "avx2/intel column acc=8 block=8v0:u1,pairs4 bf16-pairs"},
		{cols(bf16, 512, 4096, 128, sum), none, intel512, "avx512/intel column acc=16 block=8v0:u1,pairs4,pf131072 bf16-pairs"},
		{cols(bf16, 512, 4096, 256, sum), none, intel512, "avx512/intel column acc=16 block=16v0:u1 bf16-pairs"},
		{cols(bf16, 512, 4096, 256, sum), none, zen512, "avx512/zen column acc=16 block=16v0:u1,pairs8 bf16-pairs"},
		{cols(bf16, 4096, 5, 5, sum), none, intel512, "avx512/intel flat-column u=8 pf-flat=2048 bf16-pairs"},
		{cols(f16, 4096, 3, 3, sum), none, intel2, "avx2/intel flat-column u=8"},
		{cols(f32, 4096, 4, 4, sum), none, intel512, "avx512/intel flat-column u=8"},
		{cols(f32, 4096, 9, 9, sum), none, intel512, "avx512/intel column acc=16 block=0v9:u8,pf-stream288"},
		{cols(f32, 4096, 16, 15, sum), none, intel512, "avx512/intel column acc=16 block=0v15:u8"},
		{cols(f32, 512, 4096, 256, l1), none, intel512, "avx512/intel column acc=16 block=16v0:u1,pf65536 busy abs-mask"},
		{cols(f32, 512, 1024, 256, l2), none, intel512, "avx512/intel column acc=16 block=16v0:u1,pf16384 busy"},
		{cols(f32, 512, 4096, 256, max), none, intel512, "avx512/intel column acc=16 block=16v0:u1,pf65536 busy nan-free"},
		{cols(f32, 512, 512, 256, max), none, intel512, "avx512/intel column acc=16 block=16v0:u1 nan-free"},
		{cols(f32, 512, 4096, 256, mul), none, intel512, "avx512/intel column acc=16 block=16v0:u1"},
		{cols(f32, 512, 1024, 64, max), none, intel2, "avx2/intel column acc=8 block=8v0:u1,pf16384 busy nan-free"},
		{cols(bf16, 512, 8192, 512, max), none, intel512, "avx512/intel column acc=16 block=16v0:u1 words bf16-pairs nan-free"},
		{cols(bf16, 512, 8192, 512, min), none, intel2, "avx2/intel column acc=8 block=8v0:u1,pairs4 words bf16-pairs"},
		// Row by row (plans the runtime marks so: 16-bit src everywhere,
		// f32 on AVX2, and on AVX-512 too on Zen), prefetched rowAhead
		// ahead, or on Zen as far as the partials row leaves of L1.
		{stage1(cols(bf16, 4096, 512, 512, sum)), byRow, intel512, "avx512/intel row-by-row pf=16384 bf16-pairs"},
		{stage1(cols(f32, 4096, 512, 512, sum)), byRow, intel2, "avx2/intel row-by-row pf=16384"},
		{stage1(cols(f32, 4096, 4096, 4096, sum)), byRow, zen512, "avx512/zen row-by-row pf=8192"},
		{stage1(cols(f32, 4096, 4096, 4096, sum)), none, zen512, "avx512/zen column acc=16 block=16v0:u1"}, // not asked to
		{rows(f32, 1, 1<<20, sum), none, zen512, "avx512/zen row u=8 streams=2"},                           // not from DRAM
		{stage1(cols(f32, 4096, 4096, 4096, max)), byRow, zen2, "avx2/zen row-by-row pf=8192 nan-free"},
	}
	for _, c := range cases {
		if got := Choose(c.pl, c.h, c.t).String(); got != c.want {
			t.Errorf("%v%v on %v:\n got %s\nwant %s", c.pl, c.h, c.t, got, c.want)
		}
	}
}
