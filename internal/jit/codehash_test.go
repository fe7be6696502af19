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
// draws random problems, schedules each as the runtime does (every
// sub-plan: blocks, tiles, two stages, row by row, post-op passes,
// log-sum-exp programs, plans read from memory) and emits every sub-plan
// for every instruction-set configuration the runtime can pick. A change
// that should not change the code (a restructuring) keeps every hash; one
// that changes it on purpose rewrites testdata/codehash.txt with
//
//	go test ./internal/jit -run TestEmittedCodeHashes -codehash.update
//
// and the diff shows which configurations and which groups of problems
// changed. The test needs no particular CPU: it only emits.
var updateCodeHash = flag.Bool("codehash.update", false, "rewrite testdata/codehash.txt with the emitted code's hashes")

const (
	codeHashProblems = 3000 // random problems drawn
	codeHashGroup    = 100  // problems per hash line
)

// codeConfig is one instruction-set configuration: what the runtime's
// schedule sees (its coverage) and how the emitter is called.
type codeConfig struct {
	name string
	isa  ISA
	cov  kernelshape.Covers
	emit func(*plan.Plan, kernelconf.Hints) (plan.Code, error)
}

func codeConfigs() []codeConfig {
	x86 := func(name string, o amd64.Options) codeConfig {
		isa := AVX2
		if o.AVX512 {
			isa = AVX512
		}
		return codeConfig{name, isa, amd64.Covers(o), func(pl *plan.Plan, h kernelconf.Hints) (plan.Code, error) { return amd64.EmitHinted(pl, h, o) }}
	}
	return []codeConfig{
		x86("avx512-bf16-zen", amd64.Options{AVX512: true, BF16: true, Zen: true}),
		x86("avx512-zen", amd64.Options{AVX512: true, Zen: true}),
		x86("avx512-bf16", amd64.Options{AVX512: true, BF16: true}),
		x86("avx512", amd64.Options{AVX512: true}),
		x86("avx2-zen", amd64.Options{Zen: true}),
		x86("avx2", amd64.Options{}),
		{"neon", NEON, arm64.Covers, func(pl *plan.Plan, _ kernelconf.Hints) (plan.Code, error) { return arm64.Emit(pl) }},
	}
}

func TestEmittedCodeHashes(t *testing.T) {
	configs := codeConfigs()
	codeSplits = map[string]int{}
	got := map[string][]string{}
	var kernels, refused int
	for _, c := range configs {
		prev := coverage
		coverage = func(ISA) kernelshape.Covers { return c.cov }
		r := rand.New(rand.NewPCG(49, 1))
		var h hash.Hash
		for i := range codeHashProblems {
			if i%codeHashGroup == 0 {
				h = sha256.New()
			}
			p, budget := randomCodeProblem(r)
			fmt.Fprintf(h, "problem %d budget %d\n", i, budget)
			k, n := hashProblemCode(t, h, c, p, budget)
			kernels += k
			refused += n
			if i%codeHashGroup == codeHashGroup-1 {
				got[c.name] = append(got[c.name], hex.EncodeToString(h.Sum(nil))[:16])
			}
		}
		coverage = prev
	}
	t.Logf("%d configurations, %d problems each: %d kernels emitted, %d sub-plans refused by their emitter; schedules %v",
		len(configs), codeHashProblems, kernels, refused, codeSplits)

	var sb strings.Builder
	sb.WriteString("# Hashes of the machine code emitted for random problems (internal/jit/codehash_test.go):\n")
	sb.WriteString("# configuration, then one hash per group of problems, in order.\n")
	for _, c := range configs {
		fmt.Fprintf(&sb, "%s %s\n", c.name, strings.Join(got[c.name], " "))
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

var (
	codeSrcTypes = []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8}
	codeDstTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}
	codeBinTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}
	codeBudgets  = []int64{1 << 20, 1 << 20, 1 << 20, 4096, 256}
)

// randomCodeProblem draws a valid problem and a call budget.
func randomCodeProblem(r *rand.Rand) (*plan.Problem, int64) {
	for {
		if p := drawCodeProblem(r); p.Validate() == nil {
			return p, codeBudgets[r.IntN(len(codeBudgets))]
		}
	}
}

func drawCodeProblem(r *rand.Rand) *plan.Problem {
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
	p.SrcDT = codeSrcTypes[r.IntN(len(codeSrcTypes))]
	p.DstDT = codeDstTypes[r.IntN(len(codeDstTypes))]
	if r.IntN(2) == 0 && p.SrcDT.IsFloat() {
		p.DstDT = p.SrcDT
	}
	switch k := r.IntN(12); {
	case k < 9:
		a := plan.Alg(k)
		p.Reduction = a.Reduction(float32(1+r.IntN(2)), []float32{0, 1e-3}[r.IntN(2)])
	case k == 9:
		p.Reduction = plan.LogSumExp
	default: // the mean, the commonest
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
	nbin := 0
	for range r.IntN(4) {
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
		if k.IsBinary() {
			if nbin == plan.MaxBinary {
				continue
			}
			nbin++
			op.BinDT = codeBinTypes[r.IntN(len(codeBinTypes))]
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
