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

// TestNativeLogSumExp: the native kernel's f64 log-sum-exp as amd64's
// test has it: random layouts and every kind of data of
// kerneltest.FillWideLSE, with and without post-ops, into f64 and f32
// dst next to guard pages, within kerneltest.LSEULP or LSEAbs of the
// interpreter and within the oracle's bounds.
func TestNativeLogSumExp(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(51))
	ran := 0
	shapes := map[kernelshape.NativeShape]int{}
	for i := 0; i < 400; i++ {
		p := kerneltest.WideLSEProblem(r, 2000, nil)
		if i%4 == 3 {
			p = kerneltest.WideLSEProblem(r, 2000, kernelshape.NativeF64PostOpKinds())
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		mode := i % kerneltest.WideLSEModes
		src, ref, bins := kerneltest.Buffers(t, p, nativeSentinel,
			func(_ dtypes.DataType, b []byte) { kerneltest.FillWideLSE(r, b, mode) },
			func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, false) })
		if err := interp.Run(pl, src, ref, bins); err != nil {
			t.Fatalf("interp: %v", err)
		}
		fence := kerneltest.NewFence(t, r.Intn(2) == 0)
		outs := runNativeBins(t, pl, src, bins, len(ref), fence, []int64{0, 1})
		fence.Free()
		if outs == nil {
			continue
		}
		ran++
		shapes[kernelshape.NativeShapeOf(pl, 2)]++
		for j, got := range outs {
			name := fmt.Sprintf("%v>%v post-ops %+v run %d (data %d)", p.SrcDT, p.DstDT, p.PostOps, j, mode)
			if msg := kerneltest.WideLSEMismatch(p, got, ref); msg != "" {
				t.Fatalf("%s: against the interpreter: %s\nplan %v", name, msg, pl)
			}
			kerneltest.CheckWide(t, name, p, src, got, bins, nativeSentinel)
		}
	}
	t.Logf("%d runs of machine code, shapes %v", ran, shapes)
	for _, s := range []kernelshape.NativeShape{kernelshape.NativeElement, kernelshape.NativeRow, kernelshape.NativeColumn} {
		if shapes[s] < 20 {
			t.Fatalf("shape %d ran %d plans, want 20 (shapes %v)", s, shapes[s], shapes)
		}
	}
}
