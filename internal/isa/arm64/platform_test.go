package arm64

import (
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// platformReg matches x18 and its 32-bit half w18 in objdump's operand
// text: the platform register, which macOS (and Windows) may change at
// any moment, so a kernel must neither read nor write it. (v18 and its
// q, d, s, h and b views are vector registers, free to use.)
var platformReg = regexp.MustCompile(`\b[xw]18\b`)

// platformRegUses disassembles code with an independent decoder
// (binutils' objdump) and returns the instructions that name x18 or w18,
// with their byte offsets.
func platformRegUses(t *testing.T, code []byte) []string {
	t.Helper()
	var uses []string
	for i, in := range disassemble(t, code) {
		if platformReg.MatchString(in.text) {
			uses = append(uses, fmt.Sprintf("+%#x %08x %s", 4*i, in.word, in.text))
		}
	}
	return uses
}

// TestPlatformRegCheckFlagsX18 shows that the check below can fail:
// hand-encoded instructions that read or write x18 or w18 are flagged,
// and ones that use other registers, v18 among them, are not.
func TestPlatformRegCheckFlagsX18(t *testing.T) {
	words := func(ws ...uint32) []byte {
		var b []byte
		for _, w := range ws {
			b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
		}
		return b
	}
	for _, w := range []uint32{
		0x8b010012, // ADD X18, X0, X1     (writes x18)
		0xaa1203e0, // MOV X0, X18         (reads x18)
		0xb9400240, // LDR W0, [X18]       (x18 as a base)
		0x0b120020, // ADD W0, W1, W18     (w18)
		0xa9004bf1, // STP X17, X18, [SP]  (x18 as a pair's second)
		0x3dc00252, // LDR Q18, [X18]      (q18 is a vector register, x18 not)
	} {
		if uses := platformRegUses(t, words(w)); len(uses) != 1 {
			t.Errorf("%08x: flagged %q, want one use of x18", w, uses)
		}
	}
	clean := words(
		0x8b010000, // ADD X0, X0, X1
		0x4e21d412, // FADD V18.4S, V0.4S, V1.4S
		0x3dc00232, // LDR Q18, [X17]
		0xd65f03c0, // RET
	)
	if uses := platformRegUses(t, clean); len(uses) != 0 {
		t.Errorf("flagged %q in code without x18", uses)
	}
}

// TestNoPlatformRegister disassembles the kernels of a few thousand
// plans, drawn as the emitter's tests draw them (randomProblem: ranks
// 0-5, every dtype pair, padded and permuted layouts, post-op chains
// with up to three binary operands), of every reduction the emitter
// covers and every stage of a split one, copies, unshifted log-sum-exp
// in each of its stages, and the deepest loop nests with six binary
// operands (the most general registers a kernel takes): no instruction
// may name x18 or w18. It decodes bytes only, so it runs on any host.
func TestNoPlatformRegister(t *testing.T) {
	r := rand.New(rand.NewSource(18))
	var plans []*plan.Plan
	var names []string
	add := func(name string, pl *plan.Plan) {
		plans, names = append(plans, pl), append(names, name)
	}
	const n = 3000
	for i := 0; i < n; i++ {
		p := randomProblem(r, 3000)
		switch c := i % (len(reductions) + 3); {
		case c < len(reductions):
			p.Reduction = reductions[c].r
			st := plan.Stage(i / (len(reductions) + 3) % 4)
			if st&plan.SkipFinalize != 0 {
				p.DstDT, p.PostOps = dtypes.F32, nil
			}
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatalf("Canonicalize(%+v): %v", p, err)
			}
			if st != 0 {
				pl.Stage, pl.Reduction = st, p.Reduction
			}
			add(fmt.Sprintf("%s stage %d", reductions[c].name, st), pl)
		case c == len(reductions):
			p.Reduction = plan.Copy
			clear(p.Reduce)
			p.DstStrides = stridesFor(r, p.Dims, r.Intn(5) == 0)
			for j := range p.PostOps {
				if p.PostOps[j].Kind.IsBinary() {
					p.PostOps[j].BinStrides = operandStrides(r, p.Dims)
				}
			}
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatalf("Canonicalize(%+v): %v", p, err)
			}
			add("copy", pl)
		case c == len(reductions)+1:
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatalf("Canonicalize(%+v): %v", p, err)
			}
			add("mean", pl)
		default:
			st := kerneltest.UnshiftedStages[i%len(kerneltest.UnshiftedStages)]
			add(fmt.Sprintf("unshifted log-sum-exp stage %d", st), kerneltest.UnshiftedPlan(t, p, st))
		}
	}
	for o := 0; o <= maxDepth; o++ {
		for red := 0; red <= maxDepth; red++ {
			add(fmt.Sprintf("deep %d outer %d reduced", o, red), deepPlan(o, red))
		}
	}

	// Emit every plan, then decode the kernels in batches (one objdump
	// run each), each instruction traced back to its plan.
	var code []byte
	var starts []int // starts[k]: the offset of kernel k in code
	var of []int     // of[k]: its plan
	emitted, unimplemented := 0, 0
	check := func() {
		if len(code) == 0 {
			return
		}
		k := 0
		for _, u := range platformRegUses(t, code) {
			var off int
			if _, err := fmt.Sscanf(u, "+%x", &off); err != nil {
				t.Fatalf("offset of %q: %v", u, err)
			}
			for k+1 < len(starts) && starts[k+1] <= off {
				k++
			}
			t.Errorf("%s: %s\nplan %v", names[of[k]], u, plans[of[k]])
		}
		code, starts, of = code[:0], starts[:0], of[:0]
	}
	for i, pl := range plans {
		c, err := Emit(pl)
		if errors.Is(err, status.Unimplemented) {
			unimplemented++
			continue
		}
		if err != nil {
			t.Fatalf("%s: Emit(%v): %v", names[i], pl, err)
		}
		emitted++
		starts, of = append(starts, len(code)), append(of, i)
		code = append(code, c.Text...)
		if len(code) >= 1<<20 {
			check()
		}
	}
	check()
	if emitted < n {
		t.Errorf("only %d of %d plans emitted (%d the emitter does not cover): too few to stand for the tests' plans", emitted, len(plans), unimplemented)
	}
	t.Logf("%d kernels decoded, no x18 or w18; %d plans the emitter does not cover", emitted, unimplemented)
}
