package jit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

var floatTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}

// randomSpec draws a problem: rank 0-4, dims 0-9 (rarely 0), random axes,
// layout order, padding, data types and up to two post-ops.
func randomSpec(r *rand.Rand) spec {
	rank := r.IntN(5)
	s := spec{dims: make([]int64, rank), reduce: make([]bool, rank)}
	for i := range rank {
		s.dims[i] = int64(1 + r.IntN(9))
		if r.IntN(40) == 0 {
			s.dims[i] = 0
		}
		s.reduce[i] = r.IntN(2) == 0
	}
	s.order = r.Perm(rank)
	if r.IntN(3) == 0 {
		s.pad = int64(r.IntN(3))
	}
	s.sdt = floatTypes[r.IntN(3)]
	s.ddt = s.sdt
	if r.IntN(2) == 0 {
		s.ddt = dtypes.F32
	}
	s.ddt = kerneltest.OutputDT(s.ddt)
	if r.IntN(2) == 0 {
		s.lo, s.hi = -1, 1
	}
	kinds := []ops.Kind{ops.ReLU, ops.Abs, ops.Square, ops.Add, ops.Multiply, ops.Maximum, ops.Minimum, ops.Subtract}
	for range r.IntN(3) {
		k := kinds[r.IntN(len(kinds))]
		op := plan.PostOp{Kind: k}
		if k.IsBinary() {
			op.BinDT = operandTypes[r.IntN(len(operandTypes))]
			bc := make([]bool, rank)
			for i := range bc {
				bc[i] = r.IntN(3) == 0
			}
			s.binBcast = append(s.binBcast, bc)
		}
		s.post = append(s.post, op)
	}
	return s
}

// TestRandomAgainstInterpAndReference runs random problems under several
// budgets (so blocked, tiled and two-stage schedules all occur) and checks
// every result against interp.RunProblem and the float64 reference.
func TestRandomAgainstInterpAndReference(t *testing.T) {
	forEachISA(t, testRandom)
}

// forEachISA runs f under every ISA of testISAs (the cap set to it).
func forEachISA(t *testing.T, f func(t *testing.T)) {
	for _, isa := range testISAs() {
		t.Run(isa.String(), func(t *testing.T) {
			prev := SetMaxISA(isa)
			defer SetMaxISA(prev)
			if EffectiveISA() != isa {
				t.Fatalf("cap %s: EffectiveISA %s", isa, EffectiveISA())
			}
			f(t)
		})
	}
}

func testRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, budget := range []int64{1 << 20, 256, 64} {
		withBudget(t, budget)
		for i := range 150 {
			s := randomSpec(r)
			c := s.build(t, r)
			what := fmt.Sprintf("budget %d case %d %v axes %v %v->%v post %d", budget, i, s.dims, s.reduce, s.sdt, s.ddt, len(s.post))
			got := c.run(t)
			want := c.newDst()
			if err := interp.RunProblem(c.p, c.src, want, c.bins); err != nil {
				t.Fatalf("%s: interp: %v", what, err)
			}
			checkRef(t, c, got, what)
			checkRef(t, c, want, what+" (interp)")
		}
	}
}

// bigShapes exercise every schedule under a small budget; budget 4 KiB
// makes them take each path with little work.
func bigShapes() []struct {
	name string
	s    spec
	want string // the split the schedule must use
} {
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	shapes := []struct {
		name string
		s    spec
		want string
	}{
		{"blocks [1000,100] r1", spec{dims: []int64{1000, 100}, reduce: []bool{false, true}, sdt: f32, ddt: f32}, "blocks"},
		{"blocks outer peeled [3,50,40,30] r3", spec{dims: []int64{3, 50, 40, 30}, reduce: []bool{false, false, false, true}, sdt: bf16, ddt: bf16,
			order: []int{0, 1, 2, 3}, pad: 1}, "blocks"},
		{"tiles [64,4099] r0", spec{dims: []int64{64, 4099}, reduce: []bool{true, false}, sdt: f32, ddt: f32,
			post: []plan.PostOp{{Kind: ops.Add, BinDT: f16}}, binBcast: [][]bool{{false, false}}}, "tiles"},
		{"tiles nhwc [4,7,7,300] r12", spec{dims: []int64{4, 7, 7, 300}, reduce: []bool{false, true, true, false}, sdt: f16, ddt: f32}, "tiles"},
		{"2stage whole rows nhwc [4,8,16,48] r12", spec{dims: []int64{4, 8, 16, 48}, reduce: []bool{false, true, true, false}, sdt: bf16, ddt: bf16}, "2stage"},
		{"2stage full [100003]", spec{dims: []int64{100003}, reduce: []bool{true}, sdt: f32, ddt: f32, lo: -1, hi: 1}, "2stage"},
		{"2stage rows [6,20000] r1", spec{dims: []int64{6, 20000}, reduce: []bool{false, true}, sdt: bf16, ddt: f32,
			post: []plan.PostOp{{Kind: ops.Multiply, BinDT: f32}, {Kind: ops.ReLU}}, binBcast: [][]bool{{true, false}}}, "2stage"},
		{"2stage inner [5000,100] r0", spec{dims: []int64{5000, 100}, reduce: []bool{true, false}, sdt: f32, ddt: f32}, "2stage"},
		{"2stage split reduced [3,40,30,70] r123", spec{dims: []int64{3, 40, 30, 70}, reduce: []bool{false, true, true, true}, sdt: f16, ddt: f16,
			order: []int{0, 2, 1, 3}, pad: 2}, "2stage"},
		{"2stage inner and chunks [2,300,64,9] r1,2", spec{dims: []int64{2, 300, 64, 9}, reduce: []bool{false, true, true, false}, sdt: bf16, ddt: bf16}, "2stage"},
	}
	// Under GDNN_TEST_OUTPUTS=f32 every shape writes f32.
	for i := range shapes {
		shapes[i].s.ddt = kerneltest.OutputDT(shapes[i].s.ddt)
	}
	return shapes
}

// TestThreadDeterminism runs shapes that take every schedule with 1, 2 and
// 7 threads and requires identical bytes, and correct ones.
func TestThreadDeterminism(t *testing.T) {
	forEachISA(t, testThreadDeterminism)
}

func testThreadDeterminism(t *testing.T) {
	withBudget(t, 4096)
	r := rand.New(rand.NewPCG(3, 4))
	for _, sh := range bigShapes() {
		t.Run(sh.name, func(t *testing.T) {
			c := sh.s.build(t, r)
			k := c.compile(t)
			if k.dec.split != sh.want {
				t.Fatalf("schedule split %q, want %q (%s)", k.dec.split, sh.want, k.schedule())
			}
			var first []byte
			for _, n := range []int{1, 2, 7} {
				withThreads(t, n)
				for rep := range 2 {
					dst := c.newDst()
					if err := k.Run(c.src, dst, c.bins); err != nil {
						t.Fatalf("threads %d: %v", n, err)
					}
					if first == nil {
						first = dst
						checkRef(t, c, dst, sh.name)
						continue
					}
					if !bytes.Equal(dst, first) {
						t.Fatalf("threads %d rep %d: bytes differ from the 1-thread run", n, rep)
					}
				}
			}
		})
	}
}

// TestDefaultBudgetSplits runs a full reduction long enough to be split in
// two stages at the real 1 MiB budget.
func TestDefaultBudgetSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c := spec{dims: []int64{600000}, reduce: []bool{true}, sdt: f32t, ddt: f32t}.build(t, r)
	k := c.compile(t)
	if k.dec.split != "2stage" {
		t.Fatalf("split %q, want 2stage", k.dec.split)
	}
	checkOneAndTwoThreads(t, c, k, "600000 full")
}

// checkOneAndTwoThreads runs k on c with 1 and then 2 threads: the first
// result must match the reference, the second be the same bytes.
func checkOneAndTwoThreads(t *testing.T, c *tcase, k *Kernel, what string) {
	t.Helper()
	var first []byte
	for _, n := range []int{1, 2} {
		withThreads(t, n)
		dst := c.newDst()
		if err := k.Run(c.src, dst, c.bins); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if first == nil {
			first = dst
			checkRef(t, c, dst, what)
		} else if !bytes.Equal(first, dst) {
			t.Fatalf("%s: 2 threads differ from 1", what)
		}
	}
}

// TestLongRowsTakeTwoStages pins maxTileRows at the real budget: a
// reduction over more than maxTileRows contiguous rows is split into two
// stages whose stage-1 calls read at least 1 KiB of each row and at most
// maxTileRows rows, not into narrow Inner tiles; up to maxTileRows rows
// keep the tiles. The shapes hold less than rowByRowMinBytes of src (the
// larger are summed row by row, see TestRowByRowSchedule). Then two such
// schedules, with remainder chunks, run against the reference with 1 and
// 2 threads on every ISA.
func TestLongRowsTakeTwoStages(t *testing.T) {
	bf16 := dtypes.BF16
	schedules := []struct {
		dims  []int64
		sdt   dtypes.DataType
		split string
	}{
		{[]int64{1024, 4096}, f32t, "tiles"},
		{[]int64{1024, 4096}, bf16, "tiles"},
		{[]int64{1025, 4096}, f32t, "2stage"},
		{[]int64{3072, 4096}, bf16, "2stage"},
		{[]int64{2, 1500, 2048}, f32t, "2stage"},
		{[]int64{4, 512, 4096}, bf16, "tiles"},
	}
	for _, sc := range schedules {
		pl := middleAxis(t, sc.sdt, sc.dims...)
		for _, isa := range []ISA{AVX512, AVX2, NEON} {
			d, err := decompose(pl, isa)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%v %v %v", sc.dims, sc.sdt, isa)
			if d.split != sc.split {
				t.Errorf("%s: split %q, want %q", name, d.split, sc.split)
				continue
			}
			for _, s := range d.phases[0].segs {
				sub := d.plans[s.unit]
				if sub.N > maxTileRows {
					t.Errorf("%s: a first-phase call runs down %d rows, more than %d: %s", name, sub.N, maxTileRows, sub)
				}
				if rowBytes := sub.Inner.Size * esz(sc.sdt); rowBytes < 1024 {
					t.Errorf("%s: a first-phase call reads %d bytes of each row, want at least 1 KiB: %s", name, rowBytes, sub)
				}
			}
		}
	}

	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, s := range []spec{
			{dims: []int64{1100, 1300}, reduce: []bool{true, false}, sdt: f32t, ddt: f32t, lo: -1, hi: 1},
			{dims: []int64{3, 1500, 700}, reduce: []bool{false, true, false}, sdt: bf16, ddt: bf16},
		} {
			c := s.build(t, r)
			k := c.compile(t)
			if k.ISA() != None && k.dec.split != "2stage" {
				t.Fatalf("%v: split %q, want 2stage (%s)", s.dims, k.dec.split, k.schedule())
			}
			checkOneAndTwoThreads(t, c, k, fmt.Sprint(s.dims))
		}
	})
}

const f32t = dtypes.F32

// TestPlansOfAboutOneBudgetAreShared pins splitBudget at the real budget:
// a plan of half a budget to one budget, which fits one call, is cut into
// at most parallelCalls calls of about a quarter budget or more, so that
// threads can share it: Outer blocks, Inner tiles, or two stages, also
// where rows are wider than a quarter budget or tiles would be narrow.
// Smaller plans stay one call, larger ones keep budget-sized calls. Every
// cut plan runs against the reference with 1 and 2 threads, and the
// blocks of these shapes give the very bytes of the single call (the
// budget raised eightfold; narrower tiles, or an emitter that groups short
// rows by the block's size, may sum in another order).
func TestPlansOfAboutOneBudgetAreShared(t *testing.T) {
	forEachISA(t, testPlansOfAboutOneBudgetAreShared)
}

func testPlansOfAboutOneBudgetAreShared(t *testing.T) {
	bf16 := dtypes.BF16
	cases := []struct {
		dims  []int64
		axes  []int
		sdt   dtypes.DataType
		split string
		calls int64
	}{
		{[]int64{64, 1024}, []int{1}, f32t, "single", 1},    // 256 KiB
		{[]int64{127, 1024}, []int{1}, f32t, "single", 1},   // just under half a budget
		{[]int64{128, 1024}, []int{1}, f32t, "blocks", 2},   // half a budget: 2 x 256 KiB
		{[]int64{192, 1024}, []int{1}, f32t, "blocks", 3},   // 768 KiB
		{[]int64{256, 1024}, []int{1}, f32t, "blocks", 4},   // one budget
		{[]int64{512, 768}, []int{1}, bf16, "blocks", 4},    // 768 KiB of bf16 in blocks of 170 rows
		{[]int64{24, 64, 128}, []int{1}, f32t, "blocks", 3}, // middle axis, 768 KiB
		{[]int64{7, 37449}, []int{1}, f32t, "blocks", 4},    // rows of 146 KiB: blocks of 2 rows
		{[]int64{512, 512}, []int{0}, f32t, "tiles", 4},     // columns: 128-lane tiles
		{[]int64{257, 1020}, []int{0}, f32t, "tiles", 4},    // 256-lane tiles, not 8 of 128
		{[]int64{4096, 64}, []int{0}, f32t, "2stage", 5},    // whole rows: 4 chunks and stage 2
		{[]int64{262144}, []int{0}, f32t, "2stage", 5},      // a full reduction
		{[]int64{257, 1024}, []int{1}, f32t, "blocks", 2},   // over one budget: budget-sized blocks
		{[]int64{1024, 1024}, []int{1}, bf16, "blocks", 2},  // 2 MiB
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, tc := range cases {
		s := spec{dims: tc.dims, reduce: make([]bool, len(tc.dims)), sdt: tc.sdt, ddt: kerneltest.OutputDT(tc.sdt), lo: -1, hi: 1}
		for _, ax := range tc.axes {
			s.reduce[ax] = true
		}
		name := fmt.Sprint(tc.dims, " axes ", tc.axes, " ", tc.sdt)
		c := s.build(t, r)
		k := c.compile(t)
		calls := int64(0)
		for _, ph := range k.dec.phases {
			calls += ph.tasks
		}
		if k.dec.split != tc.split || calls != tc.calls {
			t.Errorf("%s: %s, want split:%s calls:%d", name, k.schedule(), tc.split, tc.calls)
			continue
		}
		if tc.calls == 1 {
			continue
		}
		checkOneAndTwoThreads(t, c, k, name)
		if tc.split != "blocks" {
			continue // tiles and chunks may sum in another order
		}
		cut := c.newDst()
		if err := k.Run(c.src, cut, c.bins); err != nil {
			t.Fatal(err)
		}
		func() {
			old := callBudget
			callBudget = 8 * old
			defer func() { callBudget = old }()
			whole := c.compile(t)
			if whole.dec.split != "single" {
				t.Fatalf("%s: with the budget raised, split %q, want single", name, whole.dec.split)
			}
			dst := c.newDst()
			if err := whole.Run(c.src, dst, c.bins); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst, cut) {
				t.Errorf("%s: the blocks give other bytes than one call", name)
			}
		}()
	}
}

// TestCallBudget checks the schedule bounds every call: no call of a dense
// problem reads more than the budget (the elements of one call times their
// size), and the calls cover every output exactly once.
func TestCallBudget(t *testing.T) {
	const budget = 4096
	withBudget(t, budget)
	r := rand.New(rand.NewPCG(7, 8))
	for _, sh := range bigShapes() {
		if sh.s.pad != 0 || sh.s.order != nil {
			continue
		}
		c := sh.s.build(t, r)
		k := c.compile(t)
		for pi, ph := range k.dec.phases {
			for si, s := range ph.segs {
				pl := k.dec.plans[s.unit]
				elems := pl.N * pl.Outputs
				if elems*esz(pl.SrcDT) > budget {
					t.Errorf("%s phase %d seg %d: a call reads %d elements of %v (budget %d bytes): %s",
						sh.name, pi, si, elems, pl.SrcDT, budget, pl)
				}
			}
		}
		// Coverage: count outputs written by the last phase's calls.
		last := k.dec.phases[len(k.dec.phases)-1]
		var outs int64
		for _, s := range last.segs {
			pl := k.dec.plans[s.unit]
			per := pl.Outputs
			if s.blocked {
				per /= pl.Outer[0].Size // outputs per Outer[0] iteration
				outs += per * (s.bsize*(s.nblk-1) + s.last) * (s.tasks / s.nblk)
			} else {
				outs += per * s.tasks
			}
		}
		if outs != k.pl.Outputs {
			t.Errorf("%s: the final phase writes %d outputs, the plan has %d", sh.name, outs, k.pl.Outputs)
		}
	}
}

func TestRunChecksBuffers(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	c := spec{dims: []int64{4, 8}, reduce: []bool{false, true}, sdt: dtypes.BF16, ddt: dtypes.F32,
		post: []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}}}.build(t, r)
	k := c.compile(t)
	dst := c.newDst()
	cases := []struct {
		name      string
		src, dst  []byte
		bins      [][]byte
		wantInMsg string
	}{
		{"short src", c.src[:len(c.src)-1], dst, c.bins, "src buffer holds 63 bytes, the plan reads 64"},
		{"short dst", c.src, dst[:3], c.bins, "dst buffer holds 3 bytes, the plan writes 16"},
		{"short bin", c.src, dst, [][]byte{c.bins[0][:15]}, "binary operand 0 holds 15 bytes, the plan reads 16"},
		{"no bins", c.src, dst, nil, "0 binary operand buffers given, the plan has 1"},
		{"nil src", nil, dst, c.bins, "src buffer holds 0 bytes"},
	}
	for _, tc := range cases {
		err := k.Run(tc.src, tc.dst, tc.bins)
		if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), tc.wantInMsg) {
			t.Errorf("%s: err %v, want InvalidArguments containing %q", tc.name, err, tc.wantInMsg)
		}
	}
	var nilK *Kernel
	if err := nilK.Run(c.src, dst, c.bins); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("nil kernel Run: %v", err)
	}
	if nilK.Plan() != nil || nilK.ISA() != None || nilK.Impl() != "" || nilK.Why() != "" {
		t.Errorf("nil kernel: Plan %v, ISA %v, Impl %q, Why %q", nilK.Plan(), nilK.ISA(), nilK.Impl(), nilK.Why())
	}
	if _, err := Compile(nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("Compile(nil): %v", err)
	}
	bad := &plan.Plan{SrcDT: dtypes.S32, DstDT: dtypes.BF16} // an s32 mean writes s32, f32 or f64
	if _, err := Compile(bad); !errors.Is(err, status.InvalidDataType) {
		t.Errorf("Compile(s32 plan to bf16): %v, want InvalidDataType", err)
	}
}

// TestCompileRecomputesCounts compiles hand-built plans whose N and
// Outputs disagree with their loops: the schedule follows the loops (no
// panic, every output written, no call over the budget).
func TestCompileRecomputesCounts(t *testing.T) {
	f32 := dtypes.F32
	ones := func(n int64) []byte {
		b := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(1))
		}
		return b
	}
	cases := []struct {
		name string
		pl   plan.Plan
		outs int64 // dst elements, all 1 after Run
	}{
		{"no outputs claimed", plan.Plan{SrcDT: f32, DstDT: f32, Outer: []plan.Loop{{Size: 2, SrcStride: 4, DstStride: 1}},
			Reduced: []plan.Loop{{Size: 4, SrcStride: 1}}, N: 4, Outputs: 0, Div: 4}, 2},
		{"outputs claimed of an empty loop", plan.Plan{SrcDT: f32, DstDT: f32, Outer: []plan.Loop{{Size: 0, SrcStride: 4, DstStride: 1}},
			Reduced: []plan.Loop{{Size: 4, SrcStride: 1}}, N: 4, Outputs: 1, Div: 4}, 0},
		{"long sum claimed without loops", plan.Plan{SrcDT: f32, DstDT: f32, N: 1 << 30, Outputs: 1, Div: 1}, 1},
		{"long loop claimed a short sum", plan.Plan{SrcDT: f32, DstDT: f32, Reduced: []plan.Loop{{Size: 1 << 20, SrcStride: 1}},
			N: 1, Outputs: 1, Div: 1 << 20}, 1},
	}
	for _, tc := range cases {
		forEachISA(t, func(t *testing.T) {
			k, err := Compile(&tc.pl)
			if err != nil {
				t.Fatalf("%s: Compile: %v", tc.name, err)
			}
			want := tc.pl
			if err := want.SetCounts(); err != nil {
				t.Fatal(err)
			}
			if k.pl.N != want.N || k.pl.Outputs != want.Outputs {
				t.Errorf("%s: kernel N %d Outputs %d, want %d and %d", tc.name, k.pl.N, k.pl.Outputs, want.N, want.Outputs)
			}
			for _, ph := range k.dec.phases {
				for _, s := range ph.segs {
					if sub := k.dec.plans[s.unit]; sub.N*sub.Outputs*4 > callBudget {
						t.Errorf("%s: a call reads %d elements: %s", tc.name, sub.N*sub.Outputs, sub)
					}
				}
			}
			srcBytes, err := k.pl.SrcBytes()
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, 4*tc.outs)
			if err := k.Run(ones(srcBytes/4), dst, nil); err != nil {
				t.Fatalf("%s: Run: %v", tc.name, err)
			}
			if !bytes.Equal(dst, ones(tc.outs)) {
				t.Errorf("%s: dst %v, want every mean 1", tc.name, dst)
			}
		})
	}
	overflow := &plan.Plan{SrcDT: f32, DstDT: f32, Reduced: []plan.Loop{{Size: 1 << 40}, {Size: 1 << 40}}, N: 1, Outputs: 1, Div: 1}
	if _, err := Compile(overflow); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("2^80 elements per output: %v, want InvalidArguments", err)
	}
}

// TestEmptyAndNaN covers a kept dim of size 0 (no outputs, Run does
// nothing even with empty buffers) and a reduced dim of size 0 (NaN).
func TestEmptyAndNaN(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	c := spec{dims: []int64{0, 5}, reduce: []bool{false, true}, sdt: f32t, ddt: f32t}.build(t, r)
	if err := c.compile(t).Run(nil, nil, nil); err != nil {
		t.Fatalf("empty dst: %v", err)
	}
	withBudget(t, 64)
	c = spec{dims: []int64{300, 0}, reduce: []bool{false, true}, sdt: dtypes.BF16, ddt: kerneltest.OutputDT(dtypes.BF16)}.build(t, r)
	dst := c.run(t)
	checkRef(t, c, dst, "reduced size 0")
}

// TestGCStress runs kernels from many goroutines while the GC is forced in
// a loop and the kernel cache is emptied over and over (so code is evicted
// and unmapped while runs are in flight and compiled again by the next
// ones); every result must stay right, and nothing may crash.
func TestGCStress(t *testing.T) {
	withBudget(t, 4096)
	r := rand.New(rand.NewPCG(13, 14))
	shapes := bigShapes()
	type prepared struct {
		c    *tcase
		k    *Kernel
		want []byte
	}
	var ps []prepared
	for _, i := range []int{0, 2, 4, 6} {
		c := shapes[i].s.build(t, r)
		k := c.compile(t)
		want := c.newDst()
		if err := k.Run(c.src, want, c.bins); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, prepared{c, k, want})
	}
	misses0 := GetCacheStats().Misses
	stop := make(chan struct{})
	var gcs sync.WaitGroup
	gcs.Add(1)
	go func() {
		defer gcs.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	gcs.Add(1)
	go func() {
		defer gcs.Done()
		for {
			select {
			case <-stop:
				return
			default:
				e, b := SetCacheCapacity(0, 0)
				SetCacheCapacity(e, b)
				time.Sleep(200 * time.Microsecond)
			}
		}
	}()
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				p := ps[(g+i)%len(ps)]
				dst := p.c.newDst()
				_ = make([]byte, 1<<16) // churn the heap
				if err := p.k.Run(p.c.src, dst, p.c.bins); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(dst, p.want) {
					errs <- fmt.Errorf("goroutine %d iteration %d: result changed", g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	gcs.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if GetCacheStats().Misses == misses0 {
		t.Error("no kernel was compiled again: the cache thrashing did not happen")
	}
}

// TestEmptyReductionsAtSmallBudgets compiles and runs empty reductions
// whose outputs exceed the call budget, with too few outputs per budget
// for ordinary tiles: they have no stages to cut into, so they take
// tiles of any width (a two-stage split would divide by their zero
// length). Sums and log-sum-exp, on every ISA and the interpreter.
func TestEmptyReductionsAtSmallBudgets(t *testing.T) {
	for _, red := range []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.LogSumExp} {
		for _, dims := range [][]int64{{50, 0}, {3, 50, 0}, {0, 7}} {
			reduce := make([]bool, len(dims))
			for i, d := range dims {
				reduce[i] = d == 0
			}
			c := spec{dims: dims, reduce: reduce, sdt: dtypes.F32, ddt: dtypes.F32}.build(t, rand.New(rand.NewPCG(1, 1)))
			c.p.Reduction = red
			checkAtSmallBudgets(t, c, fmt.Sprintf("%v %v", red, dims))
		}
	}
}

// checkAtSmallBudgets runs c at budgets of 16 and 64 bytes on every ISA
// of testISAs and checks it against the reference.
func checkAtSmallBudgets(t *testing.T, c *tcase, what string) {
	t.Helper()
	for _, isa := range testISAs() {
		for _, budget := range []int64{16, 64} {
			withBudget(t, budget)
			prev := SetMaxISA(isa)
			dst := c.run(t)
			SetMaxISA(prev)
			checkRef(t, c, dst, fmt.Sprintf("%s budget %d %s", what, budget, isa))
		}
	}
}

// TestPostOpPassAtSmallBudgets compiles and runs a post-op pass whose
// copy of the results into dst exceeds the call budget, with too few
// outputs per budget for ordinary tiles: a copy has no stages to cut
// into, so it takes tiles of any width (a two-stage split of it would
// index its missing reduced loops). On every ISA and the interpreter;
// GELUErf is taken away from the emitters (withoutTranscendental) so that
// the plan takes the pass.
func TestPostOpPassAtSmallBudgets(t *testing.T) {
	withoutTranscendental(t)
	c := spec{dims: []int64{50, 3}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
		post: []plan.PostOp{{Kind: ops.GELUErf}}}.build(t, rand.New(rand.NewPCG(3, 4)))
	c.p.Reduction = plan.AlgSum.Reduction(0, 0)
	checkAtSmallBudgets(t, c, "post-op pass")
}
