package reduce

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// f64Bytes views an f64 slice as the bytes the oracle reads.
func f64Bytes[E ~float64 | ~float32](x []E) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*int(unsafe.Sizeof(x[0])))
}

// TestF64Kinds runs every kind over f64 src into f64 and into f32 dst,
// over several axes, against the exact oracle (kerneltest.CheckWide).
func TestF64Kinds(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	dims := []int{6, 300, 5}
	n := 6 * 300 * 5
	src := make([]float64, n)
	kerneltest.FillWide(r, dtypes.F64, f64Bytes(src), false)
	for i := range src {
		src[i] = math.Abs(src[i]) // LogSum takes the log of the sum
	}
	for _, axes := range [][]int{{1}, {-1}, {0, 2}, {0, 1, 2}} {
		for op := range opCount {
			red, post := op.reduction()
			pos := make([]int, len(axes))
			for i, a := range axes {
				pos[i] = (a + 3) % 3
			}
			p := kerneltest.DenseProblem([]int64{6, 300, 5}, pos, dtypes.F64)
			p.Reduction = red
			if post != 0 {
				p.PostOps = []plan.PostOp{{Kind: post}}
			}
			outs, err := DstDims(dims, axes, KeepDims(true))
			if err != nil {
				t.Fatal(err)
			}
			m := 1
			for _, d := range outs {
				m *= d
			}
			y := make([]float64, m)
			if err := Reduce(op, y, src, dims, axes, KeepDims(true)); err != nil {
				t.Fatalf("%v %v: %v", op, axes, err)
			}
			kerneltest.CheckWide(t, op.String()+" f64", p, f64Bytes(src), f64Bytes(y), nil, 0)
			y32 := make([]float32, m)
			if err := Reduce(op, y32, src, dims, axes, KeepDims(true)); err != nil {
				t.Fatalf("%v %v f32 dst: %v", op, axes, err)
			}
			p.DstDT = dtypes.F32
			kerneltest.CheckWide(t, op.String()+" f64->f32", p, f64Bytes(src), f64Bytes(y32), nil, 0)
		}
	}
}

// TestF64Refusals: the pairs f64 does not make, each a clear error.
func TestF64Refusals(t *testing.T) {
	x64, x32 := make([]float64, 4), make([]float32, 4)
	y16, y64 := make([]uint16, 1), make([]float64, 1)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"f64 to bf16", Sum(y16, x64, []int{4}, []int{0}, DstType(dtypes.BF16)), "an f64 src goes to f64 or f32"},
		{"f32 to f64", Sum(y64, x32, []int{4}, []int{0}), "only an f64 src to f64"},
		{"f64 named f32", Sum(y64, x64, []int{4}, []int{0}, SrcType(dtypes.F32)), "src is a 64-bit float slice but its type is named f32"},
		{"s8 to f64", Sum(y64, make([]int8, 4), []int{4}, []int{0}), "only an f64 src to f64"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, status.InvalidDataType) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want InvalidDataType %q", c.name, c.err, c.want)
		}
	}
}

// TestF64ONNX: an ONNX ReduceSum and ReduceLogSumExp over double data
// (keepdims 1, axes as an input at opset 18).
func TestF64ONNX(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6} // 2x3
	for _, c := range []struct {
		op   string
		want []float64
	}{
		{"ReduceSum", []float64{6, 15}},
		{"ReduceLogSumExp", []float64{3 + math.Log(1+math.Exp(-1)+math.Exp(-2)), 6 + math.Log(1+math.Exp(-1)+math.Exp(-2))}},
	} {
		n, err := NewONNXNode(c.op, 18)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, 2)
		if err := RunONNX(n, y, x, []int{2, 3}, []int64{1}); err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		for i := range y {
			if math.Abs(y[i]-c.want[i]) > 1e-15*math.Abs(c.want[i]) {
				t.Errorf("%s: %v, want %v", c.op, y, c.want)
			}
		}
	}
}
