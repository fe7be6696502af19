package jit

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// inPlaceSpec draws a problem whose post-op chain holds an Add of a full,
// dst-shaped operand (the sum post-op) at a random position among up to
// two other post-ops (a broadcast binary, an eltwise, or Sigmoid, which
// the emitters lack, so that the post-op pass runs), with a random dst
// layout. sumAt is the index of the Add among the binary post-ops.
func inPlaceSpec(r *rand.Rand) (s spec, sumAt int) {
	for {
		s = randomSpec(r)
		if len(s.dims) > 0 {
			break
		}
	}
	if r.IntN(3) == 0 {
		s.ddt = kerneltest.OutputDT([]dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32}[r.IntN(3)])
	}
	rank := len(s.dims)
	s.dorder = r.Perm(rank)
	if r.IntN(3) == 0 {
		s.dpad = int64(1 + r.IntN(2))
	}
	s.post, s.binBcast = nil, nil
	others := []plan.PostOp{{Kind: ops.ReLU}, {Kind: ops.Sigmoid}, {Kind: ops.Multiply, BinDT: dtypes.F32}, {Kind: ops.Square}}
	n := r.IntN(3)
	pos := r.IntN(n + 1)
	sumAt = -1
	nb := 0
	for i := range n + 1 {
		op := others[r.IntN(len(others))]
		bc := make([]bool, rank)
		if i == pos {
			// The sum's operand is read with the dst's type, or another
			// type of the same size.
			op = plan.PostOp{Kind: ops.Add, BinDT: s.ddt}
			if r.IntN(2) == 0 {
				op.BinDT = sameSize[s.ddt]
			}
			sumAt = nb
		} else {
			for j := range bc {
				bc[j] = r.IntN(2) == 0
			}
		}
		if op.Kind.IsBinary() {
			s.binBcast = append(s.binBcast, bc)
			nb++
		}
		s.post = append(s.post, op)
	}
	return s, sumAt
}

// sameSize maps each dst type to another operand type of its size.
var sameSize = map[dtypes.DataType]dtypes.DataType{
	dtypes.F32: dtypes.S32, dtypes.S32: dtypes.F32, dtypes.BF16: dtypes.F16, dtypes.F16: dtypes.BF16,
	dtypes.S8: dtypes.U8, dtypes.U8: dtypes.S8,
}

// withDstOperand gives binary operand i of c the dst's strides (where
// the dst has them; reduced dims address neither) and a buffer the size
// of dst, filled with values of its type.
func withDstOperand(c *tcase, i int, r *rand.Rand) {
	dt, j := binDT(c.p, i)
	op := &c.p.PostOps[j]
	op.BinStrides = append([]int64(nil), c.p.DstStrides...)
	for d, red := range c.p.Reduce {
		if red {
			op.BinStrides[d] = 0
		}
	}
	b := make([]byte, c.dstN)
	for k := int64(0); k < c.dstN/esz(dt); k++ {
		dtypes.StoreF32(dt, b, k, float32(r.IntN(17)-8)/4)
	}
	c.bins[i] = b
}

// TestInPlaceOperand runs random problems, every reduction kind, with the
// sum post-op's operand given as the dst buffer itself, on every ISA the
// machine has and the interpreter, under budgets that make every
// schedule (blocks, tiles, two stages, the post-op pass, log-sum-exp's
// phases) and with 1 and 2 threads: the results must be bit-identical to
// the same kernel given a copy of the operand, which must match the
// float64 oracle (internal/oracle).
func TestInPlaceOperand(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(24, 3))
		inPlaceRuns := 0
		for _, budget := range []int64{1 << 20, 256, 64} {
			withBudget(t, budget)
			for i := range 160 {
				s, sumAt := inPlaceSpec(r)
				c := s.build(t, r)
				c.p.Reduction = kindReductions[r.IntN(len(kindReductions))]
				if c.p.Reduction.Combine == plan.CombineMul {
					for k := int64(0); k < int64(len(c.src))/esz(s.sdt); k++ {
						dtypes.StoreF32(s.sdt, c.src, k, 0.97+0.06*r.Float32())
					}
				}
				if c.dstN == 0 {
					continue
				}
				withDstOperand(c, sumAt, r)
				if err := c.p.Validate(); err != nil {
					t.Fatalf("case %d: %v", i, err)
				}
				k := c.compile(t)
				what := fmt.Sprintf("budget %d case %d %v dims %v axes %v %v->%v post %v", budget, i, c.p.Reduction, s.dims, s.reduce, s.sdt, s.ddt, s.post)
				if !k.InPlace(sumAt) {
					t.Fatalf("%s: the dst-shaped operand %d is not in place (%s)", what, sumAt, k.Plan())
				}
				// Padding between dst elements is never written: both runs
				// start from the operand's bytes.
				want := append([]byte(nil), c.bins[sumAt]...)
				if err := k.Run(c.src, want, c.bins); err != nil {
					t.Fatalf("%s: out of place: %v", what, err)
				}
				// Out of place against the float64 oracle (on the
				// interpreter, ISA none, too).
				checkRef(t, c, c.run(t), what)
				prev := c.bins[sumAt]
				for _, threads := range []int{1, 2} {
					withThreads(t, threads)
					dst := append([]byte(nil), prev...)
					bins := append([][]byte(nil), c.bins...)
					bins[sumAt] = dst
					if err := k.Run(c.src, dst, bins); err != nil {
						t.Fatalf("%s: in place: %v", what, err)
					}
					if !bytes.Equal(dst, want) {
						t.Fatalf("%s, %d threads: in place differs from out of place (plan %s, %s)\n got %x\nwant %x", what, threads, k.Plan(), k.schedule(), dst, want)
					}
					inPlaceRuns++
				}
			}
		}
		if inPlaceRuns < 500 {
			t.Fatalf("only %d in-place runs", inPlaceRuns)
		}
	})
}

// TestInPlaceRefusals: memory shared with dst other than an operand that
// is dst itself is an InvalidArguments error, and nothing runs.
func TestInPlaceRefusals(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	mk := func(ops ...plan.PostOp) *tcase {
		s := spec{dims: []int64{8, 32}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32, post: ops,
			binBcast: [][]bool{{false, false}}}
		return s.build(t, r)
	}
	// A full operand of the dst's type: in place allowed.
	c := mk(plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32})
	k := c.compile(t)
	if !k.InPlace(0) {
		t.Fatal("a full f32 operand of an f32 dst is not in place")
	}
	if k.InPlace(1) || k.InPlace(-1) || (*Kernel)(nil).InPlace(0) {
		t.Fatal("InPlace of a missing operand")
	}
	big := make([]byte, 2*c.dstN+64)
	cases := []struct {
		name           string
		src, dst, bin0 []byte
	}{
		{"operand shifted by one element", c.src, big[:c.dstN], big[4 : 4+c.dstN]},
		{"operand ending inside dst", c.src, big[16 : 16+c.dstN], big[:c.dstN]},
		{"src overlapping dst", big, big[8 : 8+c.dstN], c.bins[0]},
	}
	for _, tc := range cases {
		err := k.Run(tc.src, tc.dst, [][]byte{tc.bin0})
		if !errors.Is(err, status.InvalidArguments) {
			t.Errorf("%s: got %v, want InvalidArguments", tc.name, err)
		}
	}

	// A broadcast operand (per row), or one of another size, may not be dst.
	for _, tc := range []struct {
		name string
		s    spec
	}{
		{"broadcast operand", spec{dims: []int64{8, 32}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
			post: []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}}, binBcast: [][]bool{{true, false}}}},
		{"bf16 operand of an f32 dst", spec{dims: []int64{8, 32}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
			post: []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.BF16}}, binBcast: [][]bool{{false, false}}}},
	} {
		c := tc.s.build(t, r)
		k := c.compile(t)
		if k.InPlace(0) {
			t.Fatalf("%s: InPlace", tc.name)
		}
		dst := make([]byte, max(c.dstN, int64(len(c.bins[0]))))
		err := k.Run(c.src, dst, [][]byte{dst[:len(c.bins[0])]})
		if !errors.Is(err, status.InvalidArguments) {
			t.Errorf("%s: got %v, want InvalidArguments", tc.name, err)
		}
	}
}

// TestSixBinaries runs plans with plan.MaxBinary binary post-ops (an Lp
// norm's eps, a sum, a linear's two scalars and an add in benchdnn's
// chains): on a JIT ISA the kernel applies them all, with no post-op
// pass; on every ISA the results match the reference, with one operand
// given as dst itself.
func TestSixBinaries(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(6, 6))
		for _, dims := range [][]int64{{16, 300}, {300, 16}, {5, 7, 9}} {
			s := spec{dims: dims, reduce: make([]bool, len(dims)), sdt: dtypes.F32, ddt: dtypes.F32, lo: -1, hi: 1}
			s.reduce[1] = true
			kinds := []ops.Kind{ops.Maximum, ops.Add, ops.Multiply, ops.Add, ops.Subtract, ops.Minimum}
			for i, k := range kinds {
				s.post = append(s.post, plan.PostOp{Kind: k, BinDT: dtypes.F32})
				bc := make([]bool, len(dims))
				for j := range bc {
					bc[j] = i != 1 && r.IntN(2) == 0
				}
				s.binBcast = append(s.binBcast, bc)
			}
			c := s.build(t, r)
			withDstOperand(c, 1, r)
			k := c.compile(t)
			if EffectiveISA() != None && (k.Impl() == "interp" || strings.Contains(k.Why(), "post-op pass")) {
				t.Errorf("%v: impl %s, why %q; want machine code that applies the post-ops", dims, k.Impl(), k.Why())
			}
			want := c.newDst()
			if err := interp.RunProblem(c.p, c.src, want, c.bins); err != nil {
				t.Fatal(err)
			}
			checkRef(t, c, want, fmt.Sprint(dims, " interp"))
			checkRef(t, c, c.run(t), fmt.Sprint(dims))
			dst := append([]byte(nil), c.bins[1]...)
			bins := append([][]byte(nil), c.bins...)
			bins[1] = dst
			if err := k.Run(c.src, dst, bins); err != nil {
				t.Fatal(err)
			}
			checkRef(t, c, dst, fmt.Sprint(dims, " in place"))
		}
	})
}

// TestSixBinariesDeep runs plans whose six operands and loop nests need
// more general registers than amd64 shares between them
// (kernelshape.RegistersNeeded): there the reduction stays machine code
// and the post-ops run in a post-op pass, machine code too; NEON holds
// them in one kernel. One plan is a blocked layout's (4 outer loops,
// Inner and 2 reduced) whose one kernel would run out of counters on
// amd64; the sums of the others are long enough to be cut. Every ISA
// matches the reference, bit-identically at 1 and 2 threads.
func TestSixBinariesDeep(t *testing.T) {
	kinds := []ops.Kind{ops.Add, ops.Multiply, ops.Add, ops.Subtract, ops.Maximum, ops.Minimum}
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(6, 7))
		cases := []*tcase{blockedSixOperands(t, r, kinds)}
		for _, s := range []spec{
			{dims: []int64{8, 2, 6, 3, 4, 157}, reduce: []bool{false, true, false, true, false, false}, order: []int{3, 0, 4, 1, 5, 2}},
			{dims: []int64{4, 40, 6, 30, 4, 37}, reduce: []bool{false, true, false, true, false, false}, pad: 3, dorder: []int{3, 2, 1, 0, 4, 5}},
		} {
			s.sdt, s.ddt, s.lo, s.hi = dtypes.F32, dtypes.BF16, -1, 1
			for i, k := range kinds {
				s.post = append(s.post, plan.PostOp{Kind: k, BinDT: dtypes.F32})
				bc := make([]bool, len(s.dims))
				for j := range bc {
					bc[j] = (i+j)%3 == 0
				}
				s.binBcast = append(s.binBcast, bc)
			}
			cases = append(cases, s.build(t, r))
		}
		for _, c := range cases {
			k := c.compile(t)
			name := fmt.Sprint(c.p.Dims, " ", k.schedule())
			if isa := EffectiveISA(); isa != None {
				if k.Impl() == "interp" || k.Why() != "" {
					t.Errorf("%s: impl %s, why %q; want machine code throughout", name, k.Impl(), k.Why())
				}
				if post := strings.Contains(k.schedule(), "postpass"); post != (isa != NEON) {
					t.Errorf("%s: post-op pass %v on %s", name, post, isa)
				}
			}
			one := c.run(t)
			checkRef(t, c, one, name)
			withThreads(t, 2)
			if two := c.run(t); !bytes.Equal(one, two) {
				t.Errorf("%s: 2 threads differ from 1", name)
			}
			withThreads(t, 1)
		}
	})
}

// blockedSixOperands is a mean of 8x32x8x16x32 over dims 2 and 4 with
// src in benchdnn's aBcde8b layout and dst in aBcde16b, followed by the
// binary post-ops kinds of f32 operands broadcast per dim 0, per channel,
// per dims 2, 3 and 0-1, and per tensor.
func blockedSixOperands(t *testing.T, r *rand.Rand, kinds []ops.Kind) *tcase {
	t.Helper()
	// Dims: n, the channel's block of 16, its half of the block, d,
	// the channel within the half, h, w.
	p := &plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims:       []int64{8, 2, 2, 8, 8, 16, 32},
		SrcStrides: []int64{131072, 65536, 32768, 4096, 1, 256, 8},
		Reduce:     []bool{false, false, false, true, false, false, true},
		DstStrides: []int64{512, 256, 8, 0, 1, 16, 0}}
	for i, k := range kinds {
		bs := [][]int64{
			{1, 0, 0, 0, 0, 0, 0},   // per dim 0
			{0, 16, 8, 0, 1, 0, 0},  // per channel
			{0, 0, 0, 0, 0, 0, 0},   // dim 2 is reduced: one value
			{0, 0, 0, 0, 0, 1, 0},   // per dim 3
			{32, 16, 8, 0, 1, 0, 0}, // per dims 0-1
			{0, 0, 0, 0, 0, 0, 0},   // per tensor
		}[i]
		p.PostOps = append(p.PostOps, plan.PostOp{Kind: k, BinDT: dtypes.F32, BinStrides: bs})
	}
	sb, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	db, _ := p.DstBytes()
	c := &tcase{p: p, src: make([]byte, sb), dstN: db}
	for i := int64(0); i < sb/4; i++ {
		dtypes.StoreF32(dtypes.F32, c.src, i, 2*r.Float32()-1)
	}
	for i := range kinds {
		bb, _ := p.BinBytes(i)
		b := make([]byte, bb)
		for j := int64(0); j < bb/4; j++ {
			dtypes.StoreF32(dtypes.F32, b, j, operandValue(dtypes.F32, dtypes.F32, r))
		}
		c.bins = append(c.bins, b)
	}
	return c
}

// TestSumIsOnePass: a reduction followed by an Add of a dst-shaped
// operand (the sum post-op) compiles to one phase of calls of one
// kernel that carries the Add: the operand is read in the reduction's own
// pass, before each store, with no pass over dst before or after.
func TestSumIsOnePass(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 24))
		for _, s := range []spec{
			{dims: []int64{64, 300}, reduce: []bool{false, true}},
			{dims: []int64{300, 64}, reduce: []bool{true, false}},
			{dims: []int64{8, 50, 16}, reduce: []bool{false, true, false}, sdt: dtypes.BF16},
		} {
			if s.sdt == dtypes.Undef {
				s.sdt = dtypes.F32
			}
			s.ddt = s.sdt
			s.post = []plan.PostOp{{Kind: ops.Add, BinDT: s.ddt}, {Kind: ops.ReLU}}
			s.binBcast = [][]bool{make([]bool, len(s.dims))}
			c := s.build(t, r)
			withDstOperand(c, 0, r)
			k := c.compile(t)
			if !k.InPlace(0) || len(k.dec.phases) != 1 || len(k.units) != 1 {
				t.Fatalf("%v: in place %v, %d phases, %d kernels; want one phase of one kernel", s.dims, k.InPlace(0), len(k.dec.phases), len(k.units))
			}
			if post := k.units[0].pl.PostOps; len(post) != 2 || post[0].Kind != ops.Add {
				t.Fatalf("%v: the kernel's post-ops are %v, want the Add and the ReLU", s.dims, post)
			}
			if EffectiveISA() != None && k.Impl() == "interp" {
				t.Errorf("%v: runs on the interpreter: %s", s.dims, k.Why())
			}
		}
	})
}
