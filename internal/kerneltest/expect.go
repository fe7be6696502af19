package kerneltest

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// Expect computes the outputs of p into a copy of dst: for each of the
// oracle's outputs outs (oracle.Reduce of p, or of a variant of it), the
// f32 value that value gives, then p's post-ops in f32 (plan.Eltwise,
// plan.Binary on the operands bins) and the rounding to p's dst type.
// written marks the dst elements that hold outputs.
func Expect(p *plan.Problem, outs []oracle.Output, dst []byte, bins [][]byte, value func(oracle.Output) float32) (want []byte, written map[int64]bool) {
	want = append([]byte(nil), dst...)
	written = map[int64]bool{}
	var binDT []dtypes.DataType
	for _, op := range p.PostOps {
		if op.Kind.IsBinary() {
			binDT = append(binDT, op.BinDT)
		}
	}
	for _, o := range outs {
		v := value(o)
		bi := 0
		for _, op := range p.PostOps {
			if !op.Kind.IsBinary() {
				v = plan.Eltwise(op.Kind, op.Alpha, op.Beta, v)
				continue
			}
			v = plan.Binary(op.Kind, v, dtypes.LoadF32(binDT[bi], bins[bi], o.Bins[bi]))
			bi++
		}
		dtypes.StoreF32(p.DstDT, want, o.Dst, v)
		written[o.Dst] = true
	}
	return want, written
}

// Reference computes p into a copy of dst from the oracle's combined
// values (exact, as the tests' exact data make them), rounded to f32 and
// finalized in f32 as the kernels do (oracle.FinalizeF32: for the mean
// a true f32 division by N), then the post-ops and the rounding to the
// dst type (Expect). written marks the dst elements that hold outputs.
func Reference(p *plan.Problem, src, dst []byte, bins [][]byte) (want []byte, written map[int64]bool) {
	return Expect(p, oracle.Reduce(p, src), dst, bins, func(o oracle.Output) float32 {
		return oracle.FinalizeF32(p.Reduction, float32(o.Acc), o.N)
	})
}
