package arm64

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// The native kernel's f64 post-ops (nativepost.go) against the
// interpreter, bit for bit, and the oracle's bounds, as amd64's.

// nativeTakesPlan is kernelshape.NativeKindOf's refusal of pl, or nil.
func nativeTakesPlan(pl *plan.Plan) error {
	_, err := kernelshape.NativeKindOf(pl)
	return err
}

// wideGridReductions are f64 reductions whose results are exact in any
// order on FillWideGrid's data, so that the post-ops after them must
// give the interpreter's bits.
var wideGridReductions = []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0),
	plan.AlgMin.Reduction(0, 0), plan.AlgMean.Reduction(0, 0), plan.AlgNormLpSum.Reduction(2, 0),
	kerneltest.WideTransformed[2], kerneltest.WideTransformed[1]}

// TestNativeWidePostOps draws f64 problems with the post-ops the native
// kernel takes, operands of every type and layout, into f64 and f32
// dst, next to guard pages.
func TestNativeWidePostOps(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(51))
	ran, withOps := 0, 0
	for i := 0; i < 400; i++ {
		p := kerneltest.WideNativeProblem(r, 1000, wideGridReductions, kernelshape.NativeF64PostOpKinds())
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		specials := i%2 == 1
		src, want, bins := kerneltest.Buffers(t, p, nativeSentinel,
			func(_ dtypes.DataType, b []byte) { kerneltest.FillWideGrid(r, b, specials) },
			func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, specials) })
		if err := interp.Run(pl, src, want, bins); err != nil {
			t.Fatalf("interp: %v", err)
		}
		fence := kerneltest.NewFence(t, r.Intn(2) == 0)
		outs := runNativeBins(t, pl, src, bins, len(want), fence, []int64{0, 1})
		fence.Free()
		if outs == nil {
			continue
		}
		ran++
		if len(p.PostOps) > 0 {
			withOps++
		}
		for j, got := range outs {
			name := fmt.Sprintf("%v %v>%v post-ops %+v run %d", p.Reduction, p.SrcDT, p.DstDT, p.PostOps, j)
			if msg := kerneltest.WideInterpMismatch(p, got, want); msg != "" {
				t.Fatalf("%s: against the interpreter: %s\nplan %v", name, msg, pl)
			}
			kerneltest.CheckWide(t, name, p, src, got, bins, nativeSentinel)
		}
	}
	t.Logf("%d runs of machine code, %d with post-ops", ran, withOps)
	if withOps < 250 {
		t.Fatalf("%d runs of machine code, %d with post-ops: want 250 with post-ops", ran, withOps)
	}
}
