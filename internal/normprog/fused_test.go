package normprog

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
)

// TestFusedChosen: the anchor shapes whose normalized dims are innermost
// run as the fused kernel on every JIT ISA, and the passes elsewhere.
func TestFusedChosen(t *testing.T) {
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		for _, s := range benchShapes {
			for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
				p, err := Compile(benchDesc(s.kind, s.dims, s.norm, dt))
				if err != nil {
					t.Fatal(err)
				}
				if fused := p.full.fused != nil; fused != (isa != jit.None) {
					t.Errorf("%s %v on %v: fused %v", s.label, dt, isa, fused)
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}
