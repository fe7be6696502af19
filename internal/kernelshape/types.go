package kernelshape

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// Types is a plan's element types and sizes as a kernel addresses them:
// src, dst and each binary operand, in the order of the post-ops. Both
// emitters embed it.
type Types struct {
	SrcDT, DstDT     dtypes.DataType
	SrcSize, DstSize int64 // element sizes in bytes
	NBin             int   // binary post-ops
	BinDT            [plan.MaxBinary]dtypes.DataType
	BinSize          [plan.MaxBinary]int64
}

// TypesOf returns pl's element types and sizes.
func TypesOf(pl *plan.Plan) Types {
	t := Types{SrcDT: pl.SrcDT, DstDT: pl.DstDT, SrcSize: int64(pl.SrcDT.Size()), DstSize: int64(pl.DstDT.Size())}
	for _, op := range pl.PostOps {
		if op.Kind.IsBinary() {
			t.BinDT[t.NBin] = op.BinDT
			t.BinSize[t.NBin] = int64(op.BinDT.Size())
			t.NBin++
		}
	}
	return t
}

// ElemTypes returns t: the emitters embed Types, and so hand it to the
// shapes here.
func (t *Types) ElemTypes() *Types { return t }

// BinSizes are the binary operands' element sizes.
func (t *Types) BinSizes() []int64 { return t.BinSize[:t.NBin] }

// StepsOf converts a plan loop's element strides to byte steps.
func (t *Types) StepsOf(l *plan.Loop) Steps { return StepsOf(l, t.SrcSize, t.DstSize, t.BinSizes()) }
