package reduce_test

import (
	"fmt"
	"sync"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/reduce"
)

// BFloat16 is a framework's own bf16 type: its bits, as a uint16.
type BFloat16 uint16

// The mean over the last axis of a bf16 [batch, seq, hidden] tensor
// (a layer norm's first step), with f32 results.
func ExampleMean_bf16() {
	batch, seq, hidden := 2, 3, 4
	x := make([]BFloat16, batch*seq*hidden)
	for i := range x {
		x[i] = BFloat16(dtypes.F32ToBF16(float32(i % hidden))) // each row: 0 1 2 3
	}
	y := make([]float32, batch*seq)
	err := reduce.Mean(y, x, []int{batch, seq, hidden}, []int{-1}, reduce.SrcType(dtypes.BF16))
	fmt.Println(y, err)
	// Output: [1.5 1.5 1.5 1.5 1.5 1.5] <nil>
}

// Global average pooling over an NHWC tensor: the mean over H and W,
// keeping them as 1s ([N, 1, 1, C]).
func ExampleMean_globalAveragePooling() {
	n, h, w, c := 1, 2, 2, 3
	x := make([]float32, n*h*w*c)
	for i := range x {
		x[i] = float32(i) // channel k holds k, k+3, k+6, k+9
	}
	y := make([]float32, n*c)
	err := reduce.Mean(y, x, []int{n, h, w, c}, []int{1, 2}, reduce.KeepDims(true))
	fmt.Println(y, err)
	// Output: [4.5 5.5 6.5] <nil>
}

// Global average pooling of a u8 NHWC feature map, u8 in and out: the
// sums are exact, the means rounded to nearest even.
func ExampleMean_u8GlobalAveragePooling() {
	n, h, w, c := 1, 2, 2, 3
	x := []uint8{
		10, 200, 0,
		11, 201, 255,
		12, 202, 255,
		12, 203, 255,
	}
	y := make([]uint8, n*c)
	err := reduce.Mean(y, x, []int{n, h, w, c}, []int{1, 2}, reduce.KeepDims(true))
	fmt.Println(y, err) // 11.25, 201.5 (a tie: to even), 191.25
	// Output: [11 202 191] <nil>
}

// A fused post-op: the row means of a [2, 3] tensor through a ReLU and
// then a clamp to [0, 2], applied in f32 before dst is written.
func ExampleMean_postOps() {
	x := []float32{-1, -2, -3, 1, 2, 6} // row means -2 and 3
	y := make([]float32, 2)
	err := reduce.Mean(y, x, []int{2, 3}, []int{1}, reduce.Post(reduce.PostReLU, 0, 0), reduce.Post(reduce.PostClamp, 0, 2))
	fmt.Println(y, err)
	// Output: [0 2] <nil>
}

// ReduceMax with axes known only at run time: every call with a new
// axes value compiles a kernel once; DstDims says how big dst must be.
func ExampleMax_runtimeAxes() {
	x := []float32{1, 5, 2, 8, 3, 4} // [2, 3]
	for _, axes := range [][]int{{0}, {-1}, {0, 1}} {
		dims, err := reduce.DstDims([]int{2, 3}, axes)
		if err != nil {
			fmt.Println(err)
			return
		}
		size := 1
		for _, d := range dims {
			size *= d
		}
		y := make([]float32, size)
		err = reduce.Max(y, x, []int{2, 3}, axes)
		fmt.Println(axes, dims, y, err)
	}
	// Output:
	// [0] [3] [8 5 4] <nil>
	// [-1] [2] [5 8] <nil>
	// [0 1] [] [8] <nil>
}

// Compile once, run from 16 goroutines: the first call of a problem
// compiles its kernel, every other call (from any goroutine) finds it in
// the cache and allocates nothing.
func ExampleSum_goroutines() {
	x := make([]float32, 16*1000)
	for i := range x {
		x[i] = float32(i / 1000) // row g holds g 1000 times
	}
	sums := make([]float32, 16)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			row := x[g*1000 : (g+1)*1000]
			if err := reduce.Sum(sums[g:g+1], row, []int{1000}, []int{0}); err != nil {
				fmt.Println(err)
			}
		})
	}
	wg.Wait()
	fmt.Println(sums)
	// Output: [0 1000 2000 3000 4000 5000 6000 7000 8000 9000 10000 11000 12000 13000 14000 15000]
}

// An ONNX ReduceLogSumExp node at opset 18, whose axes arrive as an int64
// tensor; keepdims defaults to 1 as ONNX says.
func ExampleRunONNX_logSumExp() {
	node, err := reduce.NewONNXNode("ReduceLogSumExp", 18)
	if err != nil {
		fmt.Println(err)
		return
	}
	data := []float32{0, 0, 1000, 1000} // [2, 2]: the second row would overflow exp
	axes := []int64{1}                  // the node's second input
	reduced := make([]float32, 2)       // [2, 1]
	err = reduce.RunONNX(node, reduced, data, []int{2, 2}, axes)
	fmt.Printf("%.4f %v\n", reduced, err)
	// Output: [0.6931 1000.6932] <nil>
}

// The token counts of an int64 attention mask [batch, seq] (1 for a
// token, 0 for padding), as ONNX models compute them with ReduceSum: an
// exact integer sum.
func ExampleSum_int64Mask() {
	mask := []int64{
		1, 1, 1, 0, 0,
		1, 1, 1, 1, 1,
	}
	counts := make([]int64, 2)
	err := reduce.Sum(counts, mask, []int{2, 5}, []int{1})
	fmt.Println(counts, err)
	// Output: [3 5] <nil>
}

// Whether every row of a boolean tensor is all true, and whether any is.
func ExampleLogicalAnd() {
	valid := []bool{true, true, true, false, true, true}
	all, any := make([]bool, 2), make([]bool, 2)
	err1 := reduce.LogicalAnd(all, valid, []int{2, 3}, []int{1})
	err2 := reduce.LogicalOr(any, valid, []int{2, 3}, []int{1})
	fmt.Println(all, any, err1, err2)
	// Output: [true false] [true true] <nil> <nil>
}

// An f64 sum keeps what f32 would lose: 1 + 1e-9 four thousand times is
// 4000.000004 in float64 (4000 in f32). f64 data is reduced in float64
// from end to end; a []float32 dst takes the result rounded once.
func ExampleSum_f64() {
	x := make([]float64, 2*4000)
	for i := range x {
		x[i] = 1 + 1e-9
	}
	y := make([]float64, 2)
	err := reduce.Sum(y, x, []int{2, 4000}, []int{1})
	fmt.Printf("%.6f %v\n", y, err)
	// Output: [4000.000004 4000.000004] <nil>
}
