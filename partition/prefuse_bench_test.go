package partition

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/cpubench"
)

// BenchmarkResidualRMSNorm is a transformer block's residual connection
// and RMSNorm over [4, 512, 4096] f32: fused (the sum not kept, or kept as
// an output for the next residual), against the Add in plain Go then
// the RMSNorm partition, and the RMSNorm partition alone (of a sum
// computed before), what the fusion adds to.
func BenchmarkResidualRMSNorm(b *testing.B) {
	dims := []int64{4, 512, 4096}
	r := rand.New(rand.NewPCG(1, 2))
	for _, readSum := range []bool{false, true} {
		rg := residualGraph{kind: graph.RMSNorm, dims: dims, dt: dtypes.F32, sumDT: dtypes.F32, readSum: readSum}
		data := residualData(rg, r)
		name := "fused"
		if readSum {
			name = "fused_keepsum"
		}
		b.Run(name, func(b *testing.B) {
			parts, err := Get(rg.build(b), Fusion)
			must(b, err)
			c, in, outs := executable(b, parts[0], data)
			b.SetBytes(int64(len(data[1])))
			cpubench.Loop(b, func() error { return c.Execute(in, outs) })
		})
	}
	rg := residualGraph{kind: graph.RMSNorm, dims: dims, dt: dtypes.F32, sumDT: dtypes.F32}
	data := residualData(rg, r)
	g := graph.New()
	must(b, g.AddOp(graph.NewOp(3, graph.RMSNorm, "norm").AddInput(graph.NewLogicalTensor(10, dtypes.F32, dims)).
		AddInput(graph.NewLogicalTensor(4, dtypes.F32, dims[2:])).AddOutput(graph.NewLogicalTensorAny(12, dtypes.F32, nil)).
		SetAttr("begin_norm_axis", int64(-1)).SetAttr("epsilon", float32(1e-5))))
	must(b, g.Finalize())
	norm := onlySupported(b, g, Fusion)
	data[10] = make([]byte, len(data[1]))
	c, in, outs := executable(b, norm, data)
	x, skip, sum := f32View(data[1]), f32View(data[2]), f32View(data[10])
	b.Run("add_then_rmsnorm", func(b *testing.B) {
		b.SetBytes(int64(len(data[1])))
		cpubench.Loop(b, func() error {
			for i := range sum {
				sum[i] = x[i] + skip[i]
			}
			return c.Execute(in, outs)
		})
	})
	b.Run("rmsnorm_alone", func(b *testing.B) {
		b.SetBytes(int64(len(data[1])))
		cpubench.Loop(b, func() error { return c.Execute(in, outs) })
	})
}

// executable compiles p (outputs of layout any) and makes its tensors
// over data (outputs new buffers).
func executable(b testing.TB, p *Partition, data map[uint64][]byte) (*CompiledPartition, []Tensor, []Tensor) {
	var outs []graph.LogicalTensor
	for _, o := range p.Outputs() {
		outs = append(outs, graph.NewLogicalTensorAny(o.ID, o.DataType, nil))
	}
	c, err := p.Compile(p.Inputs(), outs)
	must(b, err)
	var inT, outT []Tensor
	for _, lt := range c.Inputs() {
		tt, err := NewTensor(lt, data[lt.ID])
		must(b, err)
		inT = append(inT, tt)
	}
	for _, lt := range c.Outputs() {
		n, err := MemSize(lt)
		must(b, err)
		tt, err := NewTensor(lt, make([]byte, n))
		must(b, err)
		outT = append(outT, tt)
	}
	return c, inT, outT
}

// f32View is b's f32 values, sharing its memory.
func f32View(b []byte) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// BenchmarkMaskedMeanPooling is issue S9: x [8,128,384] f32 times a mask
// [8,128,1], averaged over the 128 tokens: fused, against the Multiply in
// plain Go then the ReduceMean partition, and the ReduceMean partition
// alone (of a product computed before).
func BenchmarkMaskedMeanPooling(b *testing.B) {
	dims, maskDims := []int64{8, 128, 384}, []int64{8, 128, 1}
	r := rand.New(rand.NewPCG(3, 4))
	x, mask := make([]float32, 8*128*384), make([]float32, 8*128)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range mask {
		mask[i] = float32(r.IntN(2))
	}
	data := map[uint64][]byte{1: bytesOf(x), 2: bytesOf(mask)}
	b.Run("fused", func(b *testing.B) {
		g := maskedGraph(b, graph.ReduceMean, graph.NewLogicalTensor(1, dtypes.F32, dims), graph.NewLogicalTensor(2, dtypes.F32, maskDims),
			[]int64{1}, false, false, false)
		c, in, outs := executable(b, onlySupported(b, g, Fusion), data)
		b.SetBytes(int64(len(data[1])))
		cpubench.Loop(b, func() error { return c.Execute(in, outs) })
	})
	g := graph.New()
	must(b, g.AddOp(graph.NewOp(2, graph.ReduceMean, "pool").AddInput(graph.NewLogicalTensor(10, dtypes.F32, dims)).
		AddOutput(graph.NewLogicalTensorAny(11, dtypes.F32, nil)).SetAttr("axes", []int64{1}).SetAttr("keep_dims", false)))
	must(b, g.Finalize())
	prod := make([]float32, len(x))
	data[10] = bytesOf(prod)
	c, in, outs := executable(b, onlySupported(b, g, Fusion), data)
	b.Run("multiply_then_reducemean", func(b *testing.B) {
		b.SetBytes(int64(len(data[1])))
		cpubench.Loop(b, func() error {
			for bt, m := range mask {
				row, dst := x[bt*384:(bt+1)*384], prod[bt*384:(bt+1)*384]
				for h, v := range row {
					dst[h] = v * m
				}
			}
			return c.Execute(in, outs)
		})
	})
	b.Run("reducemean_alone", func(b *testing.B) {
		b.SetBytes(int64(len(data[1])))
		cpubench.Loop(b, func() error { return c.Execute(in, outs) })
	})
}
