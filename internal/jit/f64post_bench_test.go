package jit

import (
	"fmt"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkF64PostOp times an f64 sum whose outputs take a post-op built
// on the exp (package vf64's, machine code in the native kernel's
// epilogue) against the interpreter running the same plan, in one
// thread: 16Ki rows of 16 elements, so that the post-op is a large part
// of the work.
func BenchmarkF64PostOp(b *testing.B) {
	for _, k := range []ops.Kind{ops.Sigmoid, ops.Tanh, ops.GELUTanh, ops.SoftPlus, ops.GELUErf} {
		p := kerneltest.DenseProblem([]int64{16384, 16}, []int{1}, dtypes.F64)
		p.Reduction = plan.AlgSum.Reduction(0, 0)
		p.PostOps = []plan.PostOp{{Kind: k, Beta: 1}}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			b.Fatal(err)
		}
		sb, _ := p.SrcBytes()
		db, _ := p.DstBytes()
		src, dst := make([]byte, sb), make([]byte, db)
		for i := range int64(sb / 8) {
			plan.StoreF64(dtypes.F64, src, i, float64(i%97)/97-0.5)
		}
		kern, err := Compile(pl)
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []string{"interp", "jit"} {
			b.Run(fmt.Sprintf("%v/impl=%s", k, impl), func(b *testing.B) {
				withThreads(b, 1)
				if impl == "jit" && kern.Impl() == "interp" {
					b.Fatalf("%v runs in the interpreter: %s", pl, kern.Why())
				}
				b.SetBytes(int64(sb + db))
				b.ResetTimer()
				for range b.N {
					var err error
					if impl == "jit" {
						err = kern.Run(src, dst, nil)
					} else {
						err = interp.Run(pl, src, dst, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
