package blocked

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/layout"
)

// BenchmarkLayouts times one reduction in a blocked layout beside the
// same problem in plain layouts that read memory in the same order (axb
// for channels innermost) and in the default one (abx):
//
//   - gap: global average pooling, NxCxHxW -> NxCx1x1, C a whole number
//     of blocks (one plain problem, no copy);
//   - gap_padded: C = 250 in blocks of 16 (a kept padded dim: boxes);
//   - cmean: the mean over C = 250 (a reduced padded dim: a repack).
func BenchmarkLayouts(b *testing.B) {
	cases := []struct {
		name   string
		dims   []int64
		reduce []bool
	}{
		{"gap", []int64{32, 256, 14, 14}, []bool{false, false, true, true}},
		{"gap_padded", []int64{32, 250, 14, 14}, []bool{false, false, true, true}},
		{"cmean", []int64{32, 250, 14, 14}, []bool{false, true, false, false}},
	}
	for _, c := range cases {
		for _, tag := range []string{"abx", "axb", "aBx16b"} {
			b.Run(c.name+"/"+tag, func(b *testing.B) {
				p := plan.Problem{Reduction: plan.AlgMean.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: c.dims, Reduce: c.reduce}
				sl, _ := layout.Parse(tag, 4)
				sd, err := sl.Desc(c.dims)
				if err != nil {
					b.Fatal(err)
				}
				dd := dstDims(&p)
				dl, _ := layout.Parse(tag, 4)
				ddesc, err := dl.Desc(dd)
				if err != nil {
					b.Fatal(err)
				}
				if !sl.Blocked() {
					sd = layout.Strided(c.dims, sl.Strides(c.dims))
					ddesc = layout.Strided(dd, dl.Strides(dd))
				}
				k, err := Compile(&p, sd, ddesc)
				if err != nil {
					b.Fatal(err)
				}
				src := make([]byte, sd.Span()*4)
				dst := make([]byte, ddesc.Span()*4)
				b.SetBytes(prod(c.dims) * 4)
				b.ResetTimer()
				for range b.N {
					if err := k.Run(src, dst, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
