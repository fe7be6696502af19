package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// The native kernel's f64 post-ops (nativepost.go) against the
// interpreter, bit for bit, and the oracle's bounds, on AVX-512 and AVX2.

// wideGridReductions are f64 reductions whose results are exact in any
// order on FillWideGrid's data, so that the post-ops after them must
// give the interpreter's bits.
var wideGridReductions = []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0),
	plan.AlgMin.Reduction(0, 0), plan.AlgMean.Reduction(0, 0), plan.AlgNormLpSum.Reduction(2, 0),
	kerneltest.WideTransformed[2], kerneltest.WideTransformed[1]}

// checkWidePostOps runs the f64 problem p on src and operands drawn from
// r against the interpreter and the oracle, and returns how many ISAs
// ran machine code.
func checkWidePostOps(t *testing.T, isaList []isaCase, r *rand.Rand, p *plan.Problem, specials bool) int {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	src, ref, bins := kerneltest.Buffers(t, p, 0xa5,
		func(_ dtypes.DataType, b []byte) { kerneltest.FillWideGrid(r, b, specials) },
		func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, specials) })
	if err := interp.Run(pl, src, ref, bins); err != nil {
		t.Fatalf("interp: %v", err)
	}
	// The oracle's bounds once, for every run of every ISA.
	var want map[int64]kerneltest.Bounds
	return runNativeBins(t, isaList, p, src, bins, func(name string, dst []byte) {
		if msg := kerneltest.WideInterpMismatch(p, dst, ref); msg != "" {
			t.Fatalf("%s post-ops %+v: against the interpreter: %s", name, p.PostOps, msg)
		}
		if want == nil {
			want = kerneltest.WideBounds(p, src, bins)
		}
		kerneltest.CheckWideBounds(t, name, p, want, dst, 0xa5)
	})
}

// TestNativeWidePostOps draws f64 problems with the post-ops the native
// kernel takes, operands of every type and layout, into f64 and f32 dst.
func TestNativeWidePostOps(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(51))
	ran, withOps := 0, 0
	for i := 0; i < 1500; i++ {
		p := kerneltest.WideNativeProblem(r, 3000, wideGridReductions, kernelshape.NativeF64PostOpKinds())
		n := checkWidePostOps(t, isaList, r, p, i%2 == 1)
		ran += n
		if len(p.PostOps) > 0 {
			withOps += n
		}
	}
	t.Logf("%d runs of machine code, %d with post-ops", ran, withOps)
	if withOps < 1000 {
		t.Fatalf("%d runs of machine code, %d with post-ops: want 1000 with post-ops", ran, withOps)
	}
}

// nativeTakesPlan is kernelshape.NativeKindOf's refusal of pl, or nil.
func nativeTakesPlan(pl *plan.Plan) error {
	_, err := kernelshape.NativeKindOf(pl)
	return err
}
