package partition

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// int8Graph builds src (2x3, type sdt) -> op over axis 1 -> [ReLU (f32) ->
// Add of a per-row f32 operand] -> dst (ddt), keep_dims. With post-ops the
// reduction writes an f32 intermediate and the Add stores to ddt.
func int8Graph(t *testing.T, op graph.OpKind, sdt, ddt dtypes.DataType, post bool) (*Partition, []graph.LogicalTensor, graph.LogicalTensor) {
	t.Helper()
	src := graph.NewLogicalTensor(0, sdt, []int64{2, 3})
	g := graph.New()
	redOut := graph.NewLogicalTensorAny(1, ddt, []int64{2, 1})
	if post {
		redOut = graph.NewLogicalTensorAny(1, dtypes.F32, []int64{2, 1})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.AddOp(graph.NewOp(0, op, "red").AddInput(src).AddOutput(redOut).
		SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
	ins, out := []graph.LogicalTensor{src}, redOut
	if post {
		relu := graph.NewLogicalTensorAny(2, dtypes.F32, []int64{2, 1})
		must(g.AddOp(graph.NewOp(1, graph.ReLU, "relu").AddInput(redOut).AddOutput(relu)))
		b := graph.NewLogicalTensor(3, dtypes.F32, []int64{2, 1})
		out = graph.NewLogicalTensorAny(4, ddt, []int64{2, 1})
		must(g.AddOp(graph.NewOp(2, graph.Add, "add").AddInput(relu).AddInput(b).AddOutput(out)))
		ins = append(ins, b)
	}
	must(g.Finalize())
	parts, err := Get(g, Fusion)
	must(err)
	if len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("partitions %v, want one supported", parts)
	}
	return parts[0], ins, out
}

// runInt8 compiles p and executes it on src bytes (and a per-row operand),
// returning dst decoded to float64.
func runInt8(t *testing.T, p *Partition, ins []graph.LogicalTensor, out graph.LogicalTensor, src []byte, operand []float32) []float64 {
	t.Helper()
	cp, err := p.Compile(ins, []graph.LogicalTensor{out})
	if err != nil {
		t.Fatal(err)
	}
	olt, err := cp.QueryLogicalTensor(out.ID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewTensor(ins[0], src)
	if err != nil {
		t.Fatal(err)
	}
	its := []Tensor{st}
	if len(ins) > 1 {
		bt, err := NewTensor(ins[1], operand)
		if err != nil {
			t.Fatal(err)
		}
		its = append(its, bt)
	}
	n, _ := MemSize(olt)
	dbuf := make([]byte, n)
	dt, err := NewTensor(olt, dbuf)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Execute(its, []Tensor{dt}); err != nil {
		t.Fatal(err)
	}
	res := make([]float64, 2)
	for i := range res {
		res[i] = load(olt.DataType, dbuf, int64(i))
	}
	return res
}

// TestInt8Reductions: every Reduce* op takes s8 and u8 src and stores any
// reduction dst type, rounded to nearest even and saturated into an
// integer dst, on every ISA.
func TestInt8Reductions(t *testing.T) {
	// Rows of s8 {-128, 127, 2} and {3, 4, 5}; of u8 {255, 254, 3} and {1, 2, 2}.
	srcs := map[dtypes.DataType][]byte{
		dtypes.S8: {0x80, 0x7f, 2, 3, 4, 5},
		dtypes.U8: {255, 254, 3, 1, 2, 2},
	}
	rows := map[dtypes.DataType][2][]float64{
		dtypes.S8: {{-128, 127, 2}, {3, 4, 5}},
		dtypes.U8: {{255, 254, 3}, {1, 2, 2}},
	}
	ops := []graph.OpKind{graph.ReduceSum, graph.ReduceMean, graph.ReduceMax, graph.ReduceMin, graph.ReduceProd, graph.ReduceL1, graph.ReduceL2}
	forEachISA(t, func(t *testing.T, _ jit.ISA) {
		for sdt, src := range srcs {
			for _, op := range ops {
				for _, ddt := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32, dtypes.F32, dtypes.BF16, dtypes.F16} {
					p, ins, out := int8Graph(t, op, sdt, ddt, false)
					got := runInt8(t, p, ins, out, src, nil)
					for i, row := range rows[sdt] {
						want := storeAs(ddt, float32(reduceRow(op, row)))
						if got[i] != want {
							t.Errorf("%s %s->%s row %d: got %v, want %v", op, sdt, ddt, i, got[i], want)
						}
					}
				}
			}
		}
	})
}

// reduceRow is the float64 value of op over row.
func reduceRow(op graph.OpKind, row []float64) float64 {
	acc := map[graph.OpKind]float64{graph.ReduceProd: 1, graph.ReduceMax: math.Inf(-1), graph.ReduceMin: math.Inf(1)}[op]
	for _, x := range row {
		switch op {
		case graph.ReduceProd:
			acc *= x
		case graph.ReduceMax:
			acc = math.Max(acc, x)
		case graph.ReduceMin:
			acc = math.Min(acc, x)
		case graph.ReduceL1:
			acc += math.Abs(x)
		case graph.ReduceL2:
			acc += x * x
		default:
			acc += x
		}
	}
	switch op {
	case graph.ReduceMean:
		return acc / float64(len(row))
	case graph.ReduceL2:
		return math.Sqrt(acc)
	}
	return acc
}

// storeAs is v stored to dt and read back: rounded to nearest even and
// saturated for the integers.
func storeAs(dt dtypes.DataType, v float32) float64 {
	switch dt {
	case dtypes.S8:
		return float64(dtypes.F32ToS8(v))
	case dtypes.U8:
		return float64(dtypes.F32ToU8(v))
	case dtypes.S32:
		return float64(dtypes.F32ToS32(v))
	case dtypes.BF16:
		return float64(dtypes.BF16ToF32(dtypes.F32ToBF16(v)))
	case dtypes.F16:
		return float64(dtypes.F16ToF32(dtypes.F32ToF16(v)))
	}
	return float64(v)
}

// TestInt8PostOps: post-ops after an 8-bit reduction compute in f32 (a
// binary operand stays f32) and the chain's result is rounded to nearest
// even and saturated once, into the integer dst.
func TestInt8PostOps(t *testing.T) {
	// u8 rows {1, 2, 2} (mean 5/3) and {0, 0, 1} (mean 1/3); operand per row.
	src := []byte{1, 2, 2, 0, 0, 1}
	cases := []struct {
		ddt     dtypes.DataType
		operand []float32
		want    [2]float64
	}{
		// 5/3 + 0.8333 = 2.4999... -> 2, not round(5/3)=2 + 1 = 3: one rounding at the end.
		{dtypes.S8, []float32{0.8333, -0.5}, [2]float64{2, 0}},
		// relu(1/3) - 100 saturates at 0 in u8; 5/3+300 at 255.
		{dtypes.U8, []float32{300, -100}, [2]float64{255, 0}},
		{dtypes.S32, []float32{0.5 - 5.0/3, 2.1666667}, [2]float64{0, 2}},
		{dtypes.F32, []float32{1, 1}, [2]float64{float64(float32(5.0/3) + 1), float64(float32(1.0/3) + 1)}},
	}
	forEachISA(t, func(t *testing.T, _ jit.ISA) {
		for _, c := range cases {
			p, ins, out := int8Graph(t, graph.ReduceMean, dtypes.U8, c.ddt, true)
			got := runInt8(t, p, ins, out, src, c.operand)
			if got[0] != c.want[0] || got[1] != c.want[1] {
				t.Errorf("u8 mean+relu+add -> %s: got %v, want %v", c.ddt, got, c.want)
			}
		}
	})
}

// TestFloatChainToInt: an f32 chain may end in an integer tensor (a gdnn
// extension mirroring oneDNN's reduction primitive, f32 src into s8 dst):
// one partition, rounded once to nearest even (2.5 -> 2) and saturated.
func TestFloatChainToInt(t *testing.T) {
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{3, 3})
		mid := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
		out := graph.NewLogicalTensorAny(2, dtypes.S8, nil)
		g := graph.New()
		must(t, g.AddOp(graph.NewOp(0, graph.ReduceSum, "sum").AddInput(src).AddOutput(mid).SetAttr("axes", []int64{1})))
		must(t, g.AddOp(graph.NewOp(1, graph.ReLU, "relu").AddInput(mid).AddOutput(out)))
		must(t, g.Finalize())
		p := onlySupported(t, g, Fusion)
		if len(p.Ops()) != 2 {
			t.Fatalf("partition %v, want the ReLU fused", p)
		}
		cp, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensor(2, dtypes.S8, []int64{3})})
		must(t, err)
		wantImpl(t, cp, isa)
		in, err := NewTensor(src, []float32{1.25, 2.5, -1.25, -3, -1, 0.25, 100, 50, 0.5})
		must(t, err)
		dst := make([]int8, 3)
		o, err := NewTensor(graph.NewLogicalTensor(2, dtypes.S8, []int64{3}), dst)
		must(t, err)
		must(t, cp.Execute([]Tensor{in}, []Tensor{o}))
		if want := []int8{2, 0, 127}; !slices.Equal(dst, want) {
			t.Fatalf("dst %v, want %v", dst, want)
		}
	})
}

// TestInt8Refusals: what stays refused names the tensor and its type.
func TestInt8Refusals(t *testing.T) {
	t.Run("u8 data in an []int8", func(t *testing.T) {
		_, err := NewTensor(graph.NewLogicalTensor(0, dtypes.U8, []int64{2}), []int8{1, 2})
		if !errors.Is(err, graph.InvalidDataType) || !strings.Contains(err.Error(), "tensor 0 is u8 but data is []int8") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("s8 data in an []int8", func(t *testing.T) {
		if _, err := NewTensor(graph.NewLogicalTensor(0, dtypes.S8, []int64{2}), []int8{1, 2}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("execute with an s8 tensor where u8 was compiled", func(t *testing.T) {
		p, ins, out := int8Graph(t, graph.ReduceSum, dtypes.U8, dtypes.S32, false)
		cp, err := p.Compile(ins, []graph.LogicalTensor{out})
		if err != nil {
			t.Fatal(err)
		}
		olt, _ := cp.QueryLogicalTensor(out.ID)
		st, _ := NewTensor(graph.NewLogicalTensor(0, dtypes.S8, []int64{2, 3}), make([]int8, 6))
		dt, _ := NewTensor(olt, make([]int32, 2))
		err = cp.Execute([]Tensor{st}, []Tensor{dt})
		if !errors.Is(err, graph.InvalidDataType) || !strings.Contains(err.Error(), "tensor 0 is s8, compiled as u8") {
			t.Fatalf("err = %v", err)
		}
	})
}
