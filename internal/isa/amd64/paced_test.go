package amd64

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestPacedRows runs random plans marked plan.FromMemory, compiled with
// Options.Zen (row sweeps of one accumulator chain, two on AVX2), on
// every ISA against the reference and the interpreter, as
// TestRandomKinds and TestRandomPlans do: every covered reduction, post-op
// chains, NaN and infinities, rows with tails and cut into runs.
func TestPacedRows(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	r := rand.New(rand.NewSource(21))
	for i := 0; i < n; i++ {
		p := randKindProblem(r, 6000)
		if i%3 == 0 {
			p = withTrailingNear(r, randProblem(r, 6000))
		}
		checkProblemPaced(t, r, p, i%4 == 0, true)
	}
}

// TestPacedRowsGate checks when the row sweeps are paced: only for an f32
// src of a plan marked FromMemory under Options.Zen, and not for
// log-sum-exp's exp, whose arithmetic, not memory, bounds it. The paced
// kernel has one accumulator (zmm) or two (ymm) where the other has eight;
// FromMemory changes nothing else, and nothing at all without Zen.
func TestPacedRowsGate(t *testing.T) {
	for _, avx512 := range []bool{false, true} {
		for _, c := range []struct {
			red   plan.Reduction
			sdt   dtypes.DataType
			paced bool
		}{
			{plan.AlgMean.Reduction(0, 0), dtypes.F32, true},
			{plan.AlgMax.Reduction(0, 0), dtypes.F32, true},
			{plan.AlgNormLpSum.Reduction(2, 0), dtypes.F32, true},
			{plan.AlgSum.Reduction(0, 0), dtypes.BF16, false},
			{plan.LogSumExp, dtypes.F32, false},
		} {
			p := twoD(c.red, c.sdt, dtypes.F32, 83, 3136, false)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			if c.red.IsLogSumExp() {
				pl.Stage = plan.Unshifted
			}
			emit := func(mem, paced bool) []byte {
				code, err := EmitHinted(pl, kernelconf.Hints{FromMemory: mem}, Options{AVX512: avx512, Zen: paced})
				if err != nil {
					t.Fatalf("%v %v: %v", c.red, c.sdt, err)
				}
				return code.Text
			}
			if !bytes.Equal(emit(false, false), emit(true, false)) {
				t.Errorf("avx512 %v, %v of %v: FromMemory without Zen changed the code", avx512, c.red, c.sdt)
			}
			if got := !bytes.Equal(emit(false, true), emit(true, true)); got != c.paced {
				t.Errorf("avx512 %v, %v of %v: paced %v, want %v", avx512, c.red, c.sdt, got, c.paced)
			}
		}
	}
}

// TestPacedRowsLoopShape checks the paced row loop's shape: it tests its
// counter at the top and jumps back at the end (EnterLoop's testedLoops),
// two instructions more per vector than the loop that ends in JNE, which
// every other row sweep keeps.
func TestPacedRowsLoopShape(t *testing.T) {
	for _, avx512 := range []bool{false, true} {
		pl, err := plan.Canonicalize(twoD(plan.AlgSum.Reduction(0, 0), dtypes.F32, dtypes.F32, 16, 65536, false))
		if err != nil {
			t.Fatal(err)
		}
		for _, paced := range []bool{false, true} {
			code, err := EmitHinted(pl, kernelconf.Hints{FromMemory: true}, Options{AVX512: avx512, Zen: paced})
			if err != nil {
				t.Fatal(err)
			}
			ins := disassemble(t, code.Text)
			add := slices.IndexFunc(ins, func(s string) bool { return strings.HasPrefix(s, "vaddps (%rsi)") })
			if add < 2 || add+4 > len(ins) {
				t.Fatalf("avx512 %v paced %v: no row loop adding from memory in\n%s", avx512, paced, strings.Join(ins, "\n"))
			}
			// The loop: [test; je;] the adds, the pointer step, dec, then jmp or jne.
			end := add + slices.IndexFunc(ins[add:], func(s string) bool { return strings.HasPrefix(s, "dec") }) + 1
			tested := strings.HasPrefix(ins[add-2], "test") && strings.HasPrefix(ins[add-1], "je") && strings.HasPrefix(ins[end], "jmp")
			plain := strings.HasPrefix(ins[end], "jne")
			if paced && !tested || !paced && !plain {
				t.Errorf("avx512 %v paced %v: row loop\n%s", avx512, paced, strings.Join(ins[add-2:end+1], "\n"))
			}
		}
	}
}
