package jit

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// withSizeBound sets a src size bound of the schedules (*p:
// rowByRowMinBytes, fromMemoryBytes) to b for the test, on a fresh kernel
// cache.
func withSizeBound(t testing.TB, p *int64, b int64) {
	old := *p
	*p = b
	freshCache(t)
	t.Cleanup(func() { *p = old })
}

// TestRowByRowSchedule pins which schedules sum row by row at the real
// budget and size bound: long reductions over contiguous rows wider than
// the column kernel sums whole, in a src of 32 MiB or more, 16-bit on
// AVX-512 (f32 too on Zen cores), any type on AVX2, f64 and exact data
// included (in strips only bf16, and f16 on AVX2), whose partial sums fit
// the scratch bound, of every kind with vector code but log-sum-exp.
// Their stage-1 calls take whole rows of up to 16 KiB of partials, or
// even strips of wider ones, at most rowByRowChunk rows; stage 2 is an
// ordinary plan.
func TestRowByRowSchedule(t *testing.T) {
	bf16, f16, f32, f64, s64 := dtypes.BF16, dtypes.F16, dtypes.F32, dtypes.F64, dtypes.S64
	zen := cpuFeatures().zen // f32 on AVX-512 too (amd64.Options.Zen)
	cases := []struct {
		name string
		pl   *plan.Plan
		isa  ISA
		want bool
	}{
		{"8x512x4096 bf16 (32 MiB), avx512", middleAxis(t, bf16, 8, 512, 4096), AVX512, true},
		{"8x512x4096 f16 (32 MiB), avx2", middleAxis(t, f16, 8, 512, 4096), AVX2, true},
		{"8x512x4096 f32 (64 MiB), avx2", middleAxis(t, f32, 8, 512, 4096), AVX2, true},
		{"8x512x4096 f32 (64 MiB), avx512", middleAxis(t, f32, 8, 512, 4096), AVX512, zen},
		{"8192x4096 bf16 over rows (64 MiB), avx512", middleAxis(t, bf16, 8192, 4096), AVX512, true},
		{"16x1024x1000 bf16 (31 MiB), avx512", middleAxis(t, bf16, 16, 1024, 1000), AVX512, false},
		{"17x1024x1000 bf16 (33 MiB), avx512", middleAxis(t, bf16, 17, 1024, 1000), AVX512, true},
		{"8x512x4096 bf16, neon", middleAxis(t, bf16, 8, 512, 4096), NEON, false},
		{"4x512x4096 bf16 (16 MiB, in L3), avx512", middleAxis(t, bf16, 4, 512, 4096), AVX512, false},
		{"4x1024x8192 bf16 (strips of 4096), avx512", middleAxis(t, bf16, 4, 1024, 8192), AVX512, true},
		{"1024x32000 bf16 (8 strips of 4000), avx2", middleAxis(t, bf16, 1024, 32000), AVX2, true},
		{"2x1024x8192 f32 (not in strips), avx2", middleAxis(t, f32, 2, 1024, 8192), AVX2, false},
		{"2x1024x8192 f32 (not in strips), avx512", middleAxis(t, f32, 2, 1024, 8192), AVX512, false},
		{"4x1024x4100 f16 (strips of 2080 and 2020), avx2", middleAxis(t, f16, 4, 1024, 4100), AVX2, true},
		{"4x1024x8192 f16 (not in strips), avx512", middleAxis(t, f16, 4, 1024, 8192), AVX512, false},
		{"40x200x4096 bf16 (200 rows), avx512", middleAxis(t, bf16, 40, 200, 4096), AVX512, false},
		{"64x256x2048 bf16 (blocks of whole outputs), avx512", middleAxis(t, bf16, 64, 256, 2048), AVX512, false},
		{"65536x256 bf16 (rows summed whole), avx512", middleAxis(t, bf16, 65536, 256), AVX512, false},
		{"2^22x4096 bf16 (32 GiB; 1 GiB of partial sums), avx512", middleAxis(t, bf16, 1<<22, 4096), AVX512, true},
		{"(2^22+1)x4096 bf16 (partial sums past 1 GiB), avx512", middleAxis(t, bf16, 1<<22+1, 4096), AVX512, false},
		{"65536 rows of 4096 bf16, 64 apart, avx512", overlappingRows(t, bf16, 65536, 4096, 64), AVX512, false},
		{"8x512x4096 f32 max (64 MiB), avx2", withKind(middleAxis(t, f32, 8, 512, 4096), plan.AlgMax.Reduction(0, 0)), AVX2, true},
		{"8x512x4096 bf16 L2 (32 MiB), avx512", withKind(middleAxis(t, bf16, 8, 512, 4096), plan.AlgNormLpSum.Reduction(2, 0)), AVX512, true},
		{"8x512x4096 f16 product (32 MiB), avx512", withKind(middleAxis(t, f16, 8, 512, 4096), plan.AlgMul.Reduction(0, 0)), AVX512, true},
		{"8x512x4096 f32 min (64 MiB), avx512", withKind(middleAxis(t, f32, 8, 512, 4096), plan.AlgMin.Reduction(0, 0)), AVX512, zen},
		{"8x512x4096 bf16 |x|^3 (interpreter), avx512", withKind(middleAxis(t, bf16, 8, 512, 4096), plan.AlgNormLpSum.Reduction(3, 0)), AVX512, false},
		// The native kernel's kinds, on AVX2 only, in whole rows of at
		// most 16 KiB of partials: 2048 lanes of f64 and 64-bit
		// integers, 4096 of 32-bit ones.
		{"2048x2048 f64 (32 MiB), avx2", middleAxis(t, f64, 2048, 2048), AVX2, true},
		{"2048x2048 f64 max (32 MiB), avx2", withKind(middleAxis(t, f64, 2048, 2048), plan.AlgMax.Reduction(0, 0)), AVX2, true},
		{"2048x2048 f64 (32 MiB), avx512", middleAxis(t, f64, 2048, 2048), AVX512, false},
		{"2048x2048 f64 (32 MiB), neon", middleAxis(t, f64, 2048, 2048), NEON, false},
		{"1024x4096 f64 (32 MiB, not in strips), avx2", middleAxis(t, f64, 1024, 4096), AVX2, false},
		{"2048x2048 s64 sum (32 MiB), avx2", withKind(middleAxis(t, s64, 2048, 2048), plan.AlgSum.Reduction(0, 0)), AVX2, true},
		{"1024x4096 s64 sum (not in strips), avx2", withKind(middleAxis(t, s64, 1024, 4096), plan.AlgSum.Reduction(0, 0)), AVX2, false},
		{"2048x4096 s32 min (32 MiB), avx2", withKind(middleAxis(t, dtypes.S32, 2048, 4096), plan.AlgMin.Reduction(0, 0)), AVX2, true},
		{"1024x2048 s64 sum (16 MiB, in L3), avx2", withKind(middleAxis(t, s64, 1024, 2048), plan.AlgSum.Reduction(0, 0)), AVX2, false},
		{"2048x2048 s64 mean (one call an output), avx2", middleAxis(t, s64, 2048, 2048), AVX2, false},
		{"2048x2048 f64 log-sum-exp, avx2", withKind(middleAxis(t, f64, 2048, 2048), plan.LogSumExp), AVX2, false},
		{"16384x2048 boolean max (truths), avx2", booleanMax(t, 16384, 2048), AVX2, false},
	}
	for _, c := range cases {
		d, err := decompose(c.pl, c.isa)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := false
		for i, ph := range d.phases {
			for _, s := range ph.segs {
				sub := d.plans[s.unit]
				if !d.hints[s.unit].RowByRow || zen && sub.Stage&plan.SkipTransform != 0 {
					// On Zen cores a stage 2 over many rows of f32 partial
					// sums may be taken row by row itself.
					continue
				}
				got = true
				if i != 0 || d.split != "rowbyrow" {
					t.Errorf("%s: a row-by-row plan in phase %d of a %q schedule", c.name, i, d.split)
				}
				pdt, _, _ := partials(c.pl)
				rw := rowByRowWidth(c.pl.Inner.Size, esz(c.pl.SrcDT), esz(pdt))
				if w := c.pl.Inner.Size; sub.Inner.Size > rowByRowLanes(esz(pdt)) || sub.N > rowByRowChunk ||
					sub.Inner.Size != w && sub.Inner.Size != rw && sub.Inner.Size != w%rw {
					t.Errorf("%s: row-by-row call of %d rows of %d lanes, want at most %d rows of %d lanes or strips of it", c.name,
						sub.N, sub.Inner.Size, rowByRowChunk, w)
				}
			}
		}
		if got != c.want {
			t.Errorf("%s: row by row = %v, want %v (split %q)", c.name, got, c.want, d.split)
		}
	}
}

// takesStrips reports whether isa sums rows of src type sdt row by row
// when they are cut into strips (strips), as amd64's takesRowByRow says:
// only bf16, and f16 on AVX2.
func takesStrips(isa ISA, sdt dtypes.DataType, strips bool) bool {
	return !strips || sdt == dtypes.BF16 || isa == AVX2 && sdt == dtypes.F16
}

// booleanMax canonicalises the max over axis 0 of rows x w booleans.
func booleanMax(t *testing.T, rows, w int64) *plan.Plan {
	t.Helper()
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgMax.Reduction(0, 0), SrcDT: dtypes.Boolean, DstDT: dtypes.Boolean,
		Dims: []int64{rows, w}, SrcStrides: []int64{w, 1}, Reduce: []bool{true, false}, DstStrides: []int64{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// withKind gives pl reduction red.
func withKind(pl *plan.Plan, red plan.Reduction) *plan.Plan {
	pl.Reduction = red
	return pl
}

// rowByRowKind reports whether the emitters take red row by row where
// they take the form at all, as the random tests draw it: every kind with
// vector code but log-sum-exp's exp, which Zen cores take so too
// (TestLogSumExpRowByRow).
func rowByRowKind(red plan.Reduction) bool {
	return kernelshape.VectorReduction(red) && red.Transform != plan.TransformExp
}

// overlappingRows canonicalises the mean over axis 0 of rows x w
// elements whose rows start stride < w elements apart, so that the src
// stores far less than it describes.
func overlappingRows(t *testing.T, dt dtypes.DataType, rows, w, stride int64) *plan.Plan {
	t.Helper()
	pl, err := plan.Canonicalize(&plan.Problem{SrcDT: dt, DstDT: dt, Dims: []int64{rows, w}, SrcStrides: []int64{stride, 1},
		Reduce: []bool{true, false}, DstStrides: []int64{w, 1}})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// TestRowByRowRuns runs row-by-row schedules, with remainder chunks, odd
// widths, rows in strips, post-ops and kinds other than the mean, on
// every ISA with 1 and 2 threads against the reference (the size bound
// lifted so that the shapes stay small).
func TestRowByRowRuns(t *testing.T) {
	withSizeBound(t, &rowByRowMinBytes, 0)
	bf16, f16 := dtypes.BF16, dtypes.F16
	specs := []spec{
		{dims: []int64{3, 900, 700}, reduce: []bool{false, true, false}, sdt: bf16, ddt: bf16},
		{dims: []int64{2, 1000, 4096}, reduce: []bool{false, true, false}, sdt: f16, ddt: f32t,
			post: []plan.PostOp{{Kind: ops.ReLU}}},
		{dims: []int64{1030, 257}, reduce: []bool{true, false}, sdt: f32t, ddt: f16, lo: -1, hi: 1},
		{dims: []int64{2, 600, 3, 999}, reduce: []bool{false, true, false, false}, sdt: bf16, ddt: f32t,
			order: []int{0, 2, 1, 3}},
		{dims: []int64{3, 1100, 500}, reduce: []bool{false, true, false}, sdt: bf16, ddt: bf16},
		{dims: []int64{2100, 257}, reduce: []bool{true, false}, sdt: f16, ddt: f32t, lo: -1, hi: 1},
		{dims: []int64{2, 500, 1000}, reduce: []bool{false, true, false}, sdt: f32t, ddt: f32t, lo: 0.97, hi: 1.03},
		// Rows cut into strips: two of 4000 lanes; 3008, 3008 and 2985.
		{dims: []int64{2, 300, 8000}, reduce: []bool{false, true, false}, sdt: bf16, ddt: f32t},
		{dims: []int64{260, 9001}, reduce: []bool{true, false}, sdt: f16, ddt: f32t, lo: -1, hi: 1},
	}
	kinds := []plan.Reduction{{}, {}, {}, {},
		plan.AlgMax.Reduction(0, 0), plan.AlgNormLpMax.Reduction(2, 0.25), plan.AlgMul.Reduction(0, 0), {}, plan.AlgNormLpSum.Reduction(1, 0)}
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		for i, s := range specs {
			s.ddt = kerneltest.OutputDT(s.ddt) // f32 under GDNN_TEST_OUTPUTS=f32
			c := s.build(t, r)
			c.p.Reduction = kinds[i]
			k := c.compile(t)
			what := fmt.Sprintf("%v %v %v->%v", kinds[i], s.dims, s.sdt, s.ddt)
			strips := s.dims[len(s.dims)-1] > maxRowByRowLanes
			want := (k.ISA() == AVX2 || k.ISA() == AVX512 && (s.sdt != f32t || cpuFeatures().zen)) && takesStrips(k.ISA(), s.sdt, strips)
			got := false
			for _, h := range k.dec.hints {
				got = got || h.RowByRow
			}
			if got != want {
				t.Fatalf("%s: summed row by row %v, want %v (%s)", what, got, want, k.schedule())
			}
			checkOneAndTwoThreads(t, c, k, what)
		}
	})
}

// rowByRowKinds are the reductions with vector code TestRowByRowRandom
// draws besides the mean (half its cases).
var rowByRowKinds = func() []plan.Reduction {
	var ks []plan.Reduction
	for _, red := range kindReductions {
		if rowByRowKind(red) {
			ks = append(ks, red)
		}
	}
	return ks
}()

// TestRowByRowRandom runs random row-by-row schedules on every ISA
// against the reference, with 1 and 2 threads required bit-identical:
// the mean half the time, a random kind with vector code otherwise,
// 1 to 3 outer rows of reductions, 256 to 900 rows of 65 to 4096 lanes,
// or a quarter of the time 256 to 400 rows of 4097 to 12096 lanes (rows
// in strips; the size bound lifted), padded and permuted layouts, every
// data type pair, up to two post-ops, and budgets that shorten the
// chunks. Where the ISA sums
// row by row, most cases must take the form, so that the test keeps
// exercising it.
func TestRowByRowRandom(t *testing.T) {
	withSizeBound(t, &rowByRowMinBytes, 0)
	kinds := []ops.Kind{ops.ReLU, ops.Abs, ops.Square, ops.Add, ops.Multiply, ops.Maximum, ops.Subtract}
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(31, 32))
		const cases = 16
		taken, eligible, inStrips := 0, 0, 0
		for i := range cases {
			outer, rows, w := int64(1+r.IntN(3)), int64(256+r.IntN(645)), int64(65+r.IntN(4032))
			if r.IntN(4) == 0 {
				outer, rows, w = 1, int64(256+r.IntN(145)), int64(4097+r.IntN(8000))
			}
			s := spec{dims: []int64{outer, rows, w}, reduce: []bool{false, true, false},
				sdt: floatTypes[r.IntN(3)], ddt: floatTypes[r.IntN(3)], pad: int64(r.IntN(3)), dpad: int64(r.IntN(2))}
			if r.IntN(4) == 0 { // a kept dim between the rows and the lanes
				s.dims = []int64{outer, rows, 2, w / 2}
				s.reduce = []bool{false, true, false, false}
				s.order = []int{0, 2, 1, 3}
			}
			if r.IntN(2) == 0 {
				s.lo, s.hi = -1, 1
			}
			red := plan.Reduction{} // the mean, half the time
			if r.IntN(2) == 0 {
				red = rowByRowKinds[r.IntN(len(rowByRowKinds))]
			}
			if red.Combine == plan.CombineMul {
				s.lo, s.hi = 0.97, 1.03 // products stay near 1
			}
			for range r.IntN(3) {
				op := plan.PostOp{Kind: kinds[r.IntN(len(kinds))]}
				if op.Kind.IsBinary() {
					op.BinDT = operandTypes[r.IntN(len(operandTypes))]
					bc := make([]bool, len(s.dims))
					for j := range bc {
						bc[j] = r.IntN(2) == 0
					}
					s.binBcast = append(s.binBcast, bc)
				}
				s.post = append(s.post, op)
			}
			budget := callBudget
			if r.IntN(3) == 0 {
				budget = int64(8<<10 + r.IntN(120<<10))
			}
			withBudget(t, budget)
			c := s.build(t, r)
			c.p.Reduction = red
			k := c.compile(t)
			byRow := false
			for _, h := range k.dec.hints {
				byRow = byRow || h.RowByRow
			}
			strips := s.dims[len(s.dims)-1] > maxRowByRowLanes
			if rowByRowKind(red) && (k.ISA() == AVX2 || k.ISA() == AVX512 && (s.sdt != dtypes.F32 || cpuFeatures().zen)) && takesStrips(k.ISA(), s.sdt, strips) {
				eligible++
				if byRow {
					taken++
					if strips {
						inStrips++
					}
				}
			} else if byRow {
				t.Fatalf("case %d: %s summed %v row by row", i, k.ISA(), s.sdt)
			}
			what := fmt.Sprintf("case %d %v %v order %v pad %d %v->%v post %d budget %d rowbyrow %v",
				i, red, s.dims, s.order, s.pad, s.sdt, s.ddt, len(s.post), budget, byRow)
			checkOneAndTwoThreads(t, c, k, what)
		}
		if eligible > 0 && taken*2 < eligible {
			t.Fatalf("only %d of %d eligible cases summed row by row", taken, eligible)
		}
		t.Logf("%d of %d eligible cases summed row by row, %d of them in strips", taken, eligible, inStrips)
	})
}

// rowByRowPlans counts the row-by-row plans among the calls of phases,
// those of chunk programs included: those of log-sum-exp's unshifted
// passes, and the others.
func rowByRowPlans(d *decomposition, phases []phase) (unshifted, others int) {
	for _, ph := range phases {
		for _, s := range ph.segs {
			for _, p := range s.progs {
				u, o := rowByRowPlans(d, p.phases)
				unshifted, others = unshifted+u, others+o
			}
			switch sub := d.plans[s.unit]; {
			case len(s.progs) > 0 || !d.hints[s.unit].RowByRow:
			case sub.Stage&plan.Unshifted != 0:
				unshifted++
			default:
				others++
			}
		}
	}
	return unshifted, others
}

// TestLogSumExpRowByRow checks log-sum-exp's unshifted pass taken row by
// row on Zen cores (amd64.Options.Zen), on AVX-512 and AVX2, in its chunk
// programs, where the whole src is large enough for row by row (not where
// it stays in L3, and never on NEON or elsewhere), while the shifted
// phases of the chunks keep their schedules (a chunk's max and sums are
// not that large); and that such schedules run right, with post-ops, on
// data the unshifted pass takes and on data that sends it to the shifted
// phases, with 1 and 2 threads against the reference (the size bound
// lifted, the budget small).
func TestLogSumExpRowByRow(t *testing.T) {
	zen := cpuFeatures().zen
	t.Logf("zen: %v", zen)
	f32, bf16 := dtypes.F32, dtypes.BF16
	lse := func(pl *plan.Plan) *plan.Plan { return withKind(pl, plan.LogSumExp) }
	for _, c := range []struct {
		name string
		pl   *plan.Plan
		isa  ISA
		want bool
	}{
		{"8x512x4096 f32 (64 MiB), avx512", lse(middleAxis(t, f32, 8, 512, 4096)), AVX512, zen},
		{"8x512x4096 f32 (64 MiB), avx2", lse(middleAxis(t, f32, 8, 512, 4096)), AVX2, zen},
		{"8x512x4096 bf16 (32 MiB), avx512", lse(middleAxis(t, bf16, 8, 512, 4096)), AVX512, zen},
		{"4x512x8192 bf16 (strips), avx2", lse(middleAxis(t, bf16, 4, 512, 8192)), AVX2, zen},
		{"4x512x8192 f32 (not in strips), avx2", lse(middleAxis(t, f32, 4, 512, 8192)), AVX2, false},
		{"2x512x4096 f32 (16 MiB, in L3), avx512", lse(middleAxis(t, f32, 2, 512, 4096)), AVX512, false},
		{"8x512x4096 f32, neon", lse(middleAxis(t, f32, 8, 512, 4096)), NEON, false},
	} {
		d, err := decompose(c.pl, c.isa)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u, others := rowByRowPlans(d, d.phases)
		if got := u > 0; got != c.want {
			t.Errorf("%s: unshifted pass row by row = %v, want %v (split %q)", c.name, got, c.want, d.split)
		}
		if others > 0 {
			t.Errorf("%s: %d plans of the shifted phases row by row", c.name, others)
		}
	}

	withSizeBound(t, &rowByRowMinBytes, 0)
	withBudget(t, 64<<10)
	r := rand.New(rand.NewPCG(51, 52))
	forEachISA(t, func(t *testing.T) {
		for i, s := range []spec{
			{dims: []int64{2, 300, 700}, reduce: []bool{false, true, false}, sdt: f32, ddt: f32},
			{dims: []int64{3, 260, 701}, reduce: []bool{false, true, false}, sdt: bf16, ddt: bf16, pad: 3,
				post: []plan.PostOp{{Kind: ops.ReLU}}},
			{dims: []int64{2, 400, 1000}, reduce: []bool{false, true, false}, sdt: f32, ddt: f32}, // with overflows: shifted
			{dims: []int64{2, 300, 1500}, reduce: []bool{false, true, false}, sdt: dtypes.F16, ddt: f32,
				post: []plan.PostOp{{Kind: ops.Add, BinDT: f32}}, binBcast: [][]bool{{true, true, false}}},
			{dims: []int64{2, 260, 5000}, reduce: []bool{false, true, false}, sdt: bf16, ddt: bf16}, // in strips
		} {
			if s.lo == 0 && s.hi == 0 {
				s.lo, s.hi = -3, 3
			}
			c := s.build(t, r)
			c.p.Reduction = plan.LogSumExp
			shifted := i == 2
			if shifted {
				// Elements whose exp overflows, none in a row 0 (the
				// elements the sample guard reads): the unshifted pass
				// runs and the shifted phases redo it.
				for e := int64(5 * 1000); e < int64(len(c.src))/4; e += 997 {
					if e%(400*1000) >= 1000 {
						binary.LittleEndian.PutUint32(c.src[4*e:], math.Float32bits(95))
					}
				}
			}
			k := c.compile(t)
			u, _ := rowByRowPlans(k.dec, k.dec.phases)
			byRow := u > 0
			if want := zen && (k.ISA() == AVX2 || k.ISA() == AVX512); byRow != want {
				t.Errorf("case %d %v: row by row %v, want %v (split %q)", i, s.dims, byRow, want, k.dec.split)
			}
			before, sampled := lseShifts.Load(), lseSampled.Load()
			checkOneAndTwoThreads(t, c, k, fmt.Sprintf("case %d %v %v->%v row by row %v", i, s.dims, s.sdt, s.ddt, byRow))
			if ran := lseShifts.Load() > before; k.ISA() != None && (ran != shifted || lseSampled.Load() != sampled) {
				t.Errorf("case %d %v: shifted phases ran %v (%d sent by the sample guard), want %v after the unshifted pass",
					i, s.dims, ran, lseSampled.Load()-sampled, shifted)
			}
		}
	})
}

// TestRowByRowWidth checks the strips of rows too wide for one partials
// row: the fewest strips of at most rowByRowLanes lanes (16 KiB of
// partials: 4096 of f32, 2048 of f64 or 64-bit integers), in whole
// 64-byte lines, the last short of the others by less than a line per
// strip, so that calls are alike; rows of up to that many lanes stay
// whole.
func TestRowByRowWidth(t *testing.T) {
	for _, c := range []struct{ size, psz, lanes int64 }{{1, 4, 4096}, {2, 4, 4096}, {4, 4, 4096}, {4, 8, 2048}, {8, 8, 2048}} {
		size, most := c.size, c.lanes
		if got := rowByRowLanes(c.psz); got != most {
			t.Fatalf("rowByRowLanes(%d) = %d, want %d", c.psz, got, most)
		}
		line := 64 / size
		for w := int64(1); w <= 40000; w++ {
			s := rowByRowWidth(w, size, c.psz)
			fewest := ceilDiv(w, most)
			switch {
			case w <= most && s != w:
				t.Fatalf("%d lanes of %d bytes: strips of %d, want the whole row", w, size, s)
			case w <= most:
			case s > most || s%line != 0 || ceilDiv(w, s) != fewest:
				t.Fatalf("%d lanes of %d bytes: %d strips of %d, want %d of at most %d in whole lines of %d",
					w, size, ceilDiv(w, s), s, fewest, most, line)
			case s*fewest-w >= fewest*line:
				t.Fatalf("%d lanes of %d bytes: a last strip of %d after %d of %d", w, size, w-(fewest-1)*s, fewest-1, s)
			}
		}
	}
}
