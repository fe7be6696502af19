package partition

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/x448/float16"
)

func compiledMean(t *testing.T) (*CompiledPartition, graph.LogicalTensor, graph.LogicalTensor) {
	t.Helper()
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 8})
	g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, true)
	c, err := onlySupported(t, g, Fusion).Compile([]graph.LogicalTensor{src},
		[]graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	must(t, err)
	out, _ := c.QueryLogicalTensor(1)
	return c, src, out
}

func TestExecuteRejectsBadTensors(t *testing.T) {
	c, src, out := compiledMean(t)
	srcData := make([]float32, 32)
	dstData := make([]float32, 4)
	good := func(lt graph.LogicalTensor, d any) Tensor {
		tt, err := NewTensor(lt, d)
		must(t, err)
		return tt
	}
	raw := func(lt graph.LogicalTensor, b []byte) Tensor { return Tensor{lt: lt, buf: b} }
	st, dt := good(src, srcData), good(out, dstData)
	other := graph.NewLogicalTensor(9, dtypes.F32, []int64{4, 8})
	srcBF := src.Clone()
	srcBF.DataType = dtypes.BF16
	src48 := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 9})
	srcT := graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{4, 8}, []int64{1, 4})
	cases := []struct {
		name    string
		in, out []Tensor
		status  graph.Status
		msg     string
	}{
		{"missing input", nil, []Tensor{dt}, graph.InvalidArguments, "input port tensor 0 is not given"},
		{"missing output", []Tensor{st}, nil, graph.InvalidArguments, "output port tensor 1 is not given"},
		{"unknown id", []Tensor{st, good(other, srcData)}, []Tensor{dt}, graph.InvalidArguments, "tensor 9 is not an input port"},
		{"twice", []Tensor{st, st}, []Tensor{dt}, graph.InvalidArguments, "given twice"},
		{"zero input", []Tensor{{}}, []Tensor{dt}, graph.InvalidArguments, "input tensor at position 0 is a zero Tensor"},
		{"zero output", []Tensor{st}, []Tensor{dt, {}}, graph.InvalidArguments, "output tensor at position 1 is a zero Tensor"},
		{"nil buffer", []Tensor{raw(src, nil)}, []Tensor{dt}, graph.InvalidArguments, "nil buffer"},
		{"short src", []Tensor{raw(src, make([]byte, 127))}, []Tensor{dt}, graph.InvalidArguments, "needs 128 bytes, its buffer has 127"},
		{"short dst", []Tensor{st}, []Tensor{raw(out, make([]byte, 15))}, graph.InvalidArguments, "needs 16 bytes"},
		{"wrong dtype", []Tensor{raw(srcBF, make([]byte, 64))}, []Tensor{dt}, graph.InvalidDataType, "is bf16, compiled as f32"},
		{"wrong dims", []Tensor{raw(src48, make([]byte, 4*36))}, []Tensor{dt}, graph.InvalidShape, "has dims 4x9, compiled as 4x8"},
		{"wrong strides", []Tensor{raw(srcT, make([]byte, 128))}, []Tensor{dt}, graph.InvalidShape, "strides 1x4, compiled as 8x1"},
		{"dst overlaps src", []Tensor{st}, []Tensor{good(out, srcData[28:])}, graph.InvalidArguments, "overlaps input tensor 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]float32(nil), dstData...)
			err := c.Execute(tc.in, tc.out)
			if !errors.Is(err, tc.status) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v with %q", err, tc.status, tc.msg)
			}
			for i := range dstData {
				if dstData[i] != before[i] {
					t.Fatal("a rejected Execute wrote the output")
				}
			}
		})
	}
	var nilC *CompiledPartition
	if err := nilC.Execute(nil, nil); !errors.Is(err, graph.InvalidArguments) {
		t.Fatal(err)
	}
}

// TestExecuteReadsStridelessTensorsAsDense: Execute reads a tensor that
// gives no strides (or has layout any) as dense row-major, as Compile
// does, so it cannot stand for a compiled layout that is not dense; and a
// layout value that is none of oneDNN's is refused by Compile and Execute.
func TestExecuteReadsStridelessTensorsAsDense(t *testing.T) {
	src := graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{2, 4}, []int64{1, 2}) // column-major
	g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, true)
	p := onlySupported(t, g, Fusion)
	anyOut := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	c, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{anyOut})
	must(t, err)
	out, err := c.QueryLogicalTensor(1)
	must(t, err)
	data := []float32{1, 2, 3, 4, 5, 6, 7, 8} // rows {1,3,5,7} and {2,4,6,8}
	dst := make([]float32, 2)
	buf := func(f []float32) []byte { return bytesOf(f) }
	outT := Tensor{lt: out, buf: buf(dst)}

	noStrides := src.Clone()
	noStrides.Strides = nil
	layoutAny := graph.NewLogicalTensorAny(0, dtypes.F32, []int64{2, 4})
	for name, lt := range map[string]graph.LogicalTensor{"no strides": noStrides, "layout any": layoutAny} {
		err := c.Execute([]Tensor{{lt: lt, buf: buf(data)}}, []Tensor{outT})
		if !errors.Is(err, graph.InvalidShape) || !strings.Contains(err.Error(), "has strides 4x1 (dense: it gives no strides), compiled as 1x2") {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := src.Clone()
	bad.Layout = graph.Layout(7)
	if err := c.Execute([]Tensor{{lt: bad, buf: buf(data)}}, []Tensor{outT}); !errors.Is(err, graph.InvalidArguments) ||
		!strings.Contains(err.Error(), "has layout Layout(7)") {
		t.Errorf("Execute with layout 7: %v", err)
	}
	if _, err := p.Compile([]graph.LogicalTensor{bad}, []graph.LogicalTensor{anyOut}); !errors.Is(err, graph.InvalidArguments) ||
		!strings.Contains(err.Error(), "has layout Layout(7)") {
		t.Errorf("Compile with layout 7: %v", err)
	}

	// The compiled output is dense: an output tensor of layout any matches it.
	anyDst := graph.NewLogicalTensorAny(1, dtypes.F32, []int64{2, 1})
	must(t, c.Execute([]Tensor{{lt: src, buf: buf(data)}}, []Tensor{{lt: anyDst, buf: buf(dst)}}))
	if dst[0] != 4 || dst[1] != 5 {
		t.Errorf("means %v, want [4 5]", dst)
	}
}

// TestMemSize: the bytes a buffer must hold follow the strides, not the
// element count; dims must be known.
func TestMemSize(t *testing.T) {
	for _, c := range []struct {
		lt   graph.LogicalTensor
		want int64
	}{
		{graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 4}), 32},
		{graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{2, 4}, []int64{8, 1}), 48},  // padded rows
		{graph.NewLogicalTensorStrided(0, dtypes.BF16, []int64{2, 4}, []int64{1, 2}), 16}, // permuted
		{graph.NewLogicalTensorStrided(0, dtypes.F16, []int64{3, 5}, []int64{0, 1}), 10},  // broadcast rows
		{graph.NewLogicalTensorAny(0, dtypes.F32, []int64{2, 3}), 24},
		{graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 0}), 0},
		{graph.NewLogicalTensor(0, dtypes.S32, []int64{}), 4},
	} {
		got, err := MemSize(c.lt)
		if err != nil || got != c.want {
			t.Errorf("MemSize(%v) = %d, %v; want %d", c.lt, got, err, c.want)
		}
	}
	for _, c := range []struct {
		lt     graph.LogicalTensor
		status graph.Status
	}{
		{graph.NewLogicalTensorAny(0, dtypes.F32, nil), graph.InvalidShape},
		{graph.NewLogicalTensorAny(0, dtypes.F32, []int64{2, graph.UnknownDim}), graph.InvalidShape},
		{graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{2, 4}, []int64{-4, 1}), graph.InvalidShape},
		{graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{1 << 40, 1 << 40}, []int64{1 << 40, 1}), graph.InvalidArguments},
		// Dense strides of these overflow to unknown; the dims are named.
		{graph.NewLogicalTensor(0, dtypes.F32, []int64{1 << 40, 1 << 40, 1 << 40}), graph.InvalidShape},
	} {
		if _, err := MemSize(c.lt); !errors.Is(err, c.status) {
			t.Errorf("MemSize(%v): %v, want %v", c.lt, err, c.status)
		}
	}
	if _, err := MemSize(graph.NewLogicalTensor(0, dtypes.F32, []int64{1 << 40, 1 << 40, 1 << 40})); err == nil ||
		!strings.Contains(err.Error(), "more than 2^63 elements") {
		t.Errorf("overflowing dims: %v", err)
	}
}

func TestNewTensor(t *testing.T) {
	f32 := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	bf := graph.NewLogicalTensor(1, dtypes.BF16, []int64{2})
	f16 := graph.NewLogicalTensor(2, dtypes.F16, []int64{2})
	s32 := graph.NewLogicalTensor(3, dtypes.S32, []int64{2})
	ok := []struct {
		lt   graph.LogicalTensor
		data any
	}{
		{f32, make([]float32, 6)}, {bf, make([]uint16, 2)}, {f16, make([]uint16, 2)},
		{f16, make([]float16.Float16, 2)}, {s32, make([]int32, 2)}, {f32, make([]byte, 24)},
	}
	for _, c := range ok {
		tt, err := NewTensor(c.lt, c.data)
		if err != nil {
			t.Errorf("%v with %T: %v", c.lt, c.data, err)
		}
		if len(tt.Bytes()) == 0 {
			t.Errorf("%v: no bytes", c.lt)
		}
	}
	bad := []struct {
		lt     graph.LogicalTensor
		data   any
		status graph.Status
	}{
		{f32, nil, graph.InvalidArguments},
		{f32, []float32(nil), graph.InvalidArguments},
		{f32, make([]float32, 5), graph.InvalidArguments},
		{f32, make([]uint16, 12), graph.InvalidDataType},
		{bf, make([]float16.Float16, 2), graph.InvalidDataType},
		{s32, make([]float32, 2), graph.InvalidDataType},
		{f32, []float64{1}, graph.InvalidDataType},
		{f32, make([]byte, 23), graph.InvalidArguments},
	}
	for _, c := range bad {
		if _, err := NewTensor(c.lt, c.data); !errors.Is(err, c.status) {
			t.Errorf("%v with %T: err = %v, want %v", c.lt, c.data, err, c.status)
		}
	}
	// Shared memory: writing through the slice shows in the tensor.
	d := make([]float32, 6)
	tt, _ := NewTensor(f32, d)
	d[0] = 1
	if tt.Bytes()[3] != 0x3f {
		t.Error("NewTensor copied the data")
	}
}

// NewTensor refuses a descriptor that no Execute could take, naming what
// is wrong, and takes every layout Execute reads.
func TestNewTensorDescriptor(t *testing.T) {
	f32 := dtypes.F32
	lt := func(dims, strides []int64) graph.LogicalTensor {
		return graph.NewLogicalTensorStrided(3, f32, dims, strides)
	}
	withLayout := func(l graph.Layout) graph.LogicalTensor {
		t := graph.NewLogicalTensor(3, f32, []int64{2, 3})
		t.Layout = l
		return t
	}
	noTag := graph.NewLogicalTensorBlocked(3, f32, []int64{2, 16}, "")
	bad := []struct {
		name   string
		lt     graph.LogicalTensor
		status graph.Status
		msg    string
	}{
		{"undef data type", graph.NewLogicalTensor(3, dtypes.Undef, []int64{2}), graph.InvalidDataType, "tensor 3 has data type undef"},
		{"negative dim", lt([]int64{2, -4}, []int64{1, 1}), graph.InvalidShape, "tensor 3 dim 1 is -4 (negative)"},
		{"unknown dim", graph.NewLogicalTensor(3, f32, []int64{2, graph.UnknownDim}), graph.InvalidShape, "tensor 3 has dims 2x?; a tensor with data needs known dims"},
		{"unknown rank", graph.NewLogicalTensorAny(3, f32, nil), graph.InvalidShape, "has dims unknown-rank"},
		{"rank above MaxRank", graph.NewLogicalTensor(3, f32, make([]int64, graph.MaxRank+1)), graph.InvalidShape, "rank 13, more than the supported 12"},
		{"fewer strides than dims", lt([]int64{2, 3}, []int64{1}), graph.InvalidShape, "tensor 3 has 2 dims but 1 strides"},
		{"more strides than dims", lt([]int64{6}, []int64{1, 1}), graph.InvalidShape, "tensor 3 has 1 dims but 2 strides"},
		{"unknown stride", lt([]int64{2, 3}, []int64{graph.UnknownDim, 1}), graph.InvalidShape, "stride 0 is -1; strides must be known and non-negative"},
		{"negative stride", lt([]int64{2, 3}, []int64{3, -1}), graph.InvalidShape, "stride 1 is -1"},
		{"unknown layout", withLayout(graph.Layout(7)), graph.InvalidArguments, "tensor 3 has layout Layout(7)"},
		{"blocked without a tag", noTag, graph.InvalidArguments, "tensor 3 has layout blocked but no format tag"},
		{"blocked tag of another rank", graph.NewLogicalTensorBlocked(3, f32, []int64{2, 16}, "aBcd16b"), graph.InvalidArguments, `tag "aBcd16b" describes 4 dims but the tensor has rank 2`},
		{"dense overflow", graph.NewLogicalTensorAny(3, f32, []int64{1 << 40, 1 << 40, 1 << 40}), graph.InvalidShape, "more than 2^63 elements"},
		{"short data for layout any", graph.NewLogicalTensorAny(3, f32, []int64{2, 4}), graph.InvalidArguments, "tensor 3 (2x4) needs 32 bytes, data has 24"},
		{"short data without strides", lt([]int64{2, 4}, nil), graph.InvalidArguments, "needs 32 bytes, data has 24"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewTensor(c.lt, make([]float32, 6))
			if !errors.Is(err, c.status) || !strings.Contains(fmt.Sprint(err), c.msg) || !strings.Contains(fmt.Sprint(err), "NewTensor: ") {
				t.Fatalf("%v: err = %v, want %v saying %q", c.lt, err, c.status, c.msg)
			}
		})
	}
	for _, c := range []graph.LogicalTensor{
		graph.NewLogicalTensorAny(3, f32, []int64{2, 3}), withLayout(graph.LayoutUndef), lt([]int64{2, 3}, nil),
		lt([]int64{2, 3}, []int64{0, 1}), lt([]int64{3, 2}, []int64{1, 3}), graph.NewLogicalTensor(3, f32, []int64{}),
		graph.NewLogicalTensorBlocked(3, f32, []int64{1, 2}, "aBx16b"),
	} {
		if _, err := NewTensor(c, make([]float32, 32)); err != nil {
			t.Errorf("%v: %v", c, err)
		}
	}
	// The tensor keeps its own description: no strides stay no strides.
	tt, err := NewTensor(lt([]int64{2, 3}, nil), make([]float32, 6))
	must(t, err)
	if got := tt.LogicalTensor(); got.Strides != nil || got.Layout != graph.LayoutStrided {
		t.Errorf("NewTensor changed the description to %v", got)
	}
}

// A framework's own element types: named types whose underlying type is
// one gdnn takes.
type (
	bfloat16 uint16
	float32T float32
	int32T   int32
	int64T   int64
	byteT    byte
	float32s []float32 // a named slice type
	float64T float64
	int16T   int16
)

// NewTensor takes slices of named types by their underlying type, viewing
// the same memory, and refuses what no gdnn type matches.
func TestNewTensorNamedTypes(t *testing.T) {
	f32 := graph.NewLogicalTensor(0, dtypes.F32, []int64{2})
	bf := graph.NewLogicalTensor(1, dtypes.BF16, []int64{2})
	f16 := graph.NewLogicalTensor(2, dtypes.F16, []int64{2})
	s32 := graph.NewLogicalTensor(3, dtypes.S32, []int64{2})
	s64 := graph.NewLogicalTensor(4, dtypes.S64, []int64{2})
	f64 := graph.NewLogicalTensor(5, dtypes.F64, []int64{2})
	ok := []struct {
		lt   graph.LogicalTensor
		data any
		want []byte // the bytes the tensor must see
	}{
		{bf, []bfloat16{0x3f80, 0xc000}, []byte{0x80, 0x3f, 0x00, 0xc0}},
		{f16, []bfloat16{0x3c00, 1}, []byte{0x00, 0x3c, 0x01, 0x00}},
		{f32, []float32T{1, -2}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}},
		{f32, float32s{1, -2}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}},
		{s32, []int32T{1, -1}, []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}},
		{s64, []int64T{2, -1}, []byte{2, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{s64, []int64{2, -1}, []byte{2, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{bf, []byteT{1, 2, 3, 4}, []byte{1, 2, 3, 4}},
		{f64, []float64T{1, -2}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0}},
	}
	for _, c := range ok {
		tt, err := NewTensor(c.lt, c.data)
		if err != nil {
			t.Errorf("%v with %T: %v", c.lt, c.data, err)
			continue
		}
		if !slices.Equal(tt.Bytes(), c.want) {
			t.Errorf("%v with %T: bytes %x, want %x", c.lt, c.data, tt.Bytes(), c.want)
		}
	}
	// A view, not a copy.
	d := []bfloat16{0, 0}
	tt, err := NewTensor(bf, d)
	must(t, err)
	d[1] = 0x4040
	if tt.Bytes()[3] != 0x40 {
		t.Error("NewTensor copied a []bfloat16")
	}

	bad := []struct {
		lt     graph.LogicalTensor
		data   any
		status graph.Status
		msg    string
	}{
		{f32, []bfloat16{1, 2, 3, 4}, graph.InvalidDataType, "tensor 0 is f32 but data is []partition.bfloat16"},
		{bf, []float32T{1}, graph.InvalidDataType, "tensor 1 is bf16 but data is []partition.float32T"},
		{s32, []int64T{1, 2}, graph.InvalidDataType, "tensor 3 is s32 but data is []partition.int64T"},
		{s64, []int32T{1, 2, 3, 4}, graph.InvalidDataType, "tensor 4 is s64 but data is []partition.int32T"},
		{f32, []float64T{1}, graph.InvalidDataType, "tensor 0 is f32 but data is []partition.float64T"},
		{bf, []int16T{1, 2}, graph.InvalidDataType, "tensor 1 is bf16 but data is []partition.int16T"},
		{f32, []complex64{1}, graph.InvalidArguments, "unsupported data type []complex64"},
		{f32, float32(1), graph.InvalidArguments, "unsupported data type float32 (want a slice)"},
		{f32, &[2]float32{}, graph.InvalidArguments, "unsupported data type *[2]float32 (want a slice)"},
		{f32, []float32T(nil), graph.InvalidArguments, "data is a nil slice"},
		{f32, []float32T{1}, graph.InvalidArguments, "needs 8 bytes, data has 4"},
		{bf, []bfloat16{1}, graph.InvalidArguments, "needs 4 bytes, data has 2"},
	}
	for _, c := range bad {
		_, err := NewTensor(c.lt, c.data)
		if !errors.Is(err, c.status) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%v with %T: err = %v, want %v saying %q", c.lt, c.data, err, c.status, c.msg)
		}
	}
	// A nil slice holds a tensor of no elements (zero run-time axes).
	empty := graph.NewLogicalTensor(9, dtypes.S64, []int64{0})
	if tn, err := NewTensor(empty, []int64(nil)); err != nil || tn.Bytes() == nil {
		t.Errorf("nil slice for %v: %v (bytes %v)", empty, err, tn.Bytes())
	}
}

func TestCompileErrors(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 8})
	g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, true)
	p := onlySupported(t, g, Fusion)
	anyOut := []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)}
	cases := []struct {
		name    string
		in, out []graph.LogicalTensor
		status  graph.Status
		msg     string
	}{
		{"no input", nil, anyOut, graph.InvalidArguments, "input port tensor 0 is not given"},
		{"unknown dims", []graph.LogicalTensor{graph.NewLogicalTensor(0, dtypes.F32, []int64{4, -1})}, anyOut,
			graph.InvalidShape, "needs concrete input dims"},
		{"wrong dims", []graph.LogicalTensor{graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 9})}, anyOut,
			graph.InvalidShape, "the graph says 4x8"},
		{"wrong dtype", []graph.LogicalTensor{graph.NewLogicalTensor(0, dtypes.F16, []int64{4, 8})}, anyOut,
			graph.InvalidDataType, "expects f32"},
		{"wrong out dims", []graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensor(1, dtypes.F32, []int64{4, 2})},
			graph.InvalidShape, "dim 1: 2 vs 1"},
		{"wrong out dtype", []graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.BF16, nil)},
			graph.InvalidDataType, "the partition produces f32"},
		{"overlapping out strides", []graph.LogicalTensor{src},
			[]graph.LogicalTensor{graph.NewLogicalTensorStrided(1, dtypes.F32, []int64{4, 1}, []int64{0, 1})},
			graph.InvalidArguments, "overlap"},
		{"overflowing strides", []graph.LogicalTensor{graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{4, 8}, []int64{1 << 62, 1})},
			anyOut, graph.InvalidArguments, "address more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Compile(c.in, c.out)
			if !errors.Is(err, c.status) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %v with %q", err, c.status, c.msg)
			}
		})
	}
	var nilP *Partition
	if _, err := nilP.Compile(nil, nil); !errors.Is(err, graph.InvalidArguments) {
		t.Fatal(err)
	}
	if _, err := new(Partition).Compile(nil, nil); !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "partition.Get") {
		t.Fatalf("zero partition: %v", err)
	}
	if _, err := Get(graph.New(), Fusion); !errors.Is(err, graph.InvalidGraph) {
		t.Fatalf("unfinalized graph: %v", err)
	}
	if _, err := Get(nil, Fusion); !errors.Is(err, graph.InvalidArguments) {
		t.Fatalf("nil graph: %v", err)
	}
	if _, err := Get(g, Policy(7)); !errors.Is(err, graph.InvalidArguments) {
		t.Fatalf("bad policy: %v", err)
	}
}

func TestCompiledPartitionCache(t *testing.T) {
	prev := CompiledPartitionCacheCapacity()
	defer SetCompiledPartitionCacheCapacity(prev)
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 8})
	g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, true)
	p := onlySupported(t, g, Fusion)
	out := []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)}
	a, err := p.Compile([]graph.LogicalTensor{src}, out)
	must(t, err)
	b, err := p.Compile([]graph.LogicalTensor{src}, out)
	must(t, err)
	if a != b {
		t.Error("compiling the same partition twice did not hit the cache")
	}
	// The same ops in another graph: that graph's partition, the same
	// kernel.
	q := onlySupported(t, meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, true), Fusion)
	qc, err := q.Compile([]graph.LogicalTensor{src}, out)
	must(t, err)
	if qc == a || qc.Partition() != q || a.Partition() != p || qc.kern != a.kern || qc.run == a.run {
		t.Errorf("another graph's partition: compiled %p (partition %p, kernel %v), first %p (partition %p, kernel %v)",
			qc, qc.Partition(), qc.kern, a, a.Partition(), a.kern)
	}
	other := graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{4, 8}, []int64{1, 4})
	c, err := p.Compile([]graph.LogicalTensor{other}, out)
	must(t, err)
	if c == a {
		t.Error("different strides shared a compiled partition")
	}
	if _, err := SetCompiledPartitionCacheCapacity(1); err != nil {
		t.Fatal(err)
	}
	if compiledCache.len() != 1 {
		t.Errorf("cache holds %d after shrinking to 1", compiledCache.len())
	}
	if _, err := SetCompiledPartitionCacheCapacity(0); err != nil {
		t.Fatal(err)
	}
	d, _ := p.Compile([]graph.LogicalTensor{src}, out)
	e, _ := p.Compile([]graph.LogicalTensor{src}, out)
	if d == e || compiledCache.len() != 0 {
		t.Error("capacity 0 should disable the cache")
	}
	if _, err := SetCompiledPartitionCacheCapacity(-1); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("negative capacity: %v", err)
	}
	t.Setenv("GDNN_COMPILED_PARTITION_CACHE_CAPACITY", "17")
	if capacityFromEnv() != 17 {
		t.Error("env capacity not read")
	}
	t.Setenv("GDNN_COMPILED_PARTITION_CACHE_CAPACITY", "lots")
	if capacityFromEnv() != DefaultCompiledPartitionCacheCapacity {
		t.Error("bad env value should fall back to the default")
	}
}

// TestCacheKeyIsExact: partitions that differ only in values the String
// methods print alike ("?" for any unknown dim) must not share a compiled
// partition. Axes -1 and -2 of a 3x3 src with keep_dims false give the
// same output dims; the cache used to hand the second graph the first
// graph's kernel.
func TestCacheKeyIsExact(t *testing.T) {
	prev := CompiledPartitionCacheCapacity()
	defer SetCompiledPartitionCacheCapacity(prev)
	if _, err := SetCompiledPartitionCacheCapacity(DefaultCompiledPartitionCacheCapacity); err != nil {
		t.Fatal(err)
	}
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{3, 3})
	in := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, c := range []struct {
		axis int64
		want []float32
	}{{-1, []float32{2, 5, 8}}, {-2, []float32{4, 5, 6}}, {-1, []float32{2, 5, 8}}} {
		g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{c.axis}, false)
		p := onlySupported(t, g, Fusion)
		cp, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
		must(t, err)
		out, err := cp.QueryLogicalTensor(1)
		must(t, err)
		got := make([]float32, 3)
		st, err := NewTensor(src, in)
		must(t, err)
		dt, err := NewTensor(out, got)
		must(t, err)
		must(t, cp.Execute([]Tensor{st}, []Tensor{dt}))
		if !slices.Equal(got, c.want) {
			t.Errorf("axes [%d]: %v, want %v", c.axis, got, c.want)
		}
	}

	// The key itself: values that print alike, and separators in strings.
	key := func(attr string, v any, in graph.LogicalTensor) string {
		op := graph.NewOp(1, graph.ReduceMean, "m").AddInput(src).
			AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr(attr, v)
		p := &Partition{ops: []*graph.Op{op}}
		return cacheKey(p, []graph.LogicalTensor{in}, nil, jit.EffectiveISA())
	}
	pairs := []struct {
		what string
		a, b string
	}{
		{"axes -1 and -2", key("axes", []int64{-1}, src), key("axes", []int64{-2}, src)},
		{"axes [] and [0]", key("axes", []int64{}, src), key("axes", []int64{0}, src)},
		{"f32 0 and -0", key("alpha", float32(0), src), key("alpha", float32(math.Copysign(0, -1)), src)},
		{"strings with separators", key("mode", "a b=s64:1", src), key("mode", "a", src)},
		{"unknown dim -1 and -2^63", key("axes", []int64{0}, graph.NewLogicalTensor(0, dtypes.F32, []int64{-1, 3})),
			key("axes", []int64{0}, graph.NewLogicalTensor(0, dtypes.F32, []int64{math.MinInt64, 3}))},
		{"strides -3 and -4", key("axes", []int64{0}, graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{3, 3}, []int64{-3, 1})),
			key("axes", []int64{0}, graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{3, 3}, []int64{-4, 1}))},
	}
	for _, pr := range pairs {
		if pr.a == pr.b {
			t.Errorf("%s: same cache key %q", pr.what, pr.a)
		}
	}
}

// Execute on a cached compiled partition allocates nothing itself: the
// port-ordered tensors and the binary operands live in stack arrays.
// (Checked in normal builds; under -race the instrumentation moves the
// arrays to the heap.)
func TestExecuteDoesNotAllocate(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	check := func(name string, c *CompiledPartition, in, outs []Tensor) {
		t.Helper()
		if n := testing.AllocsPerRun(100, func() {
			if err := c.Execute(in, outs); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: Execute allocated %v times per call", name, n)
		}
	}
	c, src, out := compiledMean(t)
	st, _ := NewTensor(src, make([]float32, 32))
	dt, _ := NewTensor(out, make([]float32, 4))
	check("mean", c, []Tensor{st}, []Tensor{dt})

	// mean + add of a per-row operand: one binary operand reaches the kernel.
	f32 := dtypes.F32
	x := graph.NewLogicalTensor(2, f32, []int64{4, 1})
	g := graph.New()
	must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).
		SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
	must(t, g.AddOp(graph.NewOp(3, graph.Add, "add").AddInput(graph.NewLogicalTensorAny(1, f32, nil)).AddInput(x).
		AddOutput(graph.NewLogicalTensorAny(3, f32, nil))))
	must(t, g.Finalize())
	fused := onlySupported(t, g, Fusion)
	if len(fused.Ops()) != 2 {
		t.Fatalf("mean and add were not fused: %v", fused.Ops())
	}
	cf, err := fused.Compile([]graph.LogicalTensor{src, x}, []graph.LogicalTensor{graph.NewLogicalTensorAny(3, f32, nil)})
	must(t, err)
	fout, _ := cf.QueryLogicalTensor(3)
	xt, _ := NewTensor(x, make([]float32, 4))
	ft, _ := NewTensor(fout, make([]float32, 4))
	check("mean+add", cf, []Tensor{st, xt}, []Tensor{ft})
}

// TestZeroAndNilCompiledPartition: a nil or zero CompiledPartition (one
// Compile did not make) refuses every call with an error that says so;
// its accessors return nothing and Impl the default implementation.
func TestZeroAndNilCompiledPartition(t *testing.T) {
	for _, c := range []*CompiledPartition{nil, {}} {
		what := "nil"
		if c != nil {
			what = "zero"
		}
		errs := map[string]error{"Execute": c.Execute(nil, nil)}
		_, errs["QueryLogicalTensor"] = c.QueryLogicalTensor(0)
		_, errs["QueryLogicalTensorWithAxes"] = c.QueryLogicalTensorWithAxes(0, nil)
		for m, err := range errs {
			if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), what) {
				t.Errorf("%s on a %s CompiledPartition: %v", m, what, err)
			}
		}
		if len(c.Inputs()) != 0 || len(c.Outputs()) != 0 || c.Partition() != nil {
			t.Errorf("%s CompiledPartition: ports or partition not empty", what)
		}
		if c.Impl() != defaultImpl() {
			t.Errorf("%s CompiledPartition: Impl %q, want %q", what, c.Impl(), defaultImpl())
		}
	}
}

// TestNilPartition: a nil *Partition answers its accessors as a
// partition of no ops, not with a panic, and Compile refuses it.
func TestNilPartition(t *testing.T) {
	var p *Partition
	if p.ID() != -1 || p.Ops() != nil || p.Inputs() != nil || p.Outputs() != nil || p.IsSupported() || p.Pattern() != "" {
		t.Errorf("nil partition: ID %d, ops %v, inputs %v, outputs %v, supported %v, pattern %q",
			p.ID(), p.Ops(), p.Inputs(), p.Outputs(), p.IsSupported(), p.Pattern())
	}
	if p.Reason() != "nil partition" || p.String() != "nil partition" {
		t.Errorf("nil partition: Reason %q, String %q", p.Reason(), p.String())
	}
	if _, err := p.Compile(nil, nil); !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "nil partition") {
		t.Errorf("Compile on a nil partition: %v", err)
	}
}

// A decomposed LayerNorm partition's Execute allocates nothing where it
// runs on one thread, for lack of threads or of chunks to share ([2 8
// 64] is one chunk), and a fixed few objects where two threads share it
// (the pool's job, the workers' closures and their copies of the
// buffers and operand list), as many for a tensor of many chunks as
// for one of a few: nothing per chunk.
func TestNormPatternExecuteAllocs(t *testing.T) {
	f32 := dtypes.F32
	checkExecuteAllocs(t, 7, func(dims []int64) (*Partition, map[uint64][]byte) {
		pg := newPatternGraph(t, f32)
		y := layerNormOps([]int64{-1}, []int64{-1}, 1, false)(pg, graph.NewLogicalTensor(1, f32, dims), graph.NewLogicalTensor(2, f32, []int64{1}))
		pg.bin(graph.Multiply, y, graph.NewLogicalTensor(3, f32, dims[len(dims)-1:])) // by gamma
		must(t, pg.g.Finalize())
		return onlySupported(t, pg.g, Fusion), map[uint64][]byte{2: {0xac, 0xc5, 0x27, 0x37}} // eps 1e-5
	}, []int64{2, 8, 64}, []int64{16, 64, 768}, []int64{64, 64, 768})
}

// A masked pooling partition (a Multiply before its ReduceMean, run as
// a pre-op program) allocates nothing per Execute on one thread, and a
// fixed few objects on two, whatever its chunks: its operands stay on
// the caller's stack, and nothing is made per chunk.
func TestMaskedPoolingExecuteAllocs(t *testing.T) {
	f32 := dtypes.F32
	checkExecuteAllocs(t, 6, func(dims []int64) (*Partition, map[uint64][]byte) {
		x, mask := graph.NewLogicalTensor(1, f32, dims), graph.NewLogicalTensor(2, f32, []int64{dims[0], dims[1], 1})
		return onlySupported(t, maskedGraph(t, graph.ReduceMean, x, mask, []int64{1}, false, false, true), Fusion), nil
	}, []int64{2, 8, 64}, []int64{8, 128, 384}, []int64{64, 128, 384})
}

// A residual LayerNorm partition with a bias whose sum is an output too
// (the inputs and outputs its aliasing check lists) allocates nothing
// per Execute on one thread either, and a fixed few on two.
func TestResidualNormExecuteAllocs(t *testing.T) {
	checkExecuteAllocs(t, 6, func(dims []int64) (*Partition, map[uint64][]byte) {
		rg := residualGraph{kind: graph.LayerNorm, dims: dims, dt: dtypes.F32, sumDT: dtypes.F32, bias: true, readSum: true}
		parts, err := Get(rg.build(t), Fusion)
		must(t, err)
		if !parts[0].IsSupported() || len(parts[0].Outputs()) != 2 {
			t.Fatalf("%v: partitions %v; want the residual sum, its bias and the norm fused, the sum an output", rg, parts)
		}
		return parts[0], nil
	}, []int64{2, 8, 64}, []int64{16, 64, 768}, []int64{64, 64, 768})
}

// checkExecuteAllocs counts the allocations of an Execute of the
// partition build makes over dims (inputs of 0s but for those given by
// id): none for one of one chunk, small; for large and huge, of many
// chunks, none on one thread, and on two at most shared and as many for
// huge as for large.
func checkExecuteAllocs(t *testing.T, shared float64, build func(dims []int64) (*Partition, map[uint64][]byte), small, large, huge []int64) {
	t.Helper()
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	allocs := func(dims []int64) float64 {
		p, given := build(dims)
		data := map[uint64][]byte{}
		for _, lt := range p.Inputs() {
			n, err := MemSize(lt)
			must(t, err)
			data[lt.ID] = make([]byte, n)
			copy(data[lt.ID], given[lt.ID])
		}
		c, in, outs := executable(t, p, data)
		must(t, c.Execute(in, outs))
		return testing.AllocsPerRun(10, func() { must(t, c.Execute(in, outs)) })
	}
	for _, threads := range []int{1, 2} {
		prev := jit.SetThreads(threads)
		s, l, h := allocs(small), allocs(large), allocs(huge)
		jit.SetThreads(prev)
		t.Logf("%d threads: %v allocations per Execute of %v, %v of %v, %v of %v", threads, s, small, l, large, h, huge)
		most := 0.0
		if threads > 1 {
			most = shared
		}
		if s != 0 || l > most || h != l {
			t.Errorf("%d threads: Execute allocates %v times per call of %v, %v of %v, %v of %v; want 0, at most %v, and as many as %v",
				threads, s, small, l, large, h, huge, most, large)
		}
	}
}
