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

// TestNativeLogSumExp: the native kernel's f64 log-sum-exp over random
// layouts (rows, columns, single elements, tails) and every kind of
// data of kerneltest.FillWideLSE (NaN, ±Inf, all -Inf outputs, values
// near ±700 and beyond the f32 range), with and without post-ops, into
// f64 and f32 dst: within kerneltest.LSEULP or LSEAbs of the
// interpreter and within the oracle's bounds, on AVX-512 and AVX2.
func TestNativeLogSumExp(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(51))
	ran := 0
	shapes := map[kernelshape.NativeShape]int{}
	for i := 0; i < 600; i++ {
		p := kerneltest.WideLSEProblem(r, 3000, nil)
		if i%4 == 3 {
			p = kerneltest.WideLSEProblem(r, 3000, kernelshape.NativeF64PostOpKinds())
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		mode := i % kerneltest.WideLSEModes
		src, ref, bins := kerneltest.Buffers(t, p, 0xa5,
			func(_ dtypes.DataType, b []byte) { kerneltest.FillWideLSE(r, b, mode) },
			func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, false) })
		if err := interp.Run(pl, src, ref, bins); err != nil {
			t.Fatalf("interp: %v", err)
		}
		var want map[int64]kerneltest.Bounds
		n := runNativeBins(t, isaList, p, src, bins, func(name string, dst []byte) {
			if msg := kerneltest.WideLSEMismatch(p, dst, ref); msg != "" {
				t.Fatalf("%s: %v (data %d) against the interpreter: %s", name, pl, mode, msg)
			}
			if want == nil {
				want = kerneltest.WideBounds(p, src, bins)
			}
			kerneltest.CheckWideBounds(t, name, p, want, dst, 0xa5)
		})
		if n > 0 {
			shapes[kernelshape.NativeShapeOf(pl, 4)]++
		}
		ran += n
	}
	t.Logf("%d runs of machine code, shapes %v", ran, shapes)
	for _, s := range []kernelshape.NativeShape{kernelshape.NativeElement, kernelshape.NativeRow, kernelshape.NativeColumn} {
		if shapes[s] < 20 {
			t.Fatalf("shape %d ran %d plans, want 20 (shapes %v)", s, shapes[s], shapes)
		}
	}
}
