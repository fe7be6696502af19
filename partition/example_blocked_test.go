package partition_test

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// A tensor in one of oneDNN's blocked layouts (here aBx8b: channels in
// blocks of 8, as oneDNN's convolutions leave them) is described by its
// logical dims and its format tag. Its buffer holds the padding of a
// channel count that is not a whole number of blocks: partition.MemSize
// says how many bytes. A global average pool over H and W, written to a
// blocked output, whose padding gdnn keeps zero.
func Example_blockedLayout() {
	const n, c, hw = 1, 3, 4
	src := graph.NewLogicalTensorBlocked(0, dtypes.F32, []int64{n, c, 2, 2}, "aBx8b")
	dst := graph.NewLogicalTensorBlocked(1, dtypes.F32, []int64{n, c, 1, 1}, "aBx8b")
	g := graph.New()
	if err := g.AddOp(graph.NewOp(0, graph.ReduceMean, "gap").AddInput(src).AddOutput(dst).
		SetAttr("axes", []int64{2, 3}).SetAttr("keep_dims", true)); err != nil {
		panic(err)
	}
	if err := g.Finalize(); err != nil {
		panic(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		panic(err)
	}
	cp, err := parts[0].Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{dst})
	if err != nil {
		panic(err)
	}
	srcBytes, _ := partition.MemSize(src)
	dstBytes, _ := partition.MemSize(dst)
	fmt.Println("src bytes", srcBytes, "dst bytes", dstBytes)

	// Element (0, ch, h, w) lives at ((h*2+w)*8 + ch): one block of 8
	// channels per spatial position; channels 3..7 are padding.
	data := make([]float32, srcBytes/4)
	for i := range data {
		data[i] = 1e30 // padding is never read
	}
	for ch := 0; ch < c; ch++ {
		for s := 0; s < hw; s++ {
			data[s*8+ch] = float32(10*ch + s)
		}
	}
	res := make([]float32, dstBytes/4)
	srcT, err := partition.NewTensor(src, data)
	if err != nil {
		panic(err)
	}
	dstT, err := partition.NewTensor(dst, res)
	if err != nil {
		panic(err)
	}
	if err := cp.Execute([]partition.Tensor{srcT}, []partition.Tensor{dstT}); err != nil {
		panic(err)
	}
	fmt.Println("means", res[:c], "padding", res[c:])
	// Output:
	// src bytes 128 dst bytes 32
	// means [1.5 11.5 21.5] padding [0 0 0 0 0]
}
