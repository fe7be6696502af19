package blocked

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/layout"
)

// tagsFor are the layouts the tests draw from for a rank: plain ones and
// every blocked family of oneDNN's reduction batch files.
func tagsFor(rank int) []string {
	tags := []string{"abx", "axb"}
	if rank >= 2 {
		tags = append(tags, "aBx8b", "aBx16b", "aBx32b", "ABx16a16b", "ABx32a32b", "ABx32a16b", "aBx4b")
	}
	return tags
}

// isas are the instruction sets this machine can run, the interpreter
// included.
func isas() []jit.ISA {
	var out []jit.ISA
	for _, i := range []jit.ISA{jit.None, jit.AVX2, jit.AVX512, jit.NEON} {
		prev := jit.SetMaxISA(i)
		if jit.EffectiveISA() == i {
			out = append(out, i)
		}
		jit.SetMaxISA(prev)
	}
	return out
}

// reductions: the mean and every kind the backends' tests use.
func reductions() []plan.Reduction {
	return append([]plan.Reduction{plan.AlgMean.Reduction(0, 0)}, oracle.Reductions()...)
}

// tensor is a buffer in a layout with its Desc.
type tensor struct {
	d   layout.Desc
	dt  dtypes.DataType
	buf []byte
}

func newTensor(t *testing.T, tag string, dims []int64, dt dtypes.DataType) tensor {
	t.Helper()
	l, err := layout.Parse(tag, len(dims))
	if err != nil {
		t.Fatalf("Parse(%q, %d): %v", tag, len(dims), err)
	}
	d, err := l.Desc(dims)
	if err != nil {
		t.Fatal(err)
	}
	return tensor{d: d, dt: dt, buf: make([]byte, d.Span()*int64(dt.Size()))}
}

// forEach calls f with every logical index of dims.
func forEach(dims []int64, f func(idx []int64)) {
	for _, d := range dims {
		if d == 0 {
			return
		}
	}
	idx := make([]int64, len(dims))
	for {
		f(idx)
		i := len(dims) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// fillPadding writes v over every position of t (padding and logical);
// the logical elements are filled afterwards.
func fillAll(t tensor, v float64) {
	for i := int64(0); i < int64(len(t.buf))/int64(t.dt.Size()); i++ {
		oracle.Put(t.dt, t.buf, i, v)
	}
}

// problem is one random case.
type problem struct {
	p          plan.Problem
	stag, dtag string
	keep       bool
}

func (c problem) String() string {
	return fmt.Sprintf("%s:%s dims %v reduce %v %s->%s alg %v keep %v postops %d",
		c.stag, c.dtag, c.p.Dims, c.p.Reduce, c.p.SrcDT, c.p.DstDT, c.p.Reduction, c.keep, len(c.p.PostOps))
}

func randomProblem(r *rand.Rand) problem {
	rank := 1 + r.IntN(4)
	dims := make([]int64, rank)
	reduce := make([]bool, rank)
	for i := range dims {
		dims[i] = 1 + int64(r.IntN(6))
		if i < 2 && r.IntN(2) == 0 {
			dims[i] = 1 + int64(r.IntN(70)) // the blockable dims: padded tails and whole blocks
		}
		if r.IntN(2) == 0 && (i == 0 || i == 1) {
			dims[i] = 16 * (1 + int64(r.IntN(3)))
		}
		reduce[i] = r.IntN(2) == 0
	}
	reds := reductions()
	sdts := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}
	sdt := sdts[r.IntN(3)]
	ddt := sdt
	if r.IntN(2) == 0 {
		ddt = dtypes.F32
	}
	tags := tagsFor(rank)
	c := problem{
		p:    plan.Problem{Reduction: reds[r.IntN(len(reds))], SrcDT: sdt, DstDT: ddt, Dims: dims, Reduce: reduce},
		stag: tags[r.IntN(len(tags))], dtag: tags[r.IntN(len(tags))],
	}
	if r.IntN(3) == 0 {
		c.p.PostOps = append(c.p.PostOps, plan.PostOp{Kind: ops.ReLU})
	}
	if r.IntN(3) == 0 {
		c.p.PostOps = append(c.p.PostOps, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32})
	}
	return c
}

func dstDims(p *plan.Problem) []int64 {
	out := make([]int64, len(p.Dims))
	for i, d := range p.Dims {
		out[i] = d
		if p.Reduce[i] {
			out[i] = 1
		}
	}
	return out
}

// value is element i's test value: small integers (exact sums in every
// data type, so blocked and plain runs agree closely) with a few
// fractions.
func value(r *rand.Rand, c problem) float64 {
	if c.p.Combine == plan.CombineMul {
		return []float64{-1, 1, 0.5, 2, -2, 1}[r.IntN(6)]
	}
	return float64(r.IntN(9)-4) + []float64{0, 0.5, 0.25}[r.IntN(3)]
}

// runCase runs c in its blocked layouts and in plain dense layouts and
// compares every logical dst element; the blocked dst's padding must be
// zero and src padding holds garbage.
func runCase(t *testing.T, c problem, r *rand.Rand, garbage float64, fence bool) {
	t.Helper()
	p := c.p
	src := newTensor(t, c.stag, p.Dims, p.SrcDT)
	dst := newTensor(t, c.dtag, dstDims(&p), p.DstDT)
	fillAll(src, garbage)
	fillAll(dst, math.NaN())
	plainSrc := make([]byte, int64(p.SrcDT.Size())*prod(p.Dims))
	dense := graph.DenseStrides(p.Dims)
	forEach(p.Dims, func(idx []int64) {
		v := value(r, c)
		oracle.Put(p.SrcDT, src.buf, src.d.Offset(idx), v)
		oracle.Put(p.SrcDT, plainSrc, dot(idx, dense), v)
	})
	ddims := dstDims(&p)
	ddense := graph.DenseStrides(ddims)
	var bins [][]byte
	for i := range p.PostOps {
		if p.PostOps[i].Kind.IsBinary() {
			// A plain dst-shaped operand, broadcast over the reduced dims.
			s := make([]int64, len(p.Dims))
			for d := range s {
				if !p.Reduce[d] {
					s[d] = ddense[d]
				}
			}
			p.PostOps[i].BinStrides = s
			b := make([]byte, 4*prod(ddims))
			for j := range prod(ddims) {
				oracle.Put(dtypes.F32, b, j, float64(r.IntN(5)-2))
			}
			bins = append(bins, b)
		}
	}
	k, err := Compile(&p, src.d, dst.d)
	if err != nil {
		t.Fatalf("%v: Compile: %v", c, err)
	}
	sbuf, dbuf, bbufs := src.buf, dst.buf, bins
	if fence {
		f := kerneltest.NewFence(t, true)
		defer f.Free()
		sbuf, dbuf, bbufs = f.Place(src.buf), f.Place(dst.buf), f.PlaceEach(bins)
	}
	if err := k.Run(sbuf, dbuf, bbufs); err != nil {
		t.Fatalf("%v: Run: %v", c, err)
	}
	copy(dst.buf, dbuf)

	q := p
	q.SrcStrides, q.DstStrides = dense, make([]int64, len(p.Dims))
	for d := range q.DstStrides {
		if !p.Reduce[d] {
			q.DstStrides[d] = ddense[d]
		}
	}
	pl, err := plan.Canonicalize(&q)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := jit.Compile(pl)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, int64(p.DstDT.Size())*prod(ddims))
	if err := pk.Run(plainSrc, want, bins); err != nil {
		t.Fatal(err)
	}
	bad := 0
	logical := map[int64]bool{}
	forEach(ddims, func(idx []int64) {
		off := dst.d.Offset(idx)
		logical[off] = true
		got, exp := oracle.Get(p.DstDT, dst.buf, off), oracle.Get(p.DstDT, want, dot(idx, ddense))
		if !close(got, exp, p.DstDT) && bad < 5 {
			bad++
			t.Errorf("%v: dst %v = %v, plain run gives %v", c, idx, got, exp)
		}
	})
	for i := int64(0); i < dst.d.Span(); i++ {
		if !logical[i] && oracle.Get(p.DstDT, dst.buf, i) != 0 && bad < 5 {
			bad++
			t.Errorf("%v: dst padding position %d = %v, want 0", c, i, oracle.Get(p.DstDT, dst.buf, i))
		}
	}
}

func close(got, want float64, dt dtypes.DataType) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	if got == want {
		return true
	}
	tol := 1e-5
	if dt != dtypes.F32 {
		tol = 1.0 / 64
	}
	return math.Abs(got-want) <= tol*max(1, math.Abs(want))
}

func prod(d []int64) int64 {
	n := int64(1)
	for _, x := range d {
		n *= x
	}
	return n
}

func dot(a, b []int64) int64 {
	s := int64(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestRandomAgainstPlain: random problems (every alg, f32/bf16/f16,
// padded and whole blocks, kept and reduced blocked dims, src and dst
// blocked differently, binary post-ops) give what the same problem in
// plain layouts gives, on every ISA this machine runs, with NaN in the
// src padding.
func TestRandomAgainstPlain(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	for _, isa := range isas() {
		t.Run(isa.String(), func(t *testing.T) {
			defer jit.SetMaxISA(jit.SetMaxISA(isa))
			r := rand.New(rand.NewPCG(uint64(isa)+1, 7))
			for range n {
				runCase(t, randomProblem(r), r, math.NaN(), false)
			}
		})
	}
}

// TestEmptyReducedAxis: a reduced axis of size 0 beside a padded blocked
// dim: the boxes that cut the blocks start past the empty src's end and
// read nothing, and dst holds each reduction's value over nothing, as
// the plain layouts give it, on every ISA, with both buffers fenced.
func TestEmptyReducedAxis(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, isa := range isas() {
		t.Run(isa.String(), func(t *testing.T) {
			defer jit.SetMaxISA(jit.SetMaxISA(isa))
			for _, c := range []problem{
				{p: plan.Problem{Dims: []int64{2, 20, 0, 5}, Reduce: []bool{false, false, true, true}}, stag: "aBx16b", dtag: "aBx16b"},
				{p: plan.Problem{Dims: []int64{2, 20, 0, 5}, Reduce: []bool{false, false, true, true}}, stag: "aBx16b", dtag: "abx"},
				{p: plan.Problem{Dims: []int64{2, 20, 0, 5}, Reduce: []bool{false, false, true, true}}, stag: "abx", dtag: "aBx16b"},
				{p: plan.Problem{Dims: []int64{20, 0}, Reduce: []bool{false, true}}, stag: "Ab16a", dtag: "Ab16a"},
			} {
				for _, red := range []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0)} {
					c.p.Reduction, c.p.SrcDT, c.p.DstDT = red, dtypes.F32, dtypes.F32
					runCase(t, c, r, math.NaN(), true)
				}
			}
		})
	}
}

// TestPaddingGarbage: whatever src padding holds (NaN, Inf, huge values,
// values that would win a max or a min) never reaches a result.
func TestPaddingGarbage(t *testing.T) {
	for _, g := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 3e38, -3e38, 60000} {
		r := rand.New(rand.NewPCG(3, 9))
		for range 40 {
			c := randomProblem(r)
			c.stag = "aBx16b"
			if len(c.p.Dims) < 2 {
				c.stag = "abx"
			}
			runCase(t, c, r, g, false)
		}
	}
}

// TestGuardPages: blocked tensors whose padded tail ends at a PROT_NONE
// page; a read or write past the layout's span faults.
func TestGuardPages(t *testing.T) {
	for _, isa := range isas() {
		t.Run(isa.String(), func(t *testing.T) {
			defer jit.SetMaxISA(jit.SetMaxISA(isa))
			r := rand.New(rand.NewPCG(11, uint64(isa)))
			for range 60 {
				runCase(t, randomProblem(r), r, math.NaN(), true)
			}
			// A padded C reduced and kept, src and dst blocked apart.
			for _, red := range [][]bool{{false, true, false}, {false, false, true}, {true, true, true}} {
				c := problem{p: plan.Problem{Reduction: plan.AlgMean.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32,
					Dims: []int64{3, 37, 5}, Reduce: red}, stag: "aBx8b", dtag: "aBx16b"}
				runCase(t, c, r, math.NaN(), true)
			}
		})
	}
}

// TestUnpaddedIsOneBox: whole blocks need no repack and one box; a padded
// reduced dim repacks; a padded kept dim splits into boxes.
func TestUnpaddedIsOneBox(t *testing.T) {
	cases := []struct {
		stag, dtag     string
		dims           []int64
		reduce         []bool
		repack, boxesN int
	}{
		{"aBx16b", "aBx16b", []int64{2, 32, 3}, []bool{false, false, true}, 0, 1},
		{"aBx16b", "abx", []int64{2, 32, 3}, []bool{false, true, true}, 0, 1},
		{"aBx8b", "aBx16b", []int64{2, 48, 3}, []bool{false, false, true}, 0, 1},
		{"aBx16b", "abx", []int64{2, 20, 3}, []bool{false, true, false}, 2, 1},
		{"aBx16b", "abx", []int64{2, 20, 3}, []bool{false, false, true}, 0, 2},
		{"aBx8b", "aBx16b", []int64{2, 29, 3}, []bool{true, false, true}, 0, 3},
		{"ABx16a16b", "abx", []int64{17, 20, 3}, []bool{false, false, true}, 0, 4},
	}
	for _, c := range cases {
		p := plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: c.dims, Reduce: c.reduce}
		src := newTensor(t, c.stag, c.dims, dtypes.F32)
		dst := newTensor(t, c.dtag, dstDims(&p), dtypes.F32)
		k, err := Compile(&p, src.d, dst.d)
		if err != nil {
			t.Fatal(err)
		}
		if rp, m := k.Boxes(); rp != c.repack || m != c.boxesN {
			t.Errorf("%s:%s %v reduce %v: %d repack and %d boxes, want %d and %d", c.stag, c.dtag, c.dims, c.reduce, rp, m, c.repack, c.boxesN)
		}
	}
}

// TestRefusals: bad descriptions and buffers are errors, never panics.
func TestRefusals(t *testing.T) {
	p := plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2, 20}, Reduce: []bool{false, true}}
	src := newTensor(t, "aBx16b", p.Dims, dtypes.F32)
	dst := newTensor(t, "abx", []int64{2, 1}, dtypes.F32)
	if _, err := Compile(nil, src.d, dst.d); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("nil problem: %v", err)
	}
	if _, err := Compile(&p, dst.d, dst.d); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("src dims wrong: %v", err)
	}
	if _, err := Compile(&p, src.d, src.d); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("dst dims wrong: %v", err)
	}
	bad := src.d
	bad.Block = []int64{1, 0}
	if _, err := Compile(&p, bad, dst.d); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("block 0: %v", err)
	}
	// Blocks 16 and 12 on one kept dim: no strided digits express both.
	q := p
	q.Reduce = []bool{true, false}
	d12 := layout.Desc{Dims: []int64{1, 20}, Block: []int64{1, 12}, Outer: []int64{0, 12}, Inner: []int64{0, 1}}
	if _, err := Compile(&q, src.d, d12); !errors.Is(err, status.Unimplemented) {
		t.Errorf("blocks 16 and 12: %v", err)
	}
	k, err := Compile(&p, src.d, dst.d)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Run(src.buf[:len(src.buf)-1], dst.buf, nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("short src: %v", err)
	}
	if err := k.Run(src.buf, dst.buf[:1], nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("short dst: %v", err)
	}
	if err := k.Run(src.buf, dst.buf, [][]byte{{1}}); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("extra operand: %v", err)
	}
	var nk *Kernel
	if err := nk.Run(src.buf, dst.buf, nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("nil kernel: %v", err)
	}
}
