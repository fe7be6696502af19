package jit

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// transcendental lists the post-op kinds that the post-op pass tests
// take away from the emitters (withoutTranscendental), so that plans with
// them take the post-op pass: every kind has vector code now, GELUErf
// last, but the pass remains for emitters that lack one.
var transcendental = []ops.Kind{ops.GELUErf}

// withoutTranscendental makes the emitter, for the test, refuse every
// plan with a transcendental post-op and declare that it does not cover
// those kinds (as the emitters did before GELUErf had a program): the
// post-op pass then runs on the interpreter, its reduction on machine
// code, and the other kinds stay in the kernels.
func withoutTranscendental(t testing.TB) {
	lacks := func(k ops.Kind) bool { return slices.Contains(transcendental, k) }
	withEmitter(t, func(pl *plan.Plan, h kernelconf.Hints, isa ISA) (plan.Code, error) {
		for _, op := range pl.PostOps {
			if lacks(op.Kind) {
				return plan.Code{}, status.Errorf(status.Unimplemented, "test emitter: no %v", op.Kind)
			}
		}
		return emit(pl, h, isa)
	})
	withCoverage(t, func(isa ISA) kernelshape.Covers {
		c := coversOf(isa)
		has := c.PostOp
		c.PostOp = func(k ops.Kind) bool { return !lacks(k) && has(k) }
		return c
	})
}

// inKernel lists the transcendental post-op kinds the emitters apply in
// the reduction's own kernel, from package vfn's programs.
var inKernel = []ops.Kind{ops.Elu, ops.GELUTanh, ops.Mish, ops.Sigmoid, ops.SoftPlus, ops.Tanh}

// forEachJITISA runs f under every JIT ISA this machine has under
// GDNN_MAX_CPU_ISA (the cap set to it), AVX-512 alone under
// GDNN_TEST_REQUIRE_ISA (as testISAs); the post-op pass exists only
// where there is machine code.
func forEachJITISA(t *testing.T, f func(t *testing.T, isa ISA)) {
	requireJIT(t)
	isas := []ISA{AVX512, AVX2, NEON}
	if req, _ := kerneltest.Required(); req != "" {
		isas = isas[:1]
	}
	for _, isa := range isas {
		if !supported(isa) || !underEnvCap(isa) {
			continue
		}
		t.Run(isa.String(), func(t *testing.T) {
			prev := SetMaxISA(isa)
			defer SetMaxISA(prev)
			f(t, isa)
		})
	}
}

// postOp returns a unary post-op of kind k with the parameters the tests
// use (Elu's alpha, SoftPlus's beta).
func postOp(k ops.Kind) plan.PostOp {
	switch k {
	case ops.Elu:
		return plan.PostOp{Kind: k, Alpha: 0.7}
	case ops.SoftPlus:
		return plan.PostOp{Kind: k, Beta: 1.5}
	}
	return plan.PostOp{Kind: k}
}

// postPassCase is a problem that must take the post-op pass, and the
// split its reduction must get under a 4 KiB budget. parallel says the
// post-op pass itself is big enough to go to the worker pool.
type postPassCase struct {
	name     string
	s        spec
	split    string
	parallel bool
}

// postPassCases covers every transcendental kind alone (dst types
// cycling through f32, bf16, f16; src values signed for every other kind
// so that both branches of Elu, GELU, Sigmoid... run), mixed with
// in-kernel and binary post-ops (broadcast operands), strided and
// permuted dsts, a scalar output, an empty reduction, tiles and two-stage
// reductions.
func postPassCases() []postPassCase {
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	dts := [][2]dtypes.DataType{{f32, f32}, {bf16, bf16}, {f16, f16}, {bf16, f32}, {f16, f32}}
	var cs []postPassCase
	for i, k := range transcendental {
		s := spec{dims: []int64{37, 300}, reduce: []bool{false, true}, sdt: dts[i%len(dts)][0], ddt: dts[i%len(dts)][1],
			post: []plan.PostOp{postOp(k)}}
		if i%2 == 1 {
			s.lo, s.hi = -1, 1
		}
		cs = append(cs, postPassCase{k.String() + " alone", s, "blocks", false})
	}
	return append(cs,
		postPassCase{"many outputs", spec{dims: []int64{3, 24000, 4}, reduce: []bool{false, false, true}, sdt: bf16, ddt: bf16,
			lo: -1, hi: 1, post: []plan.PostOp{postOp(ops.GELUErf), {Kind: ops.Add, BinDT: f32}},
			binBcast: [][]bool{{true, false, false}}}, "blocks", true},
		postPassCase{"mixed row", spec{dims: []int64{20, 513}, reduce: []bool{false, true}, sdt: bf16, ddt: bf16,
			post: []plan.PostOp{{Kind: ops.Square}, postOp(ops.GELUErf), {Kind: ops.Add, BinDT: f16},
				postOp(ops.Sigmoid), {Kind: ops.Multiply, BinDT: f32}},
			binBcast: [][]bool{{true, true}, {false, false}}}, "blocks", false},
		postPassCase{"mixed nhwc strided dst", spec{dims: []int64{4, 7, 7, 300}, reduce: []bool{false, true, true, false},
			sdt: f16, ddt: f16, lo: -1, hi: 1, dorder: []int{3, 1, 2, 0}, dpad: 3,
			post:     []plan.PostOp{postOp(ops.Mish), {Kind: ops.Maximum, BinDT: bf16}, postOp(ops.GELUErf), {Kind: ops.Abs}},
			binBcast: [][]bool{{true, false, false, false}}}, "tiles", false},
		postPassCase{"permuted src and dst", spec{dims: []int64{9, 40, 11}, reduce: []bool{false, true, false}, sdt: f32, ddt: f32,
			order: []int{2, 0, 1}, pad: 1, dorder: []int{2, 0, 1}, dpad: 2,
			post:     []plan.PostOp{postOp(ops.GELUErf), {Kind: ops.Subtract, BinDT: f32}, {Kind: ops.ReLU}},
			binBcast: [][]bool{{false, false, true}}}, "blocks", false},
		postPassCase{"scalar output", spec{dims: []int64{400}, reduce: []bool{true}, sdt: f32, ddt: f16,
			post: []plan.PostOp{postOp(ops.GELUErf), postOp(ops.Sigmoid), postOp(ops.Log)}}, "single", false},
		postPassCase{"empty reduction", spec{dims: []int64{5, 0}, reduce: []bool{false, true}, sdt: bf16, ddt: bf16,
			post: []plan.PostOp{postOp(ops.GELUErf)}}, "single", false},
		postPassCase{"tiles column", spec{dims: []int64{64, 4099}, reduce: []bool{true, false}, sdt: f32, ddt: f32, lo: -1, hi: 1,
			post: []plan.PostOp{postOp(ops.Tanh), postOp(ops.GELUErf), {Kind: ops.Add, BinDT: f16}}, binBcast: [][]bool{{false, false}}}, "tiles", false},
		postPassCase{"2stage full", spec{dims: []int64{50000}, reduce: []bool{true}, sdt: f32, ddt: bf16, lo: -1, hi: 1,
			post: []plan.PostOp{postOp(ops.GELUErf)}}, "2stage", false},
		postPassCase{"2stage rows", spec{dims: []int64{3, 20000}, reduce: []bool{false, true}, sdt: bf16, ddt: f32, lo: -1, hi: 1,
			post:     []plan.PostOp{{Kind: ops.Multiply, BinDT: bf16}, postOp(ops.Elu), postOp(ops.GELUErf), postOp(ops.SoftPlus)},
			binBcast: [][]bool{{false, true}}}, "2stage", false},
		postPassCase{"2stage inner", spec{dims: []int64{3000, 70}, reduce: []bool{true, false}, sdt: f16, ddt: f16,
			post:     []plan.PostOp{postOp(ops.GELUErf), {Kind: ops.Add, BinDT: f16}},
			binBcast: [][]bool{{false, false}}}, "2stage", false},
	)
}

// TestPostPass runs every post-op pass case under each JIT ISA: the kernel
// must be machine code with the post-ops in a pass of their own, match
// the float64 reference and the interpreter, write nothing outside its
// outputs, and give identical bytes with 1, 2 and 7 threads.
func TestPostPass(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		withoutTranscendental(t)
		withBudget(t, 4096)
		r := rand.New(rand.NewPCG(51, 52))
		for _, pc := range postPassCases() {
			t.Run(pc.name, func(t *testing.T) {
				c := pc.s.build(t, r)
				k := c.compile(t)
				if want := "jit:" + isa.String(); k.Impl() != want {
					t.Fatalf("Impl %s, want %s (why: %s)", k.Impl(), want, k.Why())
				}
				if !k.dec.postpass || k.dec.split != pc.split {
					t.Fatalf("schedule %s, want split %s with the post-op pass", k.schedule(), pc.split)
				}
				if last := k.dec.phases[len(k.dec.phases)-1]; pc.parallel && (last.tasks < 7 || shareThreads(last.srcBytes, 7) < 2) {
					t.Fatalf("the post-op pass (%d calls, %d bytes) would run inline: the thread test would prove nothing",
						last.tasks, last.srcBytes)
				}
				if !strings.Contains(k.Why(), "post-op pass runs on the interpreter") {
					t.Errorf("Why %q does not name the post-op pass", k.Why())
				}
				first := checkPostPassRuns(t, c, k)
				checkRef(t, c, first, pc.name)
				want := c.newDst()
				if err := interp.Run(k.Plan(), c.src, want, c.bins); err != nil {
					t.Fatalf("interp: %v", err)
				}
				checkClose(t, c, first, want)
			})
		}
	})
}

// TestPostOpsInKernel runs each kind of inKernel as a row mean's post-op,
// alone and after a binary operand, over every dst type and signed
// values, under each JIT ISA: the post-op must run in the reduction's own
// kernel (no post-op pass), match the float64 reference and the
// interpreter, write nothing outside its outputs, and give identical
// bytes with 1, 2 and 7 threads.
func TestPostOpsInKernel(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		r := rand.New(rand.NewPCG(53, 54))
		dts := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F16},
			{dtypes.BF16, dtypes.F32}, {dtypes.F16, dtypes.F32}}
		for i, k := range inKernel {
			for j, dt := range dts {
				s := spec{dims: []int64{37, 300}, reduce: []bool{false, true}, sdt: dt[0], ddt: kerneltest.OutputDT(dt[1]),
					lo: -3, hi: 3, post: []plan.PostOp{postOp(k)}}
				if (i+j)%2 == 1 {
					s.post = []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32}, postOp(k)}
					s.binBcast = [][]bool{{false, true}}
				}
				c := s.build(t, r)
				k := c.compile(t)
				if want := "jit:" + isa.String(); k.Impl() != want || k.dec.postpass {
					t.Fatalf("%v: Impl %s, schedule %s, want %s with no post-op pass (why: %s)", s.post, k.Impl(),
						k.schedule(), want, k.Why())
				}
				first := checkPostPassRuns(t, c, k)
				checkRef(t, c, first, k.Plan().String())
				want := c.newDst()
				if err := interp.Run(k.Plan(), c.src, want, c.bins); err != nil {
					t.Fatalf("interp: %v", err)
				}
				checkClose(t, c, first, want)
			}
		}
	})
}

// checkPostPassRuns runs k with 1, 2 and 7 threads, twice each, into a dst
// followed by guard bytes, and returns the result after checking that
// every run gave the same bytes and left the guard alone.
func checkPostPassRuns(t *testing.T, c *tcase, k *Kernel) []byte {
	t.Helper()
	const guard = 64
	var first []byte
	for _, n := range []int{1, 2, 7} {
		withThreads(t, n)
		for rep := range 2 {
			buf := c.newDst()
			buf = append(buf, bytes.Repeat([]byte{0x7f}, guard)...)
			dst := buf[:c.dstN:c.dstN]
			if err := k.Run(c.src, dst, c.bins); err != nil {
				t.Fatalf("threads %d: %v", n, err)
			}
			for i, b := range buf[c.dstN:] {
				if b != 0x7f {
					t.Fatalf("threads %d: byte %d past the end of dst was written", n, i)
				}
			}
			if first == nil {
				first = dst
			} else if !bytes.Equal(dst, first) {
				t.Fatalf("threads %d rep %d: bytes differ from the 1-thread run", n, rep)
			}
		}
	}
	return first
}

// checkClose compares every output of got with want (the interpreter's).
// The post-ops are the same f32 functions on both sides; only the mean
// differs (the JIT sums in f32, the interpreter in float64), by a few f32
// ulps, which a post-op carries into its result scaled by its condition
// number. So the bound is the dst type's rounding (rtol: one bf16 or f16
// ulp may flip) plus 2e-5 relative and 1e-6 absolute for the f32 mean.
func checkClose(t *testing.T, c *tcase, got, want []byte) {
	t.Helper()
	dt := c.p.DstDT
	bad := 0
	for off := range reference(c) {
		g, w := oracle.Get(dt, got, off), oracle.Get(dt, want, off)
		if math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		if math.Abs(g-w) > (rtol(dt)+2e-5)*math.Abs(w)+1e-6 {
			if bad < 5 {
				t.Errorf("dst[%d] = %g, interpreter %g", off, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d outputs differ from the interpreter", bad)
	}
}

// refuseWithPostOps is the real emitter, except that it refuses every
// plan with post-ops: with it the rule shows for any post-op kind, not
// only those the emitters happen to lack.
func refuseWithPostOps(pl *plan.Plan, h kernelconf.Hints, isa ISA) (plan.Code, error) {
	if len(pl.PostOps) > 0 {
		return plan.Code{}, status.Errorf(status.Unimplemented, "test emitter: no post-ops")
	}
	return emit(pl, h, isa)
}

// coverNoPostOps is what the real emitters declare, less every post-op:
// the declaration refuseWithPostOps goes with.
func coverNoPostOps(isa ISA) kernelshape.Covers {
	c := coversOf(isa)
	c.PostOp = func(ops.Kind) bool { return false }
	return c
}

// TestPostPassRule checks when the post-op pass is used: only when the
// emitter declares that it does not cover the plan but covers it without
// its post-ops.
func TestPostPassRule(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		r := rand.New(rand.NewPCG(53, 54))
		inKernel := spec{dims: []int64{30, 70}, reduce: []bool{false, true}, sdt: dtypes.BF16, ddt: dtypes.BF16,
			post:     []plan.PostOp{{Kind: ops.ReLU}, {Kind: ops.Add, BinDT: dtypes.F32}},
			binBcast: [][]bool{{false, false}}}.build(t, r)
		gelu := spec{dims: []int64{30, 70}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
			post: []plan.PostOp{postOp(ops.GELUErf)}}.build(t, r)

		t.Run("covered post-ops", func(t *testing.T) {
			freshCache(t)
			k := inKernel.compile(t)
			if k.dec.postpass || k.Impl() != "jit:"+isa.String() || k.Why() != "" {
				t.Errorf("%s, Impl %s, Why %q: want one kernel with its post-ops", k.schedule(), k.Impl(), k.Why())
			}
		})
		t.Run("emitter refuses any post-op", func(t *testing.T) {
			withEmitter(t, refuseWithPostOps)
			withCoverage(t, coverNoPostOps)
			k := inKernel.compile(t)
			if !k.dec.postpass || k.Impl() != "jit:"+isa.String() {
				t.Fatalf("%s, Impl %s: want the post-op pass on machine code", k.schedule(), k.Impl())
			}
			if !strings.Contains(k.Why(), "test emitter: no post-ops") {
				t.Errorf("Why %q does not give the emitter's reason", k.Why())
			}
			checkRef(t, inKernel, checkPostPassRuns(t, inKernel, k), "ReLU, Add in a post-op pass")
		})
		t.Run("emitter refuses everything", func(t *testing.T) {
			withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) {
				return plan.Code{}, status.Errorf(status.Unimplemented, "test emitter covers no plan")
			})
			withCoverage(t, func(ISA) kernelshape.Covers { return coversOf(None) })
			k := gelu.compile(t)
			if k.dec.postpass || k.Impl() != "interp" {
				t.Errorf("%s, Impl %s: want the whole plan on the interpreter", k.schedule(), k.Impl())
			}
			checkRef(t, gelu, checkPostPassRuns(t, gelu, k), "GELU on the interpreter")
		})
		t.Run("ISA capped to none", func(t *testing.T) {
			freshCache(t)
			prev := SetMaxISA(None)
			defer SetMaxISA(prev)
			k := gelu.compile(t)
			if k.dec.postpass || k.Impl() != "interp" {
				t.Errorf("%s, Impl %s: want the whole plan on the interpreter", k.schedule(), k.Impl())
			}
		})
	})
}

// TestPostPassScratchBound checks the size arithmetic of the means
// scratch on plans with up to 2^61 outputs: up to maxScratchBytes the
// scratch holds one f32 per output; past it the post-op pass is not used,
// also where the f32 bytes of the means would overflow int64 (a bf16 dst
// of 2^61 elements fits in 2^62 bytes). Nothing is run, only scheduled.
func TestPostPassScratchBound(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		withoutTranscendental(t)
		mk := func(outer, inner int64, ddt dtypes.DataType) *plan.Plan {
			return &plan.Plan{SrcDT: dtypes.F32, DstDT: ddt,
				Outer:    []plan.Loop{{Size: outer, DstStride: inner}},
				Reduced:  []plan.Loop{{Size: 2, SrcStride: 1}},
				Inner:    plan.Loop{Size: inner, DstStride: 1},
				HasInner: true,
				PostOps:  []plan.PostOp{postOp(ops.GELUErf)}, N: 2, Outputs: outer * inner, Div: 2}
		}
		for _, tc := range []struct {
			outer, inner int64
			ddt          dtypes.DataType
			want         bool
		}{
			{1 << 10, 1 << 18, dtypes.F32, true},       // exactly maxScratchBytes of means
			{1<<10 + 1, 1 << 18, dtypes.F32, false},    // just over
			{1 << 40, 1 << 21, dtypes.BF16, false},     // the f32 bytes overflow int64
			{3, 5, dtypes.F32, true},                   // small
			{maxScratchBytes / 4, 1, dtypes.F32, true}, // all in Outer
		} {
			pl := mk(tc.outer, tc.inner, tc.ddt)
			if err := pl.Validate(); err != nil {
				t.Fatalf("%v: %v", pl, err)
			}
			d, err := decompose(pl, isa)
			if err != nil {
				t.Fatalf("decompose %v: %v", pl, err)
			}
			if d.postpass != tc.want {
				t.Errorf("outputs %d x %d: post-op pass %v, want %v", tc.outer, tc.inner, d.postpass, tc.want)
				continue
			}
			if tc.want && d.scratch[0] != tc.outer*tc.inner*4 {
				t.Errorf("outputs %d x %d: means scratch %d bytes, want %d", tc.outer, tc.inner, d.scratch[0], tc.outer*tc.inner*4)
			}
		}
	})
}

// TestPostPassVerbose checks that the compile line names the post-op pass
// in the schedule and says that it runs on the interpreter.
func TestPostPassVerbose(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		withoutTranscendental(t)
		buf := captureVerbose(t, 1)
		withBudget(t, 4096)
		c := spec{dims: []int64{40, 300}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
			post: []plan.PostOp{postOp(ops.GELUErf)}}.build(t, rand.New(rand.NewPCG(55, 56)))
		c.compile(t)
		line := buf.String()
		for _, want := range []string{",jit:" + isa.String() + ",", "split:blocks+postpass ",
			",fallback: post-op pass runs on the interpreter"} {
			if !strings.Contains(line, want) {
				t.Errorf("compile line %q lacks %q", line, want)
			}
		}
	})
}

// TestPostPassErrorsNameTheValue keeps Run's buffer checks for kernels
// with a post-op pass: the scratch is internal, the caller's buffers are
// still checked against the whole plan.
func TestPostPassErrorsNameTheValue(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		withoutTranscendental(t)
		c := spec{dims: []int64{4, 8}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.BF16,
			post: []plan.PostOp{postOp(ops.GELUErf), {Kind: ops.Add, BinDT: dtypes.F32}}}.build(t, rand.New(rand.NewPCG(57, 58)))
		k := c.compile(t)
		if !k.dec.postpass {
			t.Fatalf("%s: want the post-op pass", k.schedule())
		}
		err := k.Run(c.src, c.newDst()[:7], c.bins)
		if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "dst buffer holds 7 bytes, the plan writes 8") {
			t.Errorf("short dst: %v", err)
		}
		err = k.Run(c.src, c.newDst(), [][]byte{c.bins[0][:3]})
		if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "binary operand 0 holds 3 bytes") {
			t.Errorf("short operand: %v", err)
		}
	})
}
