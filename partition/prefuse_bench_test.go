package partition

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
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
			executeLoop(b, c, in, outs)
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
		b.ReportAllocs()
		for b.Loop() {
			for i := range sum {
				sum[i] = x[i] + skip[i]
			}
			if err := c.Execute(in, outs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rmsnorm_alone", func(b *testing.B) {
		b.SetBytes(int64(len(data[1])))
		executeLoop(b, c, in, outs)
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
