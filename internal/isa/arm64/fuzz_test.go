package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// FuzzPlans checks the NEON emitter on fuzzer-chosen random problems:
// the seed picks the problem (ranks 0-5, dims, padded and permuted
// strides, dtype pairs, post-op chains, as TestKindsRandom draws them,
// some ending in Exp, Log or a kind of package vfn),
// kind one of the covered reductions, specials whether NaN, ±Inf and ±0
// are among src and operands, tails whether the values make the
// reduction's edge cases (the fills of fillerFor), operands%7 how many
// binary operands the post-ops reach (TestManyBinaryOperands). Each problem runs
// through the interpreter and the emitted code, whole and in blocks,
// against the float64 oracle, bit for bit (the machine code's outputs
// within vfn.Tolerance of a chain's last op). Emitted code runs only on
// arm64; on an amd64 host, under qemu with .ci/qemu-exec, which lets the
// fuzz coordinator start its workers under qemu too:
//
//	GOARCH=arm64 go test -exec $PWD/.ci/qemu-exec -run '^$' -fuzz FuzzPlans ./arm64
func FuzzPlans(f *testing.F) {
	for i, s := range []int64{1, 2, 3, 42} {
		f.Add(s, uint8(i*5), i%2 == 0, i < 2, uint8(2*i))
	}
	f.Fuzz(func(t *testing.T, seed int64, kind uint8, specials, tails bool, operands uint8) {
		needARM64(t)
		r := rand.New(rand.NewSource(seed))
		// Padded strides can spread a few thousand elements over
		// megabytes, which take seconds to fill under qemu: redraw those
		// (a fuzz worker has 10 s per input).
		p := randomProblem(r, 2000)
		for n, err := p.SrcBytes(); err != nil || n > 1<<18; n, err = p.SrcBytes() {
			p = randomProblem(r, 2000)
		}
		red := reductions[int(kind)%len(reductions)]
		p.Reduction = red.r
		withBinaries(r, p, int(operands)%(plan.MaxBinary+1))
		withTrailingNear(r, p) // last, after the binaries: vfn.Tolerance
		checkKind(t, r, red.name, p, 0, specials, specials && seed%2 == 0, tails, false, []int64{0, 1 + r.Int63n(9)})
		kerneltest.CheckWideEmitted(t, r, func(pl *plan.Plan) error {
			_, err := Emit(pl)
			return err
		}, nativeTakesPlan)
	})
}
