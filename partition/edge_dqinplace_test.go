package partition

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// TestDequantNormQuantInPlace: a Dequantize, a normalization and a
// Quantize back to the src's type, run with dst the src tensor itself,
// give the bytes the same partition gives into a dst of its own: rows,
// columns, GroupNorm, on every ISA and 1 to 3 threads.
func TestDequantNormQuantInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	var cases []dqNormCase
	for _, dt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		zp := int64(-3)
		if dt == dtypes.U8 {
			zp = 128
		}
		for _, c := range []dqNormCase{
			{kind: graph.SoftMax, dims: []int64{7, 37}},
			{kind: graph.SoftMax, dims: []int64{3, 300}},
			{kind: graph.LogSoftmax, dims: []int64{5, 64}},
			{kind: graph.SoftMax, dims: []int64{2, 9, 40}, before: 1},
			{kind: graph.LogSoftmax, dims: []int64{3, 17, 100}, before: 1},
			{kind: graph.LayerNorm, dims: []int64{6, 100}},
			{kind: graph.RMSNorm, dims: []int64{4, 2, 33}},
			{kind: graph.GroupNorm, dims: []int64{2, 4, 5, 3}},
			{kind: graph.GroupNorm, dims: []int64{3, 8, 70}},
		} {
			c.srcDT, c.quant, c.scale, c.zp, c.qScale, c.qZp = dt, dt, 0.05, zp, 0.02, zp/2
			if c.kind == graph.SoftMax {
				c.qScale = 1.0 / 256
			}
			cases = append(cases, c)
		}
	}
	for _, isa := range isaCaps() {
		prev := jit.SetMaxISA(isa)
		for _, c := range cases {
			name := fmt.Sprintf("%v %v %v axis -%d on %v", c.kind, c.srcDT, c.dims, c.before+1, isa)
			g := c.build(t)
			parts, err := Get(g, Fusion)
			must(t, err)
			if len(parts) != 1 || !parts[0].IsSupported() {
				t.Fatalf("%s: partitions %v", name, parts)
			}
			p := parts[0]
			cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(9, c.quant, nil)})
			must(t, err)
			n := int64(1)
			for _, d := range c.dims {
				n *= d
			}
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.UintN(256))
			}
			params := map[uint64][]byte{0: src}
			for _, id := range []uint64{3, 4} {
				w := c.dims[len(c.dims)-1]
				if c.kind == graph.GroupNorm {
					w = c.dims[1]
				}
				b := make([]byte, 4*w)
				for i := range w {
					dtypes.StoreF32(dtypes.F32, b, i, float32(0.5+r.Float64()))
				}
				params[id] = b
			}
			olt, err := cp.QueryLogicalTensor(9)
			must(t, err)
			run := func(threads int, inPlace bool) []byte {
				prevT := jit.SetThreads(threads)
				defer jit.SetThreads(prevT)
				in := append([]byte(nil), src...)
				var inT []Tensor
				for _, lt := range cp.Inputs() {
					b := params[lt.ID]
					if lt.ID == 0 {
						b = in
					}
					tt, err := NewTensor(lt, b)
					must(t, err)
					inT = append(inT, tt)
				}
				dst := make([]byte, n)
				if inPlace {
					dst = in
				}
				ot, err := NewTensor(olt, dst)
				must(t, err)
				if err := cp.Execute(inT, []Tensor{ot}); err != nil {
					t.Fatalf("%s (in place %v, %d threads): %v", name, inPlace, threads, err)
				}
				return dst
			}
			want := run(1, false)
			for threads := 1; threads <= 3; threads++ {
				if got := run(threads, true); !bytes.Equal(got, want) {
					i := 0
					for got[i] == want[i] {
						i++
					}
					t.Errorf("%s: in place on %d threads: dst[%d] = %d, out of place %d", name, threads, i, got[i], want[i])
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}
