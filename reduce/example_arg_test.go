package reduce_test

import (
	"fmt"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/reduce"
)

// Pick the next token of each sequence: the index of the largest logit
// over the vocabulary (the last axis) of a [batch, vocab] tensor.
func ExampleArgMax() {
	logits := []float32{
		0.1, 2.5, -1, 2.5, 0, // two equal maxima: the first wins
		3, 1, float32(math.NaN()), 9, 0, // a NaN wins over every number
	}
	next := make([]int64, 2)
	if err := reduce.ArgMax(next, logits, []int{2, 5}, -1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(next)
	// The last of equal maxima instead, as ONNX's select_last_index.
	_ = reduce.ArgMax(next, logits, []int{2, 5}, -1, reduce.SelectLastIndex(true))
	fmt.Println(next)
	// Output:
	// [1 2]
	// [3 2]
}

// GoMLX's ArgMinMax over a byte buffer of the output's data type.
func ExampleArgMinMax() {
	x := []float32{2, 0, 7, -3, 4, 2}
	out := make([]byte, 2*4)
	if err := reduce.ArgMinMax(out, x, []int{2, 3}, 1, dtypes.S32, true); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0], out[4]) // little-endian int32s: 1 and 0
	// Output: 1 0
}

// An ONNX ArgMax node at opset 13: keepdims defaults to 1.
func ExampleRunONNXArg() {
	n, err := reduce.NewONNXArgNode("ArgMax", 13)
	if err != nil {
		fmt.Println(err)
		return
	}
	n.Axis = 1
	data := []float32{2, 1, 3, 10}
	dims, _ := n.DstDims([]int{2, 2})
	out := make([]int64, 2)
	if err := reduce.RunONNXArg(n, out, data, []int{2, 2}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dims, out)
	// Output: [2 1] [0 1]
}
