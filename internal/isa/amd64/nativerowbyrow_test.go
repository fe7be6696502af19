package amd64

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeRowByRowKernels emits column plans of the native kernel as
// the runtime's stage-1 chunks of long rows are (one reduced loop, a
// contiguous row of outputs) under the RowByRow hint and without it, on
// every ISA of the machine. A kind whose partials are its lanes must take
// the row-by-row code (other code than the column blocks') and give the
// column blocks' bytes exactly, on data with NaNs, infinities, signed
// zeros and integer extremes: each lane takes its rows in the column
// block's order from the same identity. Exact data is also held to the
// interpreter and the exact oracle, f64 to the oracle's bounds. Kinds
// the row by row does not take (booleans' truths, an integer mean, an
// f64 dst rounded to f32) must emit the column code unchanged. Rows of
// widths with elements past the last whole vector (1-, 2-, 4- and
// 8-byte lanes) and padded rows.
func TestNativeRowByRowKernels(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(23))
	type kind struct {
		sdt, ddt dtypes.DataType
		red      plan.Reduction
		takes    bool
	}
	var kinds []kind
	for _, red := range append([]plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0),
		plan.AlgMin.Reduction(0, 0), plan.AlgMul.Reduction(0, 0)}, kerneltest.WideTransformed[:5]...) {
		kinds = append(kinds, kind{dtypes.F64, dtypes.F64, red, true})
	}
	for _, sdt := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S16, dtypes.U16, dtypes.S32, dtypes.U32, dtypes.S64, dtypes.U64} {
		for _, c := range kerneltest.ExactPairs(r, sdt) {
			if c.Reduction.Transform != plan.TransformNonzero && !c.Reduction.IsMean() {
				kinds = append(kinds, kind{sdt, c.DstDT, c.Reduction, true})
			}
		}
	}
	kinds = append(kinds,
		kind{dtypes.Boolean, dtypes.Boolean, plan.AlgMax.Reduction(0, 0), false},
		kind{dtypes.S32, dtypes.S32, plan.AlgMean.Reduction(0, 0), false},
		kind{dtypes.F64, dtypes.F32, plan.AlgSum.Reduction(0, 0), false})
	byRow := kernelconf.Hints{RowByRow: true}
	for i, k := range kinds {
		w := []int64{67, 130, 203, 97}[i%4]
		rows, pad := int64(40+i%3), []int64{0, 5}[i%2]
		p := kerneltest.DenseProblem([]int64{rows, w}, []int{0}, k.sdt)
		p.DstDT, p.Reduction = k.ddt, k.red
		p.SrcStrides[0] = w + pad
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		sb, _ := p.SrcBytes()
		src := make([]byte, sb)
		if k.sdt == dtypes.F64 {
			kerneltest.FillWide(r, k.sdt, src, true)
		} else {
			kerneltest.FillExact(r, k.sdt, src)
		}
		what := fmt.Sprintf("%v %v->%v %dx%d pad %d", k.red, k.sdt, k.ddt, rows, w, pad)
		for _, isa := range isaList {
			col, err := EmitHinted(pl, kernelconf.Hints{}, isa.o)
			if err != nil {
				t.Fatalf("%s %s: %v", isa.name, what, err)
			}
			rb, err := EmitHinted(pl, byRow, isa.o)
			if err != nil {
				t.Fatalf("%s %s hinted: %v", isa.name, what, err)
			}
			if took := !bytes.Equal(col.Text, rb.Text); took != k.takes {
				t.Fatalf("%s %s: row by row %v, want %v", isa.name, what, took, k.takes)
			}
			want := kerneltest.Dst(t, p, 0xa5)
			run := func(code plan.Code, dst []byte) {
				kk := kerneltest.Map(t, code)
				defer kk.Release()
				f := kerneltest.NewFence(t, true)
				defer f.Free()
				fs, fd := f.Place(src), f.Place(dst)
				kk.RunBlocks(pl, fs, fd, nil, 0)
				copy(dst, fd)
			}
			run(col, want)
			got := kerneltest.Dst(t, p, 0xa5)
			run(rb, got)
			if !bytes.Equal(got, want) {
				t.Errorf("%s %s: row by row differs from the column blocks", isa.name, what)
			}
		}
		if k.sdt == dtypes.F64 {
			bounds := kerneltest.WideBounds(p, src, nil)
			runNativeHinted(t, isaList, byRow, p, src, nil, func(name string, dst []byte) {
				kerneltest.CheckWideBounds(t, name, p, bounds, dst, 0xa5)
			})
		} else {
			checkNativeExactHinted(t, isaList, byRow, p, src)
		}
	}
}
