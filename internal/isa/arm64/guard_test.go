package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// runFenced runs p with src, dst and operands fenced on either side and
// checks the results against the reference, whole and in blocks of 3.
func runFenced(t *testing.T, r *rand.Rand, name string, p *plan.Problem) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	src0, dst0, bins0 := buffersFor(t, exactFiller{r, 16}.fill, p, false, false)
	want, outs := kerneltest.Reference(p, src0, dst0, bins0)
	kerneltest.CheckFenced(t, name+": ", targets(t), p, pl, src0, dst0, bins0, []int64{0, 3}, want, outs)
}

// TestGuardPages runs every kernel shape with every tail length 0..2V+3
// and every dtype pair next to guard pages, the operand type rotating.
func TestGuardPages(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(7))
	for n := int64(0); n <= 2*lanes+3; n++ {
		for i, pr := range pairs {
			// The operand type rotates with the tail length.
			bdt := floatTypes[(int(n)+i)%len(floatTypes)]
			for _, s := range shapes(n, pr[0], pr[1], bdt) {
				runFenced(t, r, s.name, s.p)
			}
		}
	}
}
