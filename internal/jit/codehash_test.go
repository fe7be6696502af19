package jit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/isa/amd64"
	"github.com/gdnn/gdnn/internal/isa/arm64"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The machine code gdnn emits is pinned by hashes: TestEmittedCodeHashes
// draws random problems of every family of kernels (codeFamilies:
// reductions of float, f64 (the Lp norms of other p apart) and integer
// data, index reductions, fused
// normalizations over rows and over columns), schedules each as the
// runtime does (every sub-plan: blocks, tiles, two stages, row by row,
// post-op passes, log-sum-exp programs, plans read from memory) and
// emits every kernel for every instruction-set configuration the runtime
// can pick. A change that should not change the code (a restructuring)
// keeps every hash; one that changes it on purpose rewrites
// testdata/codehash.txt with
//
//	go test ./internal/jit -run TestEmittedCodeHashes -codehash.update
//
// and the diff shows which configurations and which groups of problems
// changed. The test needs no particular CPU: it only emits.
var updateCodeHash = flag.Bool("codehash.update", false, "rewrite testdata/codehash.txt with the emitted code's hashes")

// codeHashGroup is how many problems one hash covers.
const codeHashGroup = 100

// codeConfig is one instruction-set configuration: what the runtime's
// schedule sees (its coverage) and how each emitter is called.
type codeConfig struct {
	name     string
	isa      ISA
	cov      kernelshape.Covers
	emit     func(*plan.Plan, kernelconf.Hints) (plan.Code, error)
	emitArg  func(*plan.ArgPlan) ([]byte, error)
	emitNorm func(*kernelshape.Norm) (plan.Code, error)
}

// codeFamily is one family of kernels the test draws: its problems,
// from a seed of its own, each drawn, scheduled and emitted by hash,
// which writes the code (or the emitter's refusals) to h and returns
// the kernels emitted and refused. A family is one line per
// configuration in testdata/codehash.txt, so adding one leaves the
// others' hashes alone.
type codeFamily struct {
	name     string // "" for the float reductions, whose lines came first
	problems int
	seed     uint64
	hash     func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (kernels, refused int)
}

func codeFamilies() []codeFamily {
	return []codeFamily{
		{"", 3000, 1, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			p, budget := randomCodeProblem(r, floatDraw)
			fmt.Fprintf(h, "problem %d budget %d\n", i, budget)
			return hashProblemCode(t, h, c, p, budget)
		}},
		{"f64", 500, 2, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			p, budget := randomCodeProblem(r, wideDraw)
			fmt.Fprintf(h, "problem %d budget %d\n", i, budget)
			return hashProblemCode(t, h, c, p, budget)
		}},
		{"integer", 500, 3, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			p, budget := randomCodeProblem(r, exactDraw)
			fmt.Fprintf(h, "problem %d budget %d\n", i, budget)
			return hashProblemCode(t, h, c, p, budget)
		}},
		{"index", 500, 4, hashArgCode},
		{"norm-rows", 500, 5, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			return hashNormCode(t, h, c, randomNormRows(r, nil), i)
		}},
		{"norm-columns", 300, 6, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			return hashNormCode(t, h, c, randomNormColumns(r, nil), i)
		}},
		{"norm-lp", 300, 7, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			// L2, L1, RMS and layer norms over columns, and L1 norm
			// over rows.
			if i%3 == 2 {
				return hashNormCode(t, h, c, randomNormRows(r, []kernelshape.NormKind{kernelshape.NormL1}), i)
			}
			return hashNormCode(t, h, c, randomNormColumns(r, []kernelshape.NormKind{kernelshape.NormL2, kernelshape.NormL1,
				kernelshape.NormRMS, kernelshape.NormLayer}), i)
		}},
		{"norm-rows-memory", 300, 9, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			// Softmax and log-softmax rows as normprog compiles them
			// for tensors from memory: dst streamed, rows prefetched.
			n := randomNormRows(r, []kernelshape.NormKind{kernelshape.NormSoftmax, kernelshape.NormLogSoftmax})
			n.StreamDst, n.PrefetchRows = true, true
			return hashNormCode(t, h, c, n, i)
		}},
		{"f64-pow", 200, 8, func(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (int, int) {
			// The Lp norms of p other than 1 and 2: exp and log in
			// the native kernel's loads and stores.
			d := wideDraw
			d.reductions = []plan.Reduction{plan.AlgNormLpSum.Reduction(3, 0), plan.AlgNormLpMax.Reduction(0.5, 1e-3),
				plan.AlgNormLpPowerPSum.Reduction(1.5, 0), plan.AlgNormLpSum.Reduction(4, 0.25)}
			p, budget := randomCodeProblem(r, d)
			fmt.Fprintf(h, "problem %d budget %d\n", i, budget)
			return hashProblemCode(t, h, c, p, budget)
		}},
	}
}

func codeConfigs() []codeConfig {
	x86 := func(name string, o amd64.Options) codeConfig {
		isa := AVX2
		if o.AVX512 {
			isa = AVX512
		}
		return codeConfig{name, isa, amd64.Covers(o),
			func(pl *plan.Plan, h kernelconf.Hints) (plan.Code, error) { return amd64.EmitHinted(pl, h, o) },
			func(pl *plan.ArgPlan) ([]byte, error) { return amd64.EmitArg(pl, o.AVX512) },
			func(n *kernelshape.Norm) (plan.Code, error) { return amd64.EmitNorm(n, o) }}
	}
	return []codeConfig{
		x86("avx512-bf16-zen", amd64.Options{AVX512: true, BF16: true, Zen: true}),
		x86("avx512-zen", amd64.Options{AVX512: true, Zen: true}),
		x86("avx512-bf16", amd64.Options{AVX512: true, BF16: true}),
		x86("avx512", amd64.Options{AVX512: true}),
		x86("avx2-zen", amd64.Options{Zen: true}),
		x86("avx2", amd64.Options{}),
		{"neon", NEON, arm64.Covers, func(pl *plan.Plan, _ kernelconf.Hints) (plan.Code, error) { return arm64.Emit(pl) },
			arm64.EmitArg, arm64.EmitNorm},
	}
}

func TestEmittedCodeHashes(t *testing.T) {
	configs, families := codeConfigs(), codeFamilies()
	codeSplits = map[string]int{}
	got := map[string][]string{}
	var lines []string
	for _, f := range families {
		var kernels, refused int
		for _, c := range configs {
			line := c.name
			if f.name != "" {
				line += "/" + f.name
			}
			lines = append(lines, line)
			prev := coverage
			coverage = func(ISA) kernelshape.Covers { return c.cov }
			r := rand.New(rand.NewPCG(49, f.seed))
			var h hash.Hash
			for i := range f.problems {
				if i%codeHashGroup == 0 {
					h = sha256.New()
				}
				k, n := f.hash(t, h, c, r, i)
				kernels += k
				refused += n
				if i%codeHashGroup == codeHashGroup-1 || i == f.problems-1 {
					got[line] = append(got[line], hex.EncodeToString(h.Sum(nil))[:16])
				}
			}
			coverage = prev
		}
		t.Logf("family %q: %d configurations, %d problems each: %d kernels emitted, %d refused by their emitter",
			f.name, len(configs), f.problems, kernels, refused)
	}
	t.Logf("schedules of the reductions %v", codeSplits)

	var sb strings.Builder
	sb.WriteString("# Hashes of the machine code emitted for random problems (internal/jit/codehash_test.go):\n")
	sb.WriteString("# configuration (/family), then one hash per group of problems, in order.\n")
	for _, l := range lines {
		fmt.Fprintf(&sb, "%s %s\n", l, strings.Join(got[l], " "))
	}
	path := filepath.Join("testdata", "codehash.txt")
	if *updateCodeHash {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -codehash.update)", err)
	}
	wantLines := strings.Split(strings.TrimSpace(string(want)), "\n")
	gotLines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(wantLines) != len(gotLines) {
		t.Fatalf("%s has %d lines, the emitters give %d", path, len(wantLines), len(gotLines))
	}
	for i := range gotLines {
		if gotLines[i] == wantLines[i] {
			continue
		}
		g, w := strings.Fields(gotLines[i]), strings.Fields(wantLines[i])
		var groups []string
		for j := 1; j < len(g) && j < len(w); j++ {
			if g[j] != w[j] {
				groups = append(groups, fmt.Sprintf("%d-%d", (j-1)*codeHashGroup, j*codeHashGroup-1))
			}
		}
		t.Errorf("%s: machine code changed for problems %s (or the line itself differs: %q)", g[0], strings.Join(groups, ", "), w[0])
	}
}

// codeSplits counts the schedules the problems took, for the log.
var codeSplits map[string]int

// hashProblemCode schedules p as the runtime does under config c and the
// call budget, and writes every sub-plan's key and code (or its refusal)
// to h. It returns the kernels emitted and the sub-plans refused.
func hashProblemCode(t *testing.T, h hash.Hash, c codeConfig, p *plan.Problem, budget int64) (kernels, refused int) {
	pl, err := plan.Canonicalize(p)
	if err != nil {
		fmt.Fprintf(h, "canonicalize: %v\n", err)
		return 0, 0
	}
	old := callBudget
	callBudget = budget
	d, err := decompose(pl, c.isa)
	callBudget = old
	if err != nil {
		fmt.Fprintf(h, "decompose: %v\n", err)
		return 0, 0
	}
	fmt.Fprintf(h, "split %s phases %d\n", d.split, len(d.phases))
	codeSplits[d.split]++
	for _, h := range d.hints {
		if h.FromMemory {
			codeSplits["from memory"]++
			break
		}
	}
	for i, sub := range d.plans {
		// The plan's key is not hashed: its spelling may change while the
		// code does not.
		code, err := c.emit(sub, d.hints[i])
		if err != nil {
			if !errors.Is(err, status.Unimplemented) {
				t.Fatalf("%s: %s: %v", c.name, sub.Key(), err)
			}
			fmt.Fprintf(h, "refused: %v\n", err)
			refused++
			continue
		}
		fmt.Fprintf(h, "totals %v code %d\n", code.Totals, len(code.Text))
		h.Write(stableTableAddresses(code.Text))
		kernels++
	}
	return kernels, refused
}

// stableTableAddresses returns text with the address of every amd64
// constant table it holds (an 8-byte immediate, which differs from
// process to process) replaced by a hash of the table's contents.
func stableTableAddresses(text []byte) []byte {
	out := bytes.Clone(text)
	for addr, t := range amd64.ConstTables() {
		var a [8]byte
		binary.LittleEndian.PutUint64(a[:], uint64(addr))
		if !bytes.Contains(out, a[:]) {
			continue
		}
		c := sha256.New()
		for _, v := range t {
			binary.Write(c, binary.LittleEndian, v)
		}
		out = bytes.ReplaceAll(out, a[:], c.Sum(nil)[:8])
	}
	return out
}

// codeDims are the sizes problems draw from: small ones for tails and
// shapes, and large ones so that blocks, tiles, two stages, rows by row
// and plans read from memory (32 MiB of src and more) all occur. Nothing
// is allocated: the schedule and the code depend on sizes only.
var codeDims = []int64{0, 1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 100, 255, 256, 384, 1000, 1024, 4096, 50000, 1 << 20}

var codeBudgets = []int64{1 << 20, 1 << 20, 1 << 20, 4096, 256}

// codeDraw is what a family of reductions draws its problems from: the
// data types, the reductions (nil: the float ones, log-sum-exp and the
// mean), and whether it takes post-ops.
type codeDraw struct {
	src, dst, bin []dtypes.DataType
	reductions    []plan.Reduction
	postOps       bool
}

var (
	// floatDraw: f32, bf16, f16 and 8-bit data reduced in f32.
	floatDraw = codeDraw{
		src:     []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8},
		dst:     []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32},
		bin:     []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32},
		postOps: true,
	}
	// wideDraw: f64 data, reduced in float64 (plan.IsWide).
	wideDraw = codeDraw{
		src:     []dtypes.DataType{dtypes.F64},
		dst:     []dtypes.DataType{dtypes.F64, dtypes.F32},
		bin:     []dtypes.DataType{dtypes.F64, dtypes.F32, dtypes.BF16, dtypes.S8, dtypes.S32},
		postOps: true,
	}
	// exactDraw: integer and boolean data reduced exactly
	// (plan.IsExact), which take no post-ops.
	exactDraw = codeDraw{
		src: []dtypes.DataType{dtypes.S32, dtypes.S64, dtypes.S8, dtypes.U8, dtypes.S16, dtypes.U16, dtypes.U32, dtypes.U64, dtypes.Boolean},
		dst: []dtypes.DataType{dtypes.F32, dtypes.F64, dtypes.Boolean, dtypes.U8},
		reductions: []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMul.Reduction(0, 0), plan.AlgMax.Reduction(0, 0),
			plan.AlgMin.Reduction(0, 0), plan.AlgMean.Reduction(0, 0), plan.Bitwise(plan.CombineAnd), plan.Bitwise(plan.CombineOr),
			plan.Bitwise(plan.CombineXor), plan.LogicalAnd, plan.LogicalOr, plan.LogicalXor},
	}
)

// randomCodeProblem draws a valid problem from d and a call budget.
func randomCodeProblem(r *rand.Rand, d codeDraw) (*plan.Problem, int64) {
	for {
		if p := drawCodeProblem(r, d); p.Validate() == nil {
			return p, codeBudgets[r.IntN(len(codeBudgets))]
		}
	}
}

func drawCodeProblem(r *rand.Rand, d codeDraw) *plan.Problem {
	rank := r.IntN(6)
	p := &plan.Problem{Dims: make([]int64, rank), Reduce: make([]bool, rank)}
	total := int64(1)
	for i := range rank {
		d := codeDims[r.IntN(len(codeDims))]
		for total*max(d, 1) > 1<<27 {
			d = codeDims[r.IntN(len(codeDims))]
		}
		p.Dims[i], total = d, total*max(d, 1)
		p.Reduce[i] = r.IntN(2) == 0
	}
	p.SrcDT = d.src[r.IntN(len(d.src))]
	p.DstDT = d.dst[r.IntN(len(d.dst))]
	if r.IntN(2) == 0 && (p.SrcDT.IsFloat() || d.reductions != nil) {
		p.DstDT = p.SrcDT
	}
	if d.reductions != nil {
		p.Reduction = d.reductions[r.IntN(len(d.reductions))]
	} else {
		switch k := r.IntN(12); {
		case k < 9:
			a := plan.Alg(k)
			p.Reduction = a.Reduction(float32(1+r.IntN(2)), []float32{0, 1e-3}[r.IntN(2)])
		case k == 9:
			p.Reduction = plan.LogSumExp
		default: // the mean, the commonest
		}
	}
	p.SrcStrides = codeLayout(r, p.Dims)
	kept := make([]int64, rank)
	for i, d := range p.Dims {
		kept[i] = d
		if p.Reduce[i] {
			kept[i] = 1
		}
	}
	p.DstStrides = codeLayout(r, kept)
	if !d.postOps {
		return p
	}
	nbin := 0
	for range r.IntN(4) {
		op := randomCodePostOp(r)
		if op.Kind.IsBinary() {
			if nbin == plan.MaxBinary {
				continue
			}
			nbin++
			op.BinDT = d.bin[r.IntN(len(d.bin))]
			op.BinStrides = make([]int64, rank)
			step := int64(1)
			for i := rank - 1; i >= 0; i-- {
				if kept[i] > 1 && r.IntN(3) != 0 {
					op.BinStrides[i] = step
					step *= kept[i]
				}
			}
		}
		p.PostOps = append(p.PostOps, op)
	}
	return p
}

// randomCodePostOp draws a post-op kind and its parameters (a binary
// one's operand is the caller's to fill in).
func randomCodePostOp(r *rand.Rand) plan.PostOp {
	k := ops.Kind(1 + r.IntN(int(ops.Subtract)))
	op := plan.PostOp{Kind: k}
	switch k {
	case ops.Clamp:
		op.Alpha, op.Beta = -0.5, 2
	case ops.Elu, ops.LeakyReLU:
		op.Alpha = 0.25
	case ops.HardSigmoid:
		op.Alpha, op.Beta = 0.2, 0.5
	case ops.SoftPlus:
		op.Beta = 1
	case ops.Pow:
		op.Beta = ops.PowBetas[r.IntN(len(ops.PowBetas))]
	}
	return op
}

// hashArgCode draws index reduction i (ArgMax, ArgMin), schedules it as
// CompileArg does and writes its code to h.
func hashArgCode(t *testing.T, h hash.Hash, c codeConfig, r *rand.Rand, i int) (kernels, refused int) {
	p := randomArgProblem(r)
	fmt.Fprintf(h, "problem %d\n", i)
	pl, err := plan.CanonicalizeArg(p)
	if err != nil {
		fmt.Fprintf(h, "canonicalize: %v\n", err)
		return 0, 0
	}
	text, err := c.emitArg(splitInner(pl))
	if err != nil {
		if !errors.Is(err, status.Unimplemented) {
			t.Fatalf("%s: %s: %v", c.name, pl.Key(), err)
		}
		fmt.Fprintf(h, "refused: %v\n", err)
		return 0, 1
	}
	fmt.Fprintf(h, "code %d\n", len(text))
	h.Write(stableTableAddresses(text))
	return 1, 0
}

// hashNormCode emits fused normalization i and writes its code to h.
func hashNormCode(t *testing.T, h hash.Hash, c codeConfig, n *kernelshape.Norm, i int) (kernels, refused int) {
	fmt.Fprintf(h, "problem %d\n", i)
	code, err := c.emitNorm(n)
	if err != nil {
		if !errors.Is(err, status.Unimplemented) {
			t.Fatalf("%s: %v %s: %v", c.name, n.Kind, n.Plan.Key(), err)
		}
		fmt.Fprintf(h, "refused: %v\n", err)
		return 0, 1
	}
	fmt.Fprintf(h, "code %d\n", len(code.Text))
	h.Write(stableTableAddresses(code.Text))
	return 1, 0
}

var (
	normCodeTypes = []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16}
	normDstTypes  = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8}
	normRowDims   = []int64{1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 255, 1000, 4096}
	normOuterDims = []int64{1, 2, 3, 5, 64, 1000}
)

// randomNormPostOps draws up to three post-ops, a binary one's operand
// contiguous or broadcast along the normalized dim a (stride 1 or 0
// there) and dense or broadcast along the others.
func randomNormPostOps(r *rand.Rand, dims []int64, a int) (post []plan.PostOp, along []int64) {
	for range r.IntN(4) {
		op := randomCodePostOp(r)
		if op.Kind.IsBinary() {
			if len(along) == plan.MaxBinary {
				continue
			}
			op.BinDT = normCodeTypes[r.IntN(len(normCodeTypes))]
			op.BinStrides = make([]int64, len(dims))
			step := int64(1)
			for i := len(dims) - 1; i >= 0; i-- {
				if dims[i] > 1 && (i == a || r.IntN(2) == 0) {
					op.BinStrides[i] = step
					step *= dims[i]
				}
			}
			if r.IntN(3) == 0 {
				op.BinStrides[a] = 0
			}
			along = append(along, min(op.BinStrides[a], 1))
		}
		post = append(post, op)
	}
	return post, along
}

// randomNormRows draws a fused normalization over rows (NormRows), its
// plan built as normprog's fusedRows builds it: of one of kinds, or,
// where kinds is nil, of the kinds from softmax to L2 norm.
func randomNormRows(r *rand.Rand, kinds []kernelshape.NormKind) *kernelshape.Norm {
	for {
		rank := 1 + r.IntN(3)
		dims := make([]int64, rank)
		for i := range dims {
			dims[i] = normOuterDims[r.IntN(len(normOuterDims))]
		}
		dims[rank-1] = normRowDims[r.IntN(len(normRowDims))]
		reduce := make([]bool, rank)
		reduce[rank-1] = true
		kind := kernelshape.NormKind(0)
		if kinds == nil {
			kind = kernelshape.NormKind(1 + r.IntN(int(kernelshape.NormL2)))
		} else {
			kind = kinds[r.IntN(len(kinds))]
		}
		n := &kernelshape.Norm{Kind: kind, InfAsZero: r.IntN(2) == 0,
			Epsilon: []float32{1e-5, 1e-12}[r.IntN(2)], EpsArg: r.IntN(4) == 0, EpsAdded: r.IntN(2) == 0, OneRow: r.IntN(4) == 0}
		post, along := randomNormPostOps(r, dims, rank-1)
		if (n.Kind == kernelshape.NormLayer || n.Kind == kernelshape.NormRMS) && r.IntN(3) == 0 {
			// A residual sum: x + skip (+ bias) into src first.
			n.Residual = 2 + r.IntN(2)
			var res []plan.PostOp
			for range n.Residual {
				res = append(res, plan.PostOp{Kind: ops.Add, BinDT: normCodeTypes[r.IntN(len(normCodeTypes))], BinStrides: graphDense(dims)})
			}
			post, along = append(res, post...), append([]int64{1, 1, 1}[:n.Residual], along...)
			if len(along) > plan.MaxBinary {
				continue
			}
		}
		src, dst := normCodeTypes[r.IntN(len(normCodeTypes))], normDstTypes[r.IntN(len(normDstTypes))]
		dstStrides := graphDense(dims)
		if rank > 1 && r.IntN(3) == 0 {
			// Padded dst rows.
			dstStrides = codeLayout(r, dims)
			dstStrides[rank-1] = 1
			for i := rank - 2; i >= 0; i-- {
				dstStrides[i] = dstStrides[i+1]*dims[i+1] + int64(r.IntN(3))
			}
		}
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: src, DstDT: dst, Dims: dims,
			SrcStrides: graphDense(dims), Reduce: reduce, DstStrides: dstStrides, PostOps: post})
		if err != nil || len(pl.Reduced) != 1 || pl.HasInner || pl.Reduced[0].SrcStride != 1 {
			continue
		}
		pl.Reduced[0].DstStride = 1
		pl.Reduced[0].BinStrides = along
		n.Plan = pl
		if n.Check() == nil {
			return n
		}
	}
}

// randomNormColumns draws a normalization over dim 1 of [N, C, inner]
// (NormColumns), its plan built as normprog's fusedColumns builds it:
// of one of kinds, with an epsilon, or, where kinds is nil, a softmax or
// log-softmax.
func randomNormColumns(r *rand.Rand, kinds []kernelshape.NormKind) *kernelshape.Norm {
	for {
		dims := []int64{normOuterDims[r.IntN(len(normOuterDims))], normRowDims[r.IntN(len(normRowDims))],
			[]int64{2, 3, 7, 16, 17, 64, 100, 1000, 4096}[r.IntN(9)]}
		if dims[1] <= 1 {
			continue
		}
		var n *kernelshape.Norm
		if kinds == nil {
			kind := []kernelshape.NormKind{kernelshape.NormSoftmax, kernelshape.NormLogSoftmax}[r.IntN(2)]
			n = &kernelshape.Norm{Kind: kind, InfAsZero: r.IntN(2) == 0}
		} else {
			n = &kernelshape.Norm{Kind: kinds[r.IntN(len(kinds))], Epsilon: []float32{1e-12, 0.5}[r.IntN(2)],
				EpsArg: r.IntN(3) == 0, EpsAdded: r.IntN(3) == 0}
		}
		post, _ := randomNormPostOps(r, dims, 2)
		src, dst := normCodeTypes[r.IntN(len(normCodeTypes))], normDstTypes[r.IntN(len(normDstTypes))]
		srcStrides, dstStrides := graphDense(dims), graphDense(dims)
		if r.IntN(3) == 0 {
			// dst's channels and images apart.
			dstStrides[1] = dims[2] + 5
			dstStrides[0] = dstStrides[1]*dims[1] + 3
		}
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: src, DstDT: dst, Dims: dims,
			SrcStrides: srcStrides, Reduce: []bool{false, true, false}, DstStrides: dstStrides, PostOps: post})
		if err != nil || len(pl.Reduced) != 1 || !pl.HasInner || pl.Inner.SrcStride != 1 || pl.Inner.DstStride != 1 ||
			pl.Reduced[0].Size != dims[1] || pl.Reduced[0].SrcStride != srcStrides[1] {
			continue
		}
		ch := &pl.Reduced[0]
		ch.DstStride = dstStrides[1]
		ch.BinStrides = nil
		for _, op := range post {
			if op.Kind.IsBinary() {
				ch.BinStrides = append(ch.BinStrides, op.BinStrides[1])
			}
		}
		n.Plan = pl
		if n.CheckColumns() == nil {
			return n
		}
	}
}

// graphDense returns row-major strides over dims.
func graphDense(dims []int64) []int64 {
	s := make([]int64, len(dims))
	step := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = step
		step *= max(dims[i], 1)
	}
	return s
}

// codeLayout returns strides for dims in a random order, sometimes with
// padded rows.
func codeLayout(r *rand.Rand, dims []int64) []int64 {
	s := make([]int64, len(dims))
	step := int64(1)
	for _, i := range r.Perm(len(dims)) {
		s[i] = step
		step *= max(dims[i], 1)
		if r.IntN(5) == 0 {
			step += int64(r.IntN(3))
		}
	}
	return s
}
