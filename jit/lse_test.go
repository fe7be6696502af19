package jit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/plan"
)

// TestLogSumExpWithOperands runs log-sum-exp followed by binary post-ops
// (the program's own max operand comes first, the caller's after it) on
// every ISA, with budgets that split each of its plans.
func TestLogSumExpWithOperands(t *testing.T) {
	isaList := []ISA{None}
	if d := DetectedISA(); d != None {
		isaList = append(isaList, d)
	}
	r := rand.New(rand.NewPCG(8, 9))
	for _, s := range []spec{
		{dims: []int64{40, 300}, reduce: []bool{false, true}, binBcast: [][]bool{{false, false}, {true, false}}},
		{dims: []int64{300, 24}, reduce: []bool{true, false}, binBcast: [][]bool{{false, false}, {false, true}}},
		{dims: []int64{4, 200, 33}, reduce: []bool{false, true, false}, binBcast: [][]bool{{false, false, false}, {true, false, false}}},
	} {
		s.sdt, s.ddt, s.lo, s.hi = dtypes.F32, dtypes.F32, -30, 60
		s.post = []plan.PostOp{{Kind: plan.Add, BinDT: dtypes.F32}, {Kind: plan.ReLU}, {Kind: plan.Multiply, BinDT: dtypes.BF16}}
		c := s.build(t, r)
		c.p.Reduction = plan.LogSumExp
		for _, isa := range isaList {
			for _, budget := range []int64{1 << 20, 1024} {
				withBudget(t, budget)
				prev := SetMaxISA(isa)
				dst := c.run(t)
				SetMaxISA(prev)
				checkRef(t, c, dst, "log-sum-exp with operands "+isa.String())
			}
		}
	}
}

// TestLogSumExpChunks checks the chunked log-sum-exp program: a plan
// larger than a call budget runs its phases chunk by chunk (a last chunk
// shorter than the others among them) on the scratch buffers of one
// chunk, each chunk's calls moved to its own src, dst and operand
// elements (an operand per output, and one broadcast over the outputs);
// results agree with the reference on every ISA and the interpreter, the
// same for 1 and 2 threads, and no phase reads a buffer that it writes.
func TestLogSumExpChunks(t *testing.T) {
	isaList := []ISA{None}
	if d := DetectedISA(); d != None {
		isaList = append(isaList, d)
	}
	r := rand.New(rand.NewPCG(65, 66))
	const budget = 4096
	for _, tc := range []struct {
		s      spec
		chunks []int64 // the sizes of the outermost loop's chunks
	}{
		// Outer [37], rows of 1200 bytes.
		{spec{dims: []int64{37, 300}, reduce: []bool{false, true}, binBcast: [][]bool{{false, true}, {true, true}}},
			[]int64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1}},
		// Outer [9], a strided Inner.
		{spec{dims: []int64{9, 20, 13}, reduce: []bool{false, true, false}, binBcast: [][]bool{{false, true, false}, {true, true, false}}},
			[]int64{3, 3, 3}},
		// Outer [5, 7]: chunks of the outer loop.
		{spec{dims: []int64{5, 7, 60}, reduce: []bool{false, false, true}, binBcast: [][]bool{{false, false, true}, {true, false, true}}},
			[]int64{2, 2, 1}},
	} {
		s := tc.s
		s.sdt, s.ddt, s.lo, s.hi = dtypes.F32, dtypes.F32, -30, 60
		s.post = []plan.PostOp{{Kind: plan.Subtract, BinDT: dtypes.F32}, {Kind: plan.Multiply, BinDT: dtypes.BF16}}
		c := s.build(t, r)
		c.p.Reduction = plan.LogSumExp
		for _, isa := range isaList {
			withBudget(t, budget)
			what := fmt.Sprintf("%v %s", s.dims, isa)
			prev := SetMaxISA(isa)
			k := c.compile(t)
			SetMaxISA(prev)
			// The program of each chunk alone, and their phases and
			// scratch buffers put together.
			var phases, scratch int
			for _, n := range tc.chunks {
				sub := k.Plan().Clone()
				sub.Outer[0].Size = n
				counts(sub)
				d, err := decompose(sub, isa)
				if err != nil {
					t.Fatal(err)
				}
				phases += len(d.phases)
				scratch = max(scratch, len(d.scratch))
			}
			if len(k.dec.phases) != phases || len(k.dec.scratch) != scratch {
				t.Errorf("%s: %d phases and %d scratch buffers, want the chunks' %d and %d",
					what, len(k.dec.phases), len(k.dec.scratch), phases, scratch)
			}
			for i, ph := range k.dec.phases {
				written := map[int]bool{}
				for _, s := range ph.segs {
					written[s.dstBuf] = true
				}
				for _, s := range ph.segs {
					for _, b := range append([]int{s.srcBuf}, s.bins[:s.nbins]...) {
						if written[b] {
							t.Errorf("%s: phase %d reads buffer %d, which it writes", what, i, b)
						}
					}
				}
			}
			var first []byte
			for _, threads := range []int{1, 2} {
				withThreads(t, threads)
				dst := c.newDst()
				if err := k.Run(c.src, dst, c.bins); err != nil {
					t.Fatal(err)
				}
				checkRef(t, c, dst, what)
				if first == nil {
					first = dst
				} else if !bytes.Equal(first, dst) {
					t.Fatalf("%s: 1 and 2 threads differ", what)
				}
			}
		}
	}
}
