package partition_test

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// Int8 data enters as in oneDNN Graph: Dequantize -> ReduceMean ->
// Quantize, here a u8 global average pool over H and W of an NHWC
// feature map. The three ops compile into one partition: the kernel
// reads the u8 src, sums it exactly, applies the scales and zero points
// as post-ops and writes u8, with no f32 tensor in memory.
func Example_int8GlobalAveragePool() {
	const n, h, w, c = 1, 2, 2, 3
	src := graph.NewLogicalTensor(0, dtypes.U8, []int64{n, h, w, c})
	deq := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	mean := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
	dst := graph.NewLogicalTensorAny(3, dtypes.U8, nil)
	g := graph.New()
	for _, op := range []*graph.Op{
		graph.NewOp(0, graph.Dequantize, "dequant").AddInput(src).AddOutput(deq).
			SetAttr("scales", []float32{0.1}).SetAttr("zps", []int64{128}),
		graph.NewOp(1, graph.ReduceMean, "gap").AddInput(deq).AddOutput(mean).
			SetAttr("axes", []int64{1, 2}).SetAttr("keep_dims", true),
		graph.NewOp(2, graph.Quantize, "quant").AddInput(mean).AddOutput(dst).
			SetAttr("scales", []float32{0.05}).SetAttr("zps", []int64{10}),
	} {
		if err := g.AddOp(op); err != nil {
			panic(err)
		}
	}
	if err := g.Finalize(); err != nil {
		panic(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		panic(err)
	}
	p := parts[0]
	fmt.Println(len(parts), "partition:", p)
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	if err != nil {
		panic(err)
	}
	out, err := cp.QueryLogicalTensor(dst.ID)
	if err != nil {
		panic(err)
	}
	x := []uint8{ // NHWC: the 4 pixels of channels 0, 1, 2
		130, 100, 200,
		134, 100, 210,
		138, 100, 220,
		142, 100, 230,
	}
	y := make([]uint8, out.NumElements())
	srcT, err := partition.NewTensor(src, x)
	if err != nil {
		panic(err)
	}
	dstT, err := partition.NewTensor(out, y)
	if err != nil {
		panic(err)
	}
	if err := cp.Execute([]partition.Tensor{srcT}, []partition.Tensor{dstT}); err != nil {
		panic(err)
	}
	// Channel 0: mean 136 -> (136-128)*0.1 = 0.8 -> 0.8/0.05+10 = 26.
	// Channel 1: (100-128)*0.1 = -2.8 -> -56+10 = -46, saturated to 0.
	// Channel 2: (215-128)*0.1 = 8.7 -> 174+10 = 184.
	fmt.Println("dst", graph.DimsString(out.Dims), y)
	// Output:
	// 1 partition: partition 0 [Dequantize(0) -> ReduceMean(1) -> Quantize(2)] supported
	// dst 1x1x1x3 [26 0 184]
}
