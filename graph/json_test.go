package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

const sharedGraphInputs = "../../shared/benchdnn-inputs/graph"

// sharedPath returns a file under shared/benchdnn-inputs/graph, which sits
// beside the module's root.
func sharedPath(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(sharedGraphInputs, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared benchdnn input missing: %v", err)
	}
	return p
}

func readJSONFile(t testing.TB, path string) *Graph {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ReadJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("ReadJSON(%s): %v", path, err)
	}
	return g
}

func writeJSON(t testing.TB, g *Graph) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := g.WriteJSON(&buf); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	return buf.Bytes()
}

func mustTensor(t *testing.T, g *Graph, id uint64) LogicalTensor {
	t.Helper()
	lt, ok := g.Tensor(id)
	if !ok {
		t.Fatalf("tensor %d is not in the graph", id)
	}
	return lt
}

func checkTensorIs(t *testing.T, what string, got LogicalTensor, id uint64, dt dtypes.DataType, dims, strides []int64, l Layout, p Property) {
	t.Helper()
	if got.ID != id || got.DataType != dt || !slices.Equal(got.Dims, dims) || got.Layout != l || got.Property != p {
		t.Errorf("%s = %v, want id %d %s %s %s %s", what, got, id, dt, DimsString(dims), l, p)
	}
	if l == LayoutStrided && !slices.Equal(got.Strides, strides) {
		t.Errorf("%s strides = %v, want %v", what, got.Strides, strides)
	}
}

func TestReadJSONSharedReduceMean(t *testing.T) {
	g := readJSONFile(t, sharedPath(t, "op/f32/reducemean.json"))
	if g.Finalized() {
		t.Fatal("ReadJSON finalized the graph; callers must be able to edit it first")
	}
	if g.FPMath != "strict" {
		t.Errorf("FPMath = %q, want strict", g.FPMath)
	}
	if err := g.Finalize(); err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	ops := g.Ops()
	if len(ops) != 1 {
		t.Fatalf("%d ops, want 1", len(ops))
	}
	op := ops[0]
	if op.ID != 0 || op.Kind != ReduceMean || op.Name != "REDUCTION_0" {
		t.Errorf("op = %v, want op 0 (ReduceMean \"REDUCTION_0\")", op)
	}
	if axes, ok := op.Ints("axes"); !ok || !slices.Equal(axes, []int64{1}) {
		t.Errorf("axes = %v (%v), want [1]", axes, ok)
	}
	if keep, ok := op.Bool("keep_dims"); !ok || !keep || !op.HasAttr("keep_dims") {
		t.Errorf("keep_dims = %v (%v), want an explicit true", keep, ok)
	}
	if names := op.AttrNames(); !slices.Equal(names, []string{"axes", "keep_dims"}) {
		t.Errorf("attrs = %v", names)
	}
	src := []int64{1, 128, 150, 150}
	checkTensorIs(t, "src", op.Inputs[0], 0, dtypes.F32, src, []int64{2880000, 22500, 150, 1}, LayoutStrided, PropertyUndef)
	// dst dims from src dims: dim 1 reduced, kept as 1.
	dst := slices.Clone(src)
	dst[1] = 1
	checkTensorIs(t, "dst", op.Outputs[0], 1, dtypes.F32, dst, []int64{22500, 22500, 150, 1}, LayoutStrided, PropertyUndef)
	checkTensorIs(t, "graph tensor 1", mustTensor(t, g, 1), 1, dtypes.F32, dst, []int64{22500, 22500, 150, 1}, LayoutStrided, PropertyUndef)
	if p := g.Producer(1); p == nil || p.ID != 0 {
		t.Errorf("producer of tensor 1 = %v, want op 0", p)
	}
	if p := g.Producer(0); p != nil {
		t.Errorf("producer of tensor 0 = %v, want none (graph input)", p)
	}
}

func TestReadJSONSharedMeanFusion(t *testing.T) {
	g := readJSONFile(t, sharedPath(t, "pattern/f32/reduction_post_ops_mean_fusion.json"))
	if err := g.Finalize(); err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	ops := g.Ops()
	if len(ops) != 2 {
		t.Fatalf("%d ops, want 2", len(ops))
	}
	mean, add := ops[0], ops[1]
	if mean.ID != 11 || mean.Kind != ReduceMean || mean.Name != "REDUCTION_0" {
		t.Errorf("op 0 = %v", mean)
	}
	if add.ID != 2049 || add.Kind != Add || add.Name != "BINARY_1" {
		t.Errorf("op 1 = %v", add)
	}
	if axes, _ := mean.Ints("axes"); !slices.Equal(axes, []int64{1}) {
		t.Errorf("axes = %v, want [1]", axes)
	}
	if keep, _ := mean.Bool("keep_dims"); !keep {
		t.Error("keep_dims = false, want true")
	}
	if ab, ok := add.Str("auto_broadcast"); !ok || ab != "none" || !add.HasAttr("auto_broadcast") {
		t.Errorf("auto_broadcast = %q, want an explicit \"none\"", ab)
	}
	small := []int64{1, 1, 150, 150}
	smallStrides := []int64{22500, 22500, 150, 1}
	checkTensorIs(t, "mean src", mean.Inputs[0], 0, dtypes.F32, []int64{1, 128, 150, 150}, []int64{2880000, 22500, 150, 1}, LayoutStrided, PropertyUndef)
	checkTensorIs(t, "mean dst", mean.Outputs[0], 171, dtypes.F32, small, smallStrides, LayoutStrided, PropertyUndef)
	if len(add.Inputs) != 2 || len(add.Outputs) != 1 {
		t.Fatalf("Add has %d inputs, %d outputs", len(add.Inputs), len(add.Outputs))
	}
	checkTensorIs(t, "add src0", add.Inputs[0], 171, dtypes.F32, small, smallStrides, LayoutStrided, PropertyUndef)
	checkTensorIs(t, "add src1", add.Inputs[1], 1, dtypes.F32, small, smallStrides, LayoutStrided, PropertyUndef)
	checkTensorIs(t, "add dst", add.Outputs[0], 2209, dtypes.F32, small, smallStrides, LayoutStrided, PropertyUndef)
	if c := g.Consumers(171); len(c) != 1 || c[0].ID != 2049 {
		t.Errorf("consumers of 171 = %v, want the Add", c)
	}
	if p := g.Producer(171); p == nil || p.ID != 11 {
		t.Errorf("producer of 171 = %v, want the ReduceMean", p)
	}
	in, out := graphPorts(g, g.Ops())
	if !slices.Equal(in, []uint64{0, 1}) || !slices.Equal(out, []uint64{2209}) {
		t.Errorf("ports = %v, %v; the file says [0 1], [2209]", in, out)
	}
}

// dumpOp is an independent, plain encoding/json view of a dumped op, used
// as the reference for what ReadJSON must build.
type dumpOp struct {
	ID    uint64 `json:"id"`
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Attrs map[string]struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"attrs"`
	Inputs  []dumpTensor `json:"inputs"`
	Outputs []dumpTensor `json:"outputs"`
}

type dumpTensor struct {
	ID       uint64  `json:"id"`
	DType    string  `json:"dtype"`
	Shape    []int64 `json:"shape"`
	Stride   []int64 `json:"stride"`
	Property string  `json:"property_type"`
}

// property is the tensor's property_type (undef when the dump has none).
func (d dumpTensor) property(t *testing.T) Property {
	t.Helper()
	if d.Property == "" {
		return PropertyUndef
	}
	p, err := parseProperty("", d.Property)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// unimplementedShared are the shared oneDNN cases whose ops or outputs
// gdnn does not implement yet: ReadJSON must refuse each of them as
// Unimplemented (a valid case gdnn cannot run), and load every other.
var unimplementedShared = map[string]bool{
	"lnorm_3d_bwd.json":     true, // LayerNormBackward
	"lnorm_bwd.json":        true,
	"logsoftmax_bwd.json":   true, // LogSoftmaxBackward
	"softmax_bwd.json":      true, // SoftMaxBackward
	"softmax_bwd_d_3d.json": true,
}

// sharedJSONFiles lists the shared oneDNN cases under op/f32 and
// pattern/f32 that ReadJSON loads; TestReadJSONSharedUnimplemented
// checks the others.
func sharedJSONFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"op/f32", "pattern/f32"} {
		m, err := filepath.Glob(filepath.Join(sharedPath(t, dir), "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !unimplementedShared[filepath.Base(f)] {
				files = append(files, f)
			}
		}
	}
	if len(files) < 14 {
		t.Fatalf("found %d shared JSON files, want the 14 of op/f32 and pattern/f32", len(files))
	}
	return files
}

func TestReadJSONSharedUnimplemented(t *testing.T) {
	seen := 0
	for name := range unimplementedShared {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(sharedPath(t, "op/f32"), name))
			if err != nil {
				t.Fatal(err)
			}
			seen++
			_, err = ReadJSON(bytes.NewReader(b))
			if !errors.Is(err, Unimplemented) {
				t.Fatalf("ReadJSON(%s) = %v, want an unimplemented error", name, err)
			}
		})
	}
	if seen != len(unimplementedShared) {
		t.Fatalf("read %d of the %d unimplemented cases", seen, len(unimplementedShared))
	}
}

func TestReadJSONSharedAll(t *testing.T) {
	for _, f := range sharedJSONFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ref struct {
				Graph []dumpOp `json:"graph"`
			}
			if err := json.Unmarshal(raw, &ref); err != nil {
				t.Fatal(err)
			}
			g := readJSONFile(t, f)
			if err := g.Finalize(); err != nil {
				t.Fatalf("Finalize: %v", err)
			}
			ops := g.Ops()
			if len(ops) != len(ref.Graph) {
				t.Fatalf("%d ops, the file has %d", len(ops), len(ref.Graph))
			}
			for _, want := range ref.Graph {
				op, ok := g.Op(want.ID)
				if !ok {
					t.Fatalf("op %d missing", want.ID)
				}
				if op.Kind.String() != want.Kind || op.Name != want.Name {
					t.Errorf("op %d = %v, want %s %q", want.ID, op, want.Kind, want.Name)
				}
				if len(op.AttrNames()) != len(want.Attrs) {
					t.Errorf("op %d has attrs %v, the file %d", want.ID, op.AttrNames(), len(want.Attrs))
				}
				for name, a := range want.Attrs {
					got, ok := op.Attr(name)
					if !ok || got.Type.String() != a.Type {
						t.Errorf("op %d attr %s = %+v, want type %s", want.ID, name, got, a.Type)
					}
				}
				for i, wt := range want.Inputs {
					checkTensorIs(t, fmt.Sprintf("op %d input %d", want.ID, i), op.Inputs[i], wt.ID, mustParseDT(t, wt.DType), wt.Shape, wt.Stride, LayoutStrided, wt.property(t))
				}
				for i, wt := range want.Outputs {
					checkTensorIs(t, fmt.Sprintf("op %d output %d", want.ID, i), op.Outputs[i], wt.ID, mustParseDT(t, wt.DType), wt.Shape, wt.Stride, LayoutStrided, wt.property(t))
				}
			}
		})
	}
}

func mustParseDT(t *testing.T, s string) dtypes.DataType {
	t.Helper()
	dt, err := dtypes.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

// sameGraph fails unless a and b have the same FPMath and the same ops in
// the same order, with the same attributes (f32 compared bit for bit) and
// tensors (nil and empty dims told apart).
func sameGraph(t testing.TB, a, b *Graph) {
	t.Helper()
	if a.FPMath != b.FPMath {
		t.Errorf("FPMath %q vs %q", a.FPMath, b.FPMath)
	}
	ao, bo := a.Ops(), b.Ops()
	if len(ao) != len(bo) {
		t.Fatalf("%d ops vs %d", len(ao), len(bo))
	}
	for i := range ao {
		x, y := ao[i], bo[i]
		if x.ID != y.ID || x.Kind != y.Kind || x.Name != y.Name {
			t.Errorf("op %d: %v vs %v", i, x, y)
		}
		if !slices.Equal(x.AttrNames(), y.AttrNames()) {
			t.Errorf("%v: attrs %v vs %v", x, x.AttrNames(), y.AttrNames())
			continue
		}
		for _, n := range x.AttrNames() {
			p, _ := x.Attr(n)
			q, _ := y.Attr(n)
			if !sameAttr(p, q) {
				t.Errorf("%v: attr %s = %+v vs %+v", x, n, p, q)
			}
		}
		sameTensors(t, x, x.Inputs, y.Inputs)
		sameTensors(t, x, x.Outputs, y.Outputs)
	}
}

func sameAttr(p, q Attr) bool {
	bits := func(fs []float32) []uint32 {
		out := make([]uint32, len(fs))
		for i, f := range fs {
			out[i] = math.Float32bits(f)
		}
		return out
	}
	return p.Type == q.Type && p.I == q.I && slices.Equal(p.Is, q.Is) &&
		math.Float32bits(p.F) == math.Float32bits(q.F) && slices.Equal(bits(p.Fs), bits(q.Fs)) &&
		p.B == q.B && p.S == q.S
}

func sameTensors(t testing.TB, op *Op, x, y []LogicalTensor) {
	t.Helper()
	if len(x) != len(y) {
		t.Errorf("%v: %d vs %d tensors", op, len(x), len(y))
		return
	}
	for i := range x {
		p, q := x[i], y[i]
		ok := p.ID == q.ID && p.DataType == q.DataType && p.Layout == q.Layout && p.Property == q.Property &&
			(p.Dims == nil) == (q.Dims == nil) && slices.Equal(p.Dims, q.Dims)
		if p.Layout == LayoutStrided {
			ok = ok && (p.Strides == nil) == (q.Strides == nil) && slices.Equal(p.Strides, q.Strides)
		}
		if !ok {
			t.Errorf("%v: tensor %d: %v (strides %v) vs %v (strides %v)", op, i, p, p.Strides, q, q.Strides)
		}
	}
}

// roundTrip writes g, reads it back, checks it is the same graph, and that
// writing the copy gives the same bytes.
func roundTrip(t testing.TB, g *Graph) {
	t.Helper()
	b1 := writeJSON(t, g)
	g2, err := ReadJSON(bytes.NewReader(b1))
	if err != nil {
		t.Fatalf("ReadJSON(WriteJSON(g)): %v\n%s", err, b1)
	}
	sameGraph(t, g, g2)
	if b2 := writeJSON(t, g2); !bytes.Equal(b1, b2) {
		t.Errorf("WriteJSON is not stable:\n%s\nvs\n%s", b1, b2)
	}
}

func TestJSONRoundTripShared(t *testing.T) {
	for _, f := range sharedJSONFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			g := readJSONFile(t, f)
			roundTrip(t, g)
			if err := g.Finalize(); err != nil {
				t.Fatal(err)
			}
			roundTrip(t, g)
		})
	}
}

// decodeGeneric decodes JSON into maps and slices, numbers kept as text.
func decodeGeneric(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// floatsAsValues replaces every number written with a fraction or an
// exponent by its float64 value, so that 1e-05 (a dump's spelling) and
// 0.00001 (encoding/json's) compare equal; integers (ids, dims) stay text.
func floatsAsValues(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = floatsAsValues(e)
		}
	case []any:
		for i, e := range x {
			x[i] = floatsAsValues(e)
		}
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, err := x.Float64()
			if err == nil {
				return f
			}
		}
	}
	return v
}

// dumpInputPortsPartial are dumps whose input_ports list leaves out graph
// inputs: rmsnorm.json lists src (0) but not gamma (2), which no op
// produces either. WriteJSON lists every graph input; there the dump's
// must be among them.
var dumpInputPortsPartial = map[string]bool{"rmsnorm.json": true}

// WriteJSON must reproduce oneDNN's own dumps: the same graph section
// (numbers compared by value), and the same ports where the dump lists
// them.
func TestWriteJSONMatchesDumps(t *testing.T) {
	for _, f := range sharedJSONFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := decodeGeneric(t, raw)
			got := decodeGeneric(t, writeJSON(t, readJSONFile(t, f)))
			if !reflect.DeepEqual(floatsAsValues(got["graph"]), floatsAsValues(want["graph"])) {
				t.Errorf("graph section differs from the dump:\n got %v\nwant %v", got["graph"], want["graph"])
			}
			for _, k := range []string{"engine_kind", "fpmath_mode", "input_ports", "output_ports"} {
				if w, ok := want[k]; ok && k == "input_ports" && dumpInputPortsPartial[filepath.Base(f)] {
					for _, id := range w.([]any) {
						if !slices.Contains(got[k].([]any), id) {
							t.Errorf("input_ports = %v lacks the dump's %v", got[k], id)
						}
					}
				} else if ok && !reflect.DeepEqual(got[k], w) {
					t.Errorf("%s = %v, the dump has %v", k, got[k], w)
				}
			}
			if got["version"] != "3.0.0" {
				t.Errorf("version = %v, want 3.0.0", got["version"])
			}
		})
	}
}

func TestWriteJSONLayout(t *testing.T) {
	out := string(writeJSON(t, readJSONFile(t, sharedPath(t, "op/f32/reducemean.json"))))
	prefix := "{\n  \"version\": \"3.0.0\",\n  \"engine_kind\": \"cpu\",\n  \"fpmath_mode\": \"strict\",\n" +
		"  \"input_ports\": [\n    0\n  ],\n  \"output_ports\": [\n    1\n  ],\n  \"graph\": [\n    {\n      \"id\": 0,\n" +
		"      \"name\": \"REDUCTION_0\",\n      \"kind\": \"ReduceMean\",\n      \"attrs\": {\n        \"axes\": {\n" +
		"          \"type\": \"s64[]\",\n          \"value\": [\n            1\n          ]\n        },\n" +
		"        \"keep_dims\": {\n          \"type\": \"bool\",\n          \"value\": 1\n        }\n      },\n"
	if !strings.HasPrefix(out, prefix) {
		t.Errorf("output does not start like oneDNN's dumps:\n%s", out)
	}
	if !strings.HasSuffix(out, "\n  ]\n}\n") {
		t.Errorf("output does not end with the graph array and a newline:\n%s", out)
	}
}

// buildMixedGraph builds, through the public API, a graph with every
// feature the format carries: all attribute types, unknown dims and rank,
// any/undef layouts, nil strides, constant tensors, extreme ids and
// values, and ops added out of topological order.
func buildMixedGraph(t *testing.T) *Graph {
	t.Helper()
	g := New()
	g.FPMath = "tf32"
	const big = math.MaxUint64
	add := NewOp(big-1, Add, "add <&> \"q\"").SetAttr("auto_broadcast", "numpy").
		AddInput(NewLogicalTensorAny(20, dtypes.F32, []int64{4, 1, UnknownDim})).
		AddInput(NewLogicalTensor(21, dtypes.F32, []int64{1, 1, 5}).WithProperty(PropertyConstant)).
		AddOutput(LogicalTensor{ID: big, DataType: dtypes.F32, Layout: LayoutStrided, Property: PropertyVariable})
	mean := NewOp(0, ReduceMean, "").SetAttr("axes", []int64{-2}).SetAttr("keep_dims", true).
		AddInput(NewLogicalTensorStrided(10, dtypes.F16, []int64{4, 6, UnknownDim}, []int64{1, 4, UnknownDim})).
		AddOutput(NewLogicalTensorAny(20, dtypes.F32, []int64{4, 1, UnknownDim}))
	elu := NewOp(7, Elu, "elu").SetAttr("alpha", float32(math.SmallestNonzeroFloat32)).
		AddInput(NewLogicalTensor(30, dtypes.BF16, []int64{})).
		AddOutput(NewLogicalTensorAny(31, dtypes.BF16, nil))
	wild := NewOp(1<<63, Wildcard, "").
		SetAttr("i", int64(math.MinInt64)).SetAttr("is", []int64{}).SetAttr("f", float32(math.Copysign(0, -1))).
		SetAttr("fs", []float32{math.MaxFloat32, -1.25e-7}).SetAttr("b", false).SetAttr("s", "").
		SetAttr("", "empty name").SetAttr("odd name.x", int64(1)).
		AddInput(LogicalTensor{ID: 31, DataType: dtypes.BF16, Layout: LayoutAny, Property: PropertyVariable}).
		AddOutput(LogicalTensor{ID: 40, DataType: dtypes.S64, Dims: []int64{3}, Layout: LayoutUndef})
	for _, op := range []*Op{add, mean, elu, wild} {
		if err := g.AddOp(op); err != nil {
			t.Fatalf("AddOp(%v): %v", op, err)
		}
	}
	return g
}

func TestJSONRoundTripBuilt(t *testing.T) {
	g := buildMixedGraph(t)
	roundTrip(t, g)
	if err := g.Finalize(); err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	roundTrip(t, g)
	// The ports follow from the graph: 10, 21, 30 have no producer; 40 and
	// the Add's output have no consumer.
	in, out := graphPorts(g, g.Ops())
	if !slices.Equal(in, []uint64{10, 21, 30}) || !slices.Equal(out, []uint64{40, math.MaxUint64}) {
		t.Errorf("ports = %v, %v", in, out)
	}
}

func TestReadJSONHandWritten(t *testing.T) {
	g := readJSONFile(t, filepath.Join("testdata", "json", "valid_handwritten.json"))
	if g.FPMath != "bf16" {
		t.Errorf("FPMath = %q", g.FPMath)
	}
	mean, ok := g.Op(3)
	if !ok {
		t.Fatal("op 3 missing")
	}
	if keep, _ := mean.Bool("keep_dims"); !keep {
		t.Error("keep_dims given as true (before its type) read as false")
	}
	if axes, _ := mean.Ints("axes"); !slices.Equal(axes, []int64{-1, 1}) {
		t.Errorf("axes = %v", axes)
	}
	checkTensorIs(t, "mean src", mean.Inputs[0], 0, dtypes.BF16, []int64{UnknownDim, 16, 3, 4}, []int64{UnknownDim, 12, 4, 1}, LayoutStrided, PropertyVariable)
	// INT64_MIN is oneDNN's other spelling of an unknown dim.
	checkTensorIs(t, "mean dst", mean.Outputs[0], math.MaxUint64, dtypes.F32, []int64{UnknownDim, 1, 3, 1}, nil, LayoutAny, PropertyUndef)
	if mean.Outputs[0].Strides != nil {
		t.Errorf("layout any kept strides %v", mean.Outputs[0].Strides)
	}
	w, ok := g.Op(9)
	if !ok {
		t.Fatal("op 9 missing")
	}
	if i, _ := w.Int("i"); i != math.MinInt64 {
		t.Errorf("i = %d", i)
	}
	if is, ok := w.Ints("is"); !ok || len(is) != 0 {
		t.Errorf("is = %v (%v)", is, ok)
	}
	if f, _ := w.Float("f"); math.Float32bits(f) != 1<<31 {
		t.Errorf("f = %v (bits %#x), want -0", f, math.Float32bits(f))
	}
	// Independent reference: the f32 nearest each decimal.
	wantFs := []float32{1.5, math.MaxFloat32, math.SmallestNonzeroFloat32}
	if a, _ := w.Attr("fs"); !slices.Equal(a.Fs, wantFs) {
		t.Errorf("fs = %v, want %v", a.Fs, wantFs)
	}
	if b, ok := w.Bool("b"); !ok || b {
		t.Errorf("b = %v (%v), want false from 0", b, ok)
	}
	if s, _ := w.Str("s"); s != "x \"quoted\" <tag> é" {
		t.Errorf("s = %q", s)
	}
	checkTensorIs(t, "wildcard src", w.Inputs[0], 5, dtypes.S32, []int64{}, []int64{}, LayoutStrided, PropertyConstant)
	if w.Inputs[0].Dims == nil || w.Inputs[0].Rank() != 0 {
		t.Errorf("shape [] must be a scalar, got rank %d", w.Inputs[0].Rank())
	}
	if o := w.Outputs[0]; o.Dims != nil || o.Layout != LayoutUndef || o.DataType != dtypes.U8 || o.Property != PropertyUndef {
		t.Errorf("wildcard dst = %v, want unknown rank, layout undef, u8", o)
	}
	roundTrip(t, g)
	if err := g.Finalize(); err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	roundTrip(t, g)
}

// baseDoc is a small valid graph (ReduceMean -> Clamp -> Add) that the
// malformed-input tests break one piece at a time.
const baseDoc = `{
  "version": "3.0.0",
  "engine_kind": "cpu",
  "fpmath_mode": "strict",
  "input_ports": [0, 1],
  "output_ports": [4],
  "graph": [
    {"id": 10, "name": "mean", "kind": "ReduceMean",
     "attrs": {"axes": {"type": "s64[]", "value": [1]}, "keep_dims": {"type": "bool", "value": 1}},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 8, 4], "stride": [32, 4, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 2, "dtype": "f32", "shape": [2, 1, 4], "stride": [4, 4, 1], "layout_type": "strided", "property_type": "undef"}]},
    {"id": 11, "name": "clamp", "kind": "Clamp",
     "attrs": {"min": {"type": "f32", "value": -1.5}, "max": {"type": "f32", "value": 2.5}},
     "inputs": [{"id": 2, "dtype": "f32", "shape": [2, 1, 4], "stride": [4, 4, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 3, "dtype": "f32", "shape": [2, 1, 4], "stride": [], "layout_type": "any", "property_type": "undef"}]},
    {"id": 12, "name": "add", "kind": "Add",
     "attrs": {"auto_broadcast": {"type": "string", "value": "numpy"}},
     "inputs": [{"id": 3, "dtype": "f32", "shape": [2, 1, 4], "stride": [], "layout_type": "any", "property_type": "undef"},
                {"id": 1, "dtype": "f32", "shape": [1, 1, 4], "stride": [4, 4, 1], "layout_type": "strided", "property_type": "constant"}],
     "outputs": [{"id": 4, "dtype": "f32", "shape": [-1, -1, -1], "stride": [-1, -1, -1], "layout_type": "strided", "property_type": "undef"}]}
  ]
}`

func TestReadJSONBaseDoc(t *testing.T) {
	g, err := ReadJSON(strings.NewReader(baseDoc))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	clamp, _ := g.Op(11)
	if lo, _ := clamp.Float("min"); lo != -1.5 {
		t.Errorf("min = %v", lo)
	}
	// The Add's output was given as unknown; Finalize infers the broadcast.
	if out := mustTensor(t, g, 4); !slices.Equal(out.Dims, []int64{2, 1, 4}) {
		t.Errorf("tensor 4 dims = %v, want 2x1x4", out.Dims)
	}
	roundTrip(t, g)
}

// An output port that ops also consume gets an End op reading it, as
// oneDNN marks such a graph output; WriteJSON then writes oneDNN's form
// (the End op, and only unconsumed tensors as output_ports), which reads
// back to the same graph.
func TestReadJSONOutputPortKept(t *testing.T) {
	ends := func(g *Graph) (ids []uint64, reads []uint64) {
		for _, op := range g.Ops() {
			if op.Kind == End {
				ids, reads = append(ids, op.ID), append(reads, op.Inputs[0].ID)
			}
		}
		return ids, reads
	}
	g, err := ReadJSON(strings.NewReader(strings.Replace(baseDoc, `"output_ports": [4]`, `"output_ports": [2, 4]`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ids, reads := ends(g)
	if !slices.Equal(ids, []uint64{13}) || !slices.Equal(reads, []uint64{2}) || len(g.Ops()) != 4 {
		t.Fatalf("End ops %v reading %v in %d ops, want op 13 reading tensor 2 in 4", ids, reads, len(g.Ops()))
	}
	if end, _ := g.Op(13); end.Name != "output_port_2" {
		t.Errorf("End op is named %q", end.Name)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	b := writeJSON(t, g)
	if !bytes.Contains(b, []byte(`"output_ports": [
    4
  ]`)) || !bytes.Contains(b, []byte(`"kind": "End"`)) {
		t.Errorf("WriteJSON: want output_ports [4] and the End op:\n%s", b)
	}
	roundTrip(t, g)
	g2, err := ReadJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := ends(g2); !slices.Equal(ids, []uint64{13}) {
		t.Errorf("read back: End ops %v, want only op 13", ids)
	}

	// No End op for a port nothing consumes, for a graph input, or for a
	// tensor an End op reads already.
	for _, ports := range []string{`[4]`, `[0, 4]`, `[]`} {
		g, err := ReadJSON(strings.NewReader(strings.Replace(baseDoc, `"output_ports": [4]`, `"output_ports": `+ports, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if ids, _ := ends(g); len(ids) != 0 {
			t.Errorf("output_ports %s: End ops %v, want none", ports, ids)
		}
	}
	withEnd := strings.Replace(strings.Replace(baseDoc, `"output_ports": [4]`, `"output_ports": [2, 4]`, 1), `
  ]
}`, `,
    {"id": 20, "name": "end", "kind": "End",
     "inputs": [{"id": 2, "dtype": "f32", "shape": [2, 1, 4], "stride": [4, 4, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": []}
  ]
}`, 1)
	g, err = ReadJSON(strings.NewReader(withEnd))
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := ends(g); !slices.Equal(ids, []uint64{20}) {
		t.Errorf("with the file's own End op: End ops %v, want only op 20", ids)
	}
	// The file's End op with an empty attrs object loads; with an
	// attribute it is refused (oneDNN's End has none), naming it.
	for _, c := range []struct{ attrs, want string }{
		{`{}`, ""},
		{`{"keep_dims": {"type": "bool", "value": 1}}`, `graph[3]: op 20 (End "end"): unknown attribute "keep_dims" for End`},
	} {
		_, err := ReadJSON(strings.NewReader(strings.Replace(withEnd, `"kind": "End",`, `"kind": "End", "attrs": `+c.attrs+`,`, 1)))
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, InvalidGraphOp) || !strings.Contains(fmt.Sprint(err), c.want)) {
			t.Errorf("End with attrs %s: err %v, want %q", c.attrs, err, c.want)
		}
	}
}

// malformed is one broken input: base with old replaced by new (once), or
// the whole doc when old is empty.
type malformed struct {
	name     string
	old, new string
	status   Status
	want     []string // substrings of the message: the JSON path, the bad value
}

func (m malformed) doc(t *testing.T) string {
	t.Helper()
	if m.old == "" {
		return m.new
	}
	if !strings.Contains(baseDoc, m.old) {
		t.Fatalf("%s: %q is not in the base doc", m.name, m.old)
	}
	return strings.Replace(baseDoc, m.old, m.new, 1)
}

func runMalformed(t *testing.T, cases []malformed) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := ReadJSON(strings.NewReader(c.doc(t)))
			checkErr(t, g, err, c.status, c.want)
		})
	}
}

func checkErr(t *testing.T, g *Graph, err error, st Status, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted (%d ops), want %v", len(g.Ops()), st)
	}
	if g != nil {
		t.Error("a graph was returned with the error")
	}
	if !errors.Is(err, st) {
		t.Errorf("error %q is not %v", err, st)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("error %T is not a *graph.Error", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestReadJSONNotJSON(t *testing.T) {
	runMalformed(t, []malformed{
		{"empty", "", "", InvalidArguments, []string{"top level", "input is empty"}},
		{"spaces", "", " \n\t ", InvalidArguments, []string{"top level", "want a JSON object"}},
		{"word", "", "graph", InvalidArguments, []string{"top level", "not valid JSON"}},
		{"array", "", "[1, 2]", InvalidArguments, []string{"top level", "want an object, got an array"}},
		{"string", "", `"graph"`, InvalidArguments, []string{"top level", `want an object, got string "graph"`}},
		{"open", "", "{", InvalidArguments, []string{"top level", "ends too early"}},
		{"truncated", "", baseDoc[:len(baseDoc)/2], InvalidArguments, []string{"graph[1]", "ends too early"}},
		{"bad literal", `"value": 1}`, `"value": tru}`, InvalidArguments, []string{"graph[0].attrs.keep_dims.value", "not valid JSON", "in literal true"}},
		{"missing colon", `"kind": "Clamp"`, `"kind" "Clamp"`, InvalidArguments, []string{"graph[1].kind", "not valid JSON", "after object key"}},
		{"trailing comma", `[32, 4, 1]`, `[32, 4, 1,]`, InvalidArguments, []string{"graph[0].inputs[0].stride", "not valid JSON"}},
		{"bad number", `"shape": [2, 8, 4]`, `"shape": [2, 8., 4]`, InvalidArguments, []string{"graph[0].inputs[0].shape[1]", "not valid JSON"}},
		{"single quotes", `"name": "add"`, `"name": 'add'`, InvalidArguments, []string{"graph[2].name", "not valid JSON"}},
		{"bad in raw value", `{"type": "f32", "value": -1.5}`, `{"value": [1,], "type": "f32"}`, InvalidArguments, []string{"graph[1].attrs.min.value", "not valid JSON"}},
	})
}

func TestReadJSONTrailingGarbage(t *testing.T) {
	runMalformed(t, []malformed{
		{"word", "", baseDoc + "x", InvalidArguments, []string{"trailing data after the top-level object"}},
		{"second object", "", baseDoc + "\n{}", InvalidArguments, []string{"trailing data", "an object"}},
		{"second number", "", baseDoc + " 1", InvalidArguments, []string{"trailing data", "number 1"}},
		{"close bracket", "", baseDoc + "]", InvalidArguments, []string{"trailing data"}},
		{"nul byte", "", baseDoc + "\x00", InvalidArguments, []string{"trailing data"}},
	})
	// Trailing white space is fine.
	if _, err := ReadJSON(strings.NewReader(baseDoc + "\n\t \n")); err != nil {
		t.Errorf("trailing white space rejected: %v", err)
	}
}

func TestReadJSONWrongTypes(t *testing.T) {
	runMalformed(t, []malformed{
		{"version number", `"version": "3.0.0"`, `"version": 3`, InvalidArguments, []string{"at version:", "want a string, got number 3"}},
		{"engine null", `"engine_kind": "cpu"`, `"engine_kind": null`, InvalidArguments, []string{"at engine_kind:", "got null"}},
		{"fpmath bool", `"fpmath_mode": "strict"`, `"fpmath_mode": true`, InvalidArguments, []string{"at fpmath_mode:", "got bool true"}},
		{"ports string", `"input_ports": [0, 1]`, `"input_ports": "0,1"`, InvalidArguments, []string{"at input_ports:", `want an array, got string "0,1"`}},
		{"port float", `"output_ports": [4]`, `"output_ports": [4.5]`, InvalidArguments, []string{"output_ports[0]", "number 4.5"}},
		{"graph object", `"graph": [`, `"graph": {"a": [`, InvalidArguments, []string{"at graph:", "want an array, got an object"}},
		{"op string", `{"id": 11,`, `"clamp", {"id": 11,`, InvalidArguments, []string{"graph[1]:", `want an object, got string "clamp"`}},
		{"op id string", `"id": 10`, `"id": "10"`, InvalidArguments, []string{"graph[0].id", `string "10"`}},
		{"op id float", `"id": 10`, `"id": 10.0`, InvalidArguments, []string{"graph[0].id", "number 10.0"}},
		{"op id exponent", `"id": 10`, `"id": 1e1`, InvalidArguments, []string{"graph[0].id", "number 1e1"}},
		{"name number", `"name": "clamp"`, `"name": 5`, InvalidArguments, []string{"graph[1].name", "number 5"}},
		{"kind array", `"kind": "Add"`, `"kind": ["Add"]`, InvalidArguments, []string{"graph[2].kind", "an array"}},
		{"attrs array", `"attrs": {"auto_broadcast"`, `"attrs": [], "x": {"auto_broadcast"`, InvalidArguments, []string{"graph[2].attrs", "want an object, got an array"}},
		{"attr not object", `"auto_broadcast": {"type": "string", "value": "numpy"}`, `"auto_broadcast": "numpy"`, InvalidArguments, []string{"graph[2].attrs.auto_broadcast:", `string "numpy"`}},
		{"inputs object", `"inputs": [{"id": 0,`, `"inputs": {"a": {"id": 0,`, InvalidArguments, []string{"graph[0].inputs", "an object"}},
		{"tensor number", `"outputs": [{"id": 4,`, `"outputs": [7, {"id": 4,`, InvalidArguments, []string{"graph[2].outputs[0]", "number 7"}},
		{"shape string", `"shape": [2, 8, 4]`, `"shape": "2x8x4"`, InvalidArguments, []string{"graph[0].inputs[0].shape", `string "2x8x4"`}},
		{"dim string", `"shape": [2, 8, 4]`, `"shape": [2, "8", 4]`, InvalidArguments, []string{"graph[0].inputs[0].shape[1]", `string "8"`}},
		{"dim float", `"shape": [2, 8, 4]`, `"shape": [2, 8.5, 4]`, InvalidArguments, []string{"graph[0].inputs[0].shape[1]", "number 8.5"}},
		{"dim huge", `"shape": [2, 8, 4]`, `"shape": [2, 9223372036854775808, 4]`, InvalidArguments, []string{"graph[0].inputs[0].shape[1]", "9223372036854775808", "int64 range"}},
		{"stride bool", `"stride": [32, 4, 1]`, `"stride": true`, InvalidArguments, []string{"graph[0].inputs[0].stride", "bool true"}},
		{"dtype number", `"dtype": "f32", "shape": [1, 1, 4]`, `"dtype": 32, "shape": [1, 1, 4]`, InvalidArguments, []string{"graph[2].inputs[1].dtype", "number 32"}},
		{"layout null", `"shape": [2, 8, 4], "stride": [32, 4, 1], "layout_type": "strided"`, `"shape": [2, 8, 4], "stride": [32, 4, 1], "layout_type": null`, InvalidArguments, []string{"graph[0].inputs[0].layout_type", "null"}},
		{"property number", `"property_type": "constant"`, `"property_type": 0`, InvalidArguments, []string{"graph[2].inputs[1].property_type", "number 0"}},
		{"attr type number", `{"type": "s64[]", "value": [1]}`, `{"type": 64, "value": [1]}`, InvalidArguments, []string{"graph[0].attrs.axes.type", "number 64"}},
		{"unknown layout", `"layout_type": "any", "property_type": "undef"}]},`, `"layout_type": "blocked", "property_type": "undef"}]},`, InvalidArguments, []string{"graph[1].outputs[0].layout_type", `"blocked"`}},
		{"unknown property", `"property_type": "constant"`, `"property_type": "mutable"`, InvalidArguments, []string{"graph[2].inputs[1].property_type", `"mutable"`}},
		{"duplicate key", `"name": "mean",`, `"name": "mean", "name": "mean2",`, InvalidArguments, []string{"graph[0].name", "appears twice"}},
		{"duplicate attr", `"keep_dims": {"type": "bool", "value": 1}`, `"keep_dims": {"type": "bool", "value": 1}, "keep_dims": {"type": "bool", "value": 0}`, InvalidArguments, []string{"graph[0].attrs.keep_dims", "appears twice"}},
		{"odd key path", `"keep_dims": {"type": "bool", "value": 1}`, `"keep dims": {"type": "bool", "value": "x"}`, InvalidArguments, []string{`graph[0].attrs["keep dims"].value`, `string "x"`}},
	})
}

func TestReadJSONUnknownKind(t *testing.T) {
	runMalformed(t, []malformed{
		{"median", `"kind": "ReduceMean"`, `"kind": "ReduceMedian"`, InvalidGraphOp, []string{"graph[0].kind", `"ReduceMedian"`}},
		{"lower case", `"kind": "Clamp"`, `"kind": "clamp"`, InvalidGraphOp, []string{"graph[1].kind", `"clamp"`}},
		{"empty", `"kind": "Add"`, `"kind": ""`, InvalidGraphOp, []string{"graph[2].kind", `""`}},
		// Real oneDNN ops that gdnn does not describe: valid cases gdnn cannot run.
		{"AvgPool", `"kind": "ReduceMean"`, `"kind": "AvgPool"`, Unimplemented, []string{"graph[0].kind", `"AvgPool"`, "oneDNN op"}},
		{"GenIndex", `"kind": "Clamp"`, `"kind": "GenIndex"`, Unimplemented, []string{"graph[1].kind", `"GenIndex"`}},
	})
}

func TestReadJSONUnknownDType(t *testing.T) {
	runMalformed(t, []malformed{
		// Names oneDNN does not know either: malformed input.
		{"f8", `"dtype": "f32", "shape": [2, 8, 4]`, `"dtype": "f8", "shape": [2, 8, 4]`, InvalidArguments, []string{"graph[0].inputs[0].dtype", `unknown data type "f8"`}},
		{"float", `"dtype": "f32", "shape": [1, 1, 4]`, `"dtype": "float", "shape": [1, 1, 4]`, InvalidArguments, []string{"graph[2].inputs[1].dtype", `"float"`}},
		{"zz", `"dtype": "f32", "shape": [2, 8, 4]`, `"dtype": "zz", "shape": [2, 8, 4]`, InvalidArguments, []string{"graph[0].inputs[0].dtype", `"zz"`}},
		{"empty", `"dtype": "f32", "shape": [2, 8, 4]`, `"dtype": "", "shape": [2, 8, 4]`, InvalidArguments, []string{"graph[0].inputs[0].dtype", `""`}},
		// A oneDNN data type package dtypes lacks: valid, not implemented.
		{"f8_e4m3", `"dtype": "f32", "shape": [2, 8, 4]`, `"dtype": "f8_e4m3", "shape": [2, 8, 4]`, Unimplemented, []string{"graph[0].inputs[0].dtype", `"f8_e4m3"`}},
		{"undef", `"dtype": "f32", "shape": [-1, -1, -1]`, `"dtype": "undef", "shape": [-1, -1, -1]`, InvalidDataType, []string{"graph[2].outputs[0].dtype", `"undef"`}},
		// A known data type the op does not take: the schema's error, at the op's path.
		{"boolean for ReduceMean", `"dtype": "f32", "shape": [2, 8, 4]`, `"dtype": "boolean", "shape": [2, 8, 4]`, InvalidDataType, []string{"graph[0]", "boolean"}},
	})
}

func TestReadJSONBadAttrType(t *testing.T) {
	runMalformed(t, []malformed{
		{"s32", `{"type": "s64[]", "value": [1]}`, `{"type": "s32", "value": [1]}`, InvalidArguments, []string{"graph[0].attrs.axes.type", `"s32"`}},
		{"int64", `{"type": "f32", "value": 2.5}`, `{"type": "int64", "value": 2.5}`, InvalidArguments, []string{"graph[1].attrs.max.type", `"int64"`}},
		{"empty", `{"type": "string", "value": "numpy"}`, `{"type": "", "value": "numpy"}`, InvalidArguments, []string{"graph[2].attrs.auto_broadcast.type", `""`}},
		// A valid type that is not the attribute's: the schema's error.
		{"axes as s64", `{"type": "s64[]", "value": [1]}`, `{"type": "s64", "value": 1}`, InvalidGraphOp, []string{"graph[0]", "axes", "s64"}},
	})
}

func TestReadJSONAttrValueType(t *testing.T) {
	runMalformed(t, []malformed{
		{"s64[] string", `"value": [1]}`, `"value": "1"}`, InvalidArguments, []string{"graph[0].attrs.axes.value", `want an array, got string "1"`}},
		{"s64[] float", `"value": [1]}`, `"value": [0, 1.5]}`, InvalidArguments, []string{"graph[0].attrs.axes.value[1]", "number 1.5"}},
		{"s64[] null", `"value": [1]}`, `"value": null}`, InvalidArguments, []string{"graph[0].attrs.axes.value", "null"}},
		{"bool 2", `"type": "bool", "value": 1`, `"type": "bool", "value": 2`, InvalidArguments, []string{"graph[0].attrs.keep_dims.value", "number 2"}},
		{"bool string", `"type": "bool", "value": 1`, `"type": "bool", "value": "true"`, InvalidArguments, []string{"graph[0].attrs.keep_dims.value", `string "true"`}},
		{"f32 string", `"value": -1.5`, `"value": "x"`, InvalidArguments, []string{"graph[1].attrs.min.value", `string "x"`}},
		{"f32 array", `"value": 2.5`, `"value": [2.5]`, InvalidArguments, []string{"graph[1].attrs.max.value", "an array"}},
		{"f32 too big", `"value": 2.5`, `"value": 1e39`, InvalidArguments, []string{"graph[1].attrs.max.value", "1e39", "f32 range"}},
		{"string number", `"value": "numpy"`, `"value": 3`, InvalidArguments, []string{"graph[2].attrs.auto_broadcast.value", "number 3"}},
		{"value before type", `{"type": "f32", "value": -1.5}`, `{"value": "low", "type": "f32"}`, InvalidArguments, []string{"graph[1].attrs.min.value", `string "low"`}},
		{"s64 float", `{"type": "s64[]", "value": [1]}`, `{"type": "s64", "value": 1.25}`, InvalidArguments, []string{"graph[0].attrs.axes.value", "number 1.25"}},
		{"f32[] element", `{"type": "f32", "value": 2.5}`, `{"type": "f32[]", "value": [1, true]}`, InvalidArguments, []string{"graph[1].attrs.max.value[1]", "bool true"}},
	})
}

func TestReadJSONMissingFields(t *testing.T) {
	runMalformed(t, []malformed{
		{"version", `"version": "3.0.0",`, ``, InvalidArguments, []string{"top level", `missing field "version"`}},
		{"engine_kind", `"engine_kind": "cpu",`, ``, InvalidArguments, []string{"top level", `missing field "engine_kind"`}},
		{"graph", "", `{"version": "3.0.0", "engine_kind": "cpu"}`, InvalidArguments, []string{"top level", `missing field "graph"`}},
		{"op id", `"id": 11, `, ``, InvalidArguments, []string{"graph[1]:", `missing field "id"`}},
		{"op kind", `"kind": "Add",`, ``, InvalidArguments, []string{"graph[2]:", `missing field "kind"`}},
		{"op inputs", `"inputs": [{"id": 2, "dtype": "f32", "shape": [2, 1, 4], "stride": [4, 4, 1], "layout_type": "strided", "property_type": "undef"}],`, ``, InvalidArguments, []string{"graph[1]:", `missing field "inputs"`}},
		{"op outputs", `,
     "outputs": [{"id": 2,`, `, "x": [{"id": 2,`, InvalidArguments, []string{"graph[0]:", `missing field "outputs"`}},
		{"tensor id", `{"id": 0, "dtype"`, `{"dtype"`, InvalidArguments, []string{"graph[0].inputs[0]:", `missing field "id"`}},
		{"tensor dtype", `"dtype": "f32", "shape": [1, 1, 4]`, `"shape": [1, 1, 4]`, InvalidArguments, []string{"graph[2].inputs[1]:", `missing field "dtype"`}},
		{"tensor shape", `"shape": [2, 8, 4], `, ``, InvalidArguments, []string{"graph[0].inputs[0]:", `missing field "shape"`}},
		{"tensor layout", `"stride": [-1, -1, -1], "layout_type": "strided", `, `"stride": [-1, -1, -1], `, InvalidArguments, []string{"graph[2].outputs[0]:", `missing field "layout_type"`}},
		{"attr type", `{"type": "s64[]", "value": [1]}`, `{"value": [1]}`, InvalidArguments, []string{"graph[0].attrs.axes:", `missing field "type"`}},
		{"attr value", `{"type": "f32", "value": 2.5}`, `{"type": "f32"}`, InvalidArguments, []string{"graph[1].attrs.max:", `missing field "value"`}},
		// A required attribute missing: the schema's error at the op's path.
		{"clamp max", `, "max": {"type": "f32", "value": 2.5}`, ``, InvalidGraphOp, []string{"graph[1]", `"max"`}},
	})
}

func TestReadJSONHugeArrays(t *testing.T) {
	dims13 := "[" + strings.Repeat("1, ", 12) + "1]"
	runMalformed(t, []malformed{
		{"rank 13 shape", `"shape": [2, 8, 4]`, `"shape": ` + dims13, InvalidShape, []string{"graph[0].inputs[0].shape", "more than 12 dims"}},
		{"rank 13 stride", `"stride": [32, 4, 1]`, `"stride": ` + dims13, InvalidShape, []string{"graph[0].inputs[0].stride", "more than 12 strides"}},
		{"stride count", `"stride": [32, 4, 1]`, `"stride": [4, 1]`, InvalidShape, []string{"graph[0].inputs[0].stride", "2 entries", "3 dims"}},
	})
	// The count limits: each case shrinks one of them so it stays cheap.
	roomy := jsonLimits{ops: 10, ports: 10, tensorRefs: 100, attrs: 10, attrElems: 100, keys: 20, skipDepth: 10}
	limited := []struct {
		malformed
		shrink func(*jsonLimits)
	}{
		{malformed{"ops", "", baseDoc, InvalidArguments, []string{"at graph:", "more than 2 ops"}},
			func(l *jsonLimits) { l.ops = 2 }},
		{malformed{"ports of one op", "", baseDoc, InvalidArguments, []string{"graph[2].inputs", "more than 1 tensors"}},
			func(l *jsonLimits) { l.ports = 1 }},
		{malformed{"tensor entries", "", baseDoc, InvalidArguments, []string{"graph[2].inputs[0]", "more than 4 tensor entries"}},
			func(l *jsonLimits) { l.tensorRefs = 4 }},
		{malformed{"ports list", `"input_ports": [0, 1]`, `"input_ports": [0, 1, 2, 3, 4]`, InvalidArguments, []string{"input_ports", "more than 4 entries"}},
			func(l *jsonLimits) { l.tensorRefs = 4 }},
		{malformed{"attrs of one op", "", baseDoc, InvalidArguments, []string{"graph[0].attrs", "more than 1 attributes"}},
			func(l *jsonLimits) { l.attrs = 1 }},
		{malformed{"attr elements", `"value": [1]}`, `"value": [1, 2, 3, 4]}`, InvalidArguments, []string{"graph[0].attrs.axes.value", "more than 3 values"}},
			func(l *jsonLimits) { l.attrElems = 3 }},
		{malformed{"keys", "", `{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9}`, InvalidArguments, []string{"top level", "more than 8 keys"}},
			func(l *jsonLimits) { l.keys = 8 }},
		{malformed{"skip depth", "", `{"x": [[[[1]]]], "version": "3.0.0"}`, InvalidArguments, []string{"at x:", "nested more than 3 levels"}},
			func(l *jsonLimits) { l.skipDepth = 3 }},
	}
	for _, c := range limited {
		t.Run(c.name, func(t *testing.T) {
			// With roomy limits the doc does not hit a limit, so the shrunk
			// one is the cause.
			if _, err := readJSON(strings.NewReader(c.doc(t)), roomy); err != nil && strings.Contains(err.Error(), "more than") {
				t.Fatalf("roomy limits hit: %v", err)
			}
			l := roomy
			c.shrink(&l)
			g, err := readJSON(strings.NewReader(c.doc(t)), l)
			checkErr(t, g, err, c.status, c.want)
		})
	}
	t.Run("input larger than MaxJSONBytes", func(t *testing.T) {
		// A valid start, then white space past the cap: the reader must stop
		// at the cap, not read on.
		pad := &repeatReader{b: ' ', n: MaxJSONBytes + 1<<20}
		r := io.MultiReader(strings.NewReader(`{"version": "3.0.0",`), pad)
		g, err := ReadJSON(r)
		checkErr(t, g, err, InvalidArguments, []string{"larger than", fmt.Sprint(MaxJSONBytes)})
		if read := MaxJSONBytes + 1<<20 - pad.n; read > MaxJSONBytes+1 {
			t.Errorf("read %d padding bytes, more than the cap", read)
		}
	})
}

// repeatReader yields n copies of b.
type repeatReader struct {
	b byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n)
	for i := range k {
		p[i] = r.b
	}
	r.n -= k
	return int(k), nil
}

func TestReadJSONNegativeIDs(t *testing.T) {
	runMalformed(t, []malformed{
		{"op id", `"id": 10`, `"id": -1`, InvalidArguments, []string{"graph[0].id", "-1", "negative"}},
		{"tensor id", `{"id": 0, "dtype"`, `{"id": -3, "dtype"`, InvalidArguments, []string{"graph[0].inputs[0].id", "-3", "negative"}},
		{"port id", `"input_ports": [0, 1]`, `"input_ports": [0, -1]`, InvalidArguments, []string{"input_ports[1]", "-1", "negative"}},
		{"id beyond uint64", `"id": 12`, `"id": 18446744073709551616`, InvalidArguments, []string{"graph[2].id", "18446744073709551616", "2^64-1"}},
		{"negative dim", `"shape": [2, 8, 4]`, `"shape": [2, -5, 4]`, InvalidShape, []string{"graph[0].inputs[0].shape[1]", "-5", "negative"}},
		{"negative stride", `"stride": [32, 4, 1]`, `"stride": [32, -2, 1]`, InvalidShape, []string{"graph[0].inputs[0].stride[1]", "-2", "negative"}},
	})
}

// TestReadJSONNegativeDimsOutputsLikeInputs checks that outputs follow the
// inputs' rule for negative dims and strides: -1 and INT64_MIN (oneDNN
// 3.x's DNNL_GRAPH_UNKNOWN_DIM) are unknown, every other negative value is
// rejected, whether it sits in an input or an output.
func TestReadJSONNegativeDimsOutputsLikeInputs(t *testing.T) {
	const (
		inShape  = `"shape": [2, 8, 4], "stride": [32, 4, 1]`
		outShape = `"shape": [2, 1, 4], "stride": [4, 4, 1], "layout_type": "strided", "property_type": "undef"}]},
    {"id": 11`
		outPrefix = `"shape": [2, 1, 4], "stride": [4, 4, 1]`
	)
	var cases []malformed
	for _, v := range []string{"-2", "-5", "-9223372036854775807"} {
		cases = append(cases,
			malformed{"input dim " + v, inShape, `"shape": [2, ` + v + `, 4], "stride": [32, 4, 1]`, InvalidShape,
				[]string{"graph[0].inputs[0].shape[1]", v, "negative"}},
			malformed{"input stride " + v, inShape, `"shape": [2, 8, 4], "stride": [32, ` + v + `, 1]`, InvalidShape,
				[]string{"graph[0].inputs[0].stride[1]", v, "negative"}},
			malformed{"output dim " + v, outShape, strings.Replace(outShape, outPrefix, `"shape": [`+v+`, 1, 4], "stride": [4, 4, 1]`, 1), InvalidShape,
				[]string{"graph[0].outputs[0].shape[0]", v, "negative"}},
			malformed{"output stride " + v, outShape, strings.Replace(outShape, outPrefix, `"shape": [2, 1, 4], "stride": [`+v+`, 4, 1]`, 1), InvalidShape,
				[]string{"graph[0].outputs[0].stride[0]", v, "negative"}},
		)
	}
	runMalformed(t, cases)

	// INT64_MIN reads as UnknownDim in both places. An output's unknown dim
	// is then inferred; an input's stays unknown for the caller to reject
	// (Compile needs concrete input dims).
	const minInt = "-9223372036854775808"
	doc := strings.Replace(baseDoc, inShape, `"shape": [2, 8, 4], "stride": [`+minInt+`, 4, 1]`, 1)
	const lastOut = `"shape": [-1, -1, -1], "stride": [-1, -1, -1]`
	if !strings.Contains(doc, lastOut) {
		t.Fatalf("%q is not in the base doc", lastOut)
	}
	doc = strings.Replace(doc, lastOut, `"shape": [`+minInt+`, 1, -1], "stride": [4, `+minInt+`, 1]`, 1)
	g, err := ReadJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("INT64_MIN rejected: %v", err)
	}
	mean, _ := g.Op(10)
	if got := mean.Inputs[0].Strides; !slices.Equal(got, []int64{UnknownDim, 4, 1}) {
		t.Errorf("input strides = %v, want [-1 4 1]", got)
	}
	add, _ := g.Op(12)
	if got := add.Outputs[0]; !slices.Equal(got.Dims, []int64{UnknownDim, 1, UnknownDim}) || !slices.Equal(got.Strides, []int64{4, UnknownDim, 1}) {
		t.Errorf("output dims %v strides %v, want [-1 1 -1] and [4 -1 1]", got.Dims, got.Strides)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	if out := mustTensor(t, g, 4); !slices.Equal(out.Dims, []int64{2, 1, 4}) {
		t.Errorf("output dims after Finalize = %v, want the inferred 2x1x4", out.Dims)
	}
}

func TestReadJSONNaN(t *testing.T) {
	runMalformed(t, []malformed{
		{"NaN literal", `"value": -1.5`, `"value": NaN`, InvalidArguments, []string{"graph[1].attrs.min.value", "not valid JSON"}},
		{"NaN string", `"value": -1.5`, `"value": "NaN"`, InvalidArguments, []string{"graph[1].attrs.min.value", `string "NaN"`}},
		{"Infinity", `"value": 2.5`, `"value": Infinity`, InvalidArguments, []string{"graph[1].attrs.max.value", "not valid JSON"}},
		{"-inf", `"value": 2.5`, `"value": -inf`, InvalidArguments, []string{"graph[1].attrs.max.value", "not valid JSON"}},
		{"overflow to inf", `"value": -1.5`, `"value": -1e400`, InvalidArguments, []string{"graph[1].attrs.min.value", "-1e400", "f32 range"}},
		{"NaN in f32[]", `{"type": "f32", "value": 2.5}`, `{"type": "f32[]", "value": [1, NaN]}`, InvalidArguments, []string{"graph[1].attrs.max.value", "not valid JSON"}},
		{"NaN dim", `"shape": [2, 8, 4]`, `"shape": [2, NaN, 4]`, InvalidArguments, []string{"graph[0].inputs[0].shape[1]", "not valid JSON"}},
	})
}

func TestReadJSONVersionEngineLayout(t *testing.T) {
	runMalformed(t, []malformed{
		{"version 2", `"version": "3.0.0"`, `"version": "2.1.0"`, Unimplemented, []string{"at version:", `"2.1.0"`}},
		{"version 4", `"version": "3.0.0"`, `"version": "4.0"`, Unimplemented, []string{"at version:", `"4.0"`}},
		{"version 30", `"version": "3.0.0"`, `"version": "30.0.0"`, Unimplemented, []string{"at version:", `"30.0.0"`}},
		{"version text", `"version": "3.0.0"`, `"version": "v3"`, InvalidArguments, []string{"at version:", `"v3"`}},
		{"version parts", `"version": "3.0.0"`, `"version": "3.0.0.1"`, InvalidArguments, []string{"at version:", `"3.0.0.1"`}},
		{"version empty part", `"version": "3.0.0"`, `"version": "3..0"`, InvalidArguments, []string{"at version:", `"3..0"`}},
		{"gpu", `"engine_kind": "cpu"`, `"engine_kind": "gpu"`, Unimplemented, []string{"at engine_kind:", `"gpu"`}},
		{"engine f32", `"engine_kind": "cpu"`, `"engine_kind": "f32"`, InvalidArguments, []string{"at engine_kind:", `unknown engine_kind "f32"`}},
		{"engine empty", `"engine_kind": "cpu"`, `"engine_kind": ""`, InvalidArguments, []string{"at engine_kind:", `""`}},
		{"host_scalar", `"property_type": "constant"`, `"property_type": "host_scalar"`, Unimplemented, []string{"graph[2].inputs[1].property_type", "host_scalar"}},
		{"opaque", `"layout_type": "strided", "property_type": "constant"`, `"layout_type": "opaque", "property_type": "constant"`, Unimplemented, []string{"graph[2].inputs[1].layout_type", "opaque"}},
		{"fpmath", `"fpmath_mode": "strict"`, `"fpmath_mode": "fast"`, InvalidArguments, []string{"at fpmath_mode:", `"fast"`}},
	})
	for _, v := range []string{"3", "3.7", "3.10.2", "03.0.0"} {
		doc := strings.Replace(baseDoc, `"version": "3.0.0"`, `"version": "`+v+`"`, 1)
		if _, err := ReadJSON(strings.NewReader(doc)); err != nil {
			t.Errorf("version %q rejected: %v", v, err)
		}
	}
	for _, m := range fpmathModes {
		doc := strings.Replace(baseDoc, `"fpmath_mode": "strict"`, `"fpmath_mode": "`+m+`"`, 1)
		g, err := ReadJSON(strings.NewReader(doc))
		if err != nil || g.FPMath != m {
			t.Errorf("fpmath_mode %q: %v", m, err)
		}
	}
	// fpmath_mode may be left out: strict.
	g, err := ReadJSON(strings.NewReader(strings.Replace(baseDoc, `"fpmath_mode": "strict",`, "", 1)))
	if err != nil || g.FPMath != "strict" {
		t.Errorf("no fpmath_mode: %v", err)
	}
}

func TestReadJSONGraphErrors(t *testing.T) {
	runMalformed(t, []malformed{
		{"empty graph", "", `{"version": "3.0.0", "engine_kind": "cpu", "graph": []}`, InvalidGraph, []string{"at graph:", "no ops"}},
		{"duplicate op id", `"id": 11`, `"id": 10`, InvalidGraph, []string{"graph[1]", "op id 10"}},
		{"same id twice", `"outputs": [{"id": 4,`, `"outputs": [{"id": 1,`, InvalidGraph, []string{"graph[2]", "tensor 1"}},
		{"unknown input port", `"input_ports": [0, 1]`, `"input_ports": [0, 99]`, InvalidGraph, []string{"input_ports[1]", "tensor 99"}},
		{"produced input port", `"input_ports": [0, 1]`, `"input_ports": [0, 2]`, InvalidGraph, []string{"input_ports[1]", "tensor 2", "produced by op 10"}},
		{"repeated port", `"output_ports": [4]`, `"output_ports": [4, 4]`, InvalidGraph, []string{"output_ports[1]", "twice"}},
		{"unknown output port", `"output_ports": [4]`, `"output_ports": [5]`, InvalidGraph, []string{"output_ports[0]", "tensor 5"}},
	})
}

// A tensor id used by two ops with different contents (here the strides)
// is AddOp's error, reported at the second op's path.
func TestReadJSONTensorConflict(t *testing.T) {
	doc := strings.Replace(baseDoc, `{"id": 2, "dtype": "f32", "shape": [2, 1, 4], "stride": [4, 4, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 3`, `{"id": 2, "dtype": "f32", "shape": [2, 1, 4], "stride": [4, 1, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 3`, 1)
	if doc == baseDoc {
		t.Fatal("the replacement did not apply")
	}
	g, err := ReadJSON(strings.NewReader(doc))
	checkErr(t, g, err, InvalidGraph, []string{"graph[1]", "tensor id 2"})
}

func TestReadJSONUnknownFieldsIgnored(t *testing.T) {
	doc := strings.Replace(baseDoc, `"version": "3.0.0",`, `"version": "3.0.0", "extra": {"a": [1, {"b": null}], "c": "d"},`, 1)
	doc = strings.Replace(doc, `"name": "mean",`, `"name": "mean", "partition_id": 7,`, 1)
	doc = strings.Replace(doc, `"layout_type": "any", "property_type": "undef"}]},`, `"layout_type": "any", "layout_id": 3, "property_type": "undef"}]},`, 1)
	doc = strings.Replace(doc, `{"type": "f32", "value": 2.5}`, `{"type": "f32", "doc": ["x"], "value": 2.5}`, 1)
	g, err := ReadJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("unknown fields rejected: %v", err)
	}
	base, err := ReadJSON(strings.NewReader(baseDoc))
	if err != nil {
		t.Fatal(err)
	}
	sameGraph(t, base, g)
}

func TestReadJSONReaderErrors(t *testing.T) {
	g, err := ReadJSON(nil)
	checkErr(t, g, err, InvalidArguments, []string{"reader is nil"})
	r := io.MultiReader(strings.NewReader(baseDoc[:100]), errReader{})
	g, err = ReadJSON(r)
	checkErr(t, g, err, RuntimeError, []string{"disk on fire"})
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

func TestWriteJSONErrors(t *testing.T) {
	var nilGraph *Graph
	checkWriteErr(t, nilGraph.WriteJSON(io.Discard), InvalidArguments, "nil graph")
	g := buildMixedGraph(t)
	checkWriteErr(t, g.WriteJSON(nil), InvalidArguments, "writer is nil")
	checkWriteErr(t, g.WriteJSON(failWriter{}), RuntimeError, "pipe closed")
	g.FPMath = "fast"
	checkWriteErr(t, g.WriteJSON(io.Discard), InvalidArguments, `"fast"`)
	g.FPMath = "" // the zero value writes as strict
	out := decodeGeneric(t, writeJSON(t, g))
	if out["fpmath_mode"] != "strict" {
		t.Errorf("empty FPMath written as %v", out["fpmath_mode"])
	}

	for _, bad := range []any{float32(math.NaN()), float32(math.Inf(-1)), []float32{1, float32(math.Inf(1))}} {
		g := New()
		op := NewOp(5, Wildcard, "w").SetAttr("v", bad).AddInput(NewLogicalTensor(1, dtypes.F32, []int64{2}))
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		checkWriteErr(t, g.WriteJSON(io.Discard), InvalidArguments, `attribute "v"`)
	}

	// A property outside the named ones cannot be written as a name.
	g = New()
	lt := NewLogicalTensor(1, dtypes.F32, []int64{2})
	lt.Property = Property(9)
	if err := g.AddOp(NewOp(5, Wildcard, "w").AddInput(lt)); err != nil {
		// AddOp may refuse such a tensor itself; then it must say so clearly.
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "tensor 1") {
			t.Errorf("AddOp error %v does not name tensor 1", err)
		}
	} else {
		checkWriteErr(t, g.WriteJSON(io.Discard), InvalidArguments, "tensor 1")
	}
}

func checkWriteErr(t *testing.T, err error, st Status, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("WriteJSON succeeded, want %v", st)
	}
	if !errors.Is(err, st) || !strings.Contains(err.Error(), want) {
		t.Errorf("WriteJSON error %q, want %v mentioning %q", err, st, want)
	}
}

// Seed files: the valid ones load and round-trip, the invalid ones fail
// with the status their name promises.
func TestJSONSeedFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "json", "*.json"))
	if err != nil || len(files) < 4 {
		t.Fatalf("seed files: %v %v", files, err)
	}
	wantStatus := map[string]Status{
		"invalid_version.json": Unimplemented, "invalid_kind.json": InvalidGraphOp, "invalid_opaque.json": Unimplemented,
		"invalid_truncated.json": InvalidArguments, "invalid_nan.json": InvalidArguments,
	}
	for _, f := range files {
		base := filepath.Base(f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ReadJSON(bytes.NewReader(b))
		switch {
		case strings.HasPrefix(base, "valid_"):
			if err != nil {
				t.Errorf("%s: %v", base, err)
				continue
			}
			roundTrip(t, g)
		case strings.HasPrefix(base, "invalid_"):
			st, ok := wantStatus[base]
			if !ok {
				t.Errorf("%s: no expected status listed", base)
				continue
			}
			if !errors.Is(err, st) {
				t.Errorf("%s: error %v, want %v", base, err, st)
			}
		default:
			t.Errorf("%s: seed names start with valid_ or invalid_", base)
		}
	}
}

func BenchmarkReadJSON(b *testing.B) {
	raw, err := os.ReadFile(sharedPath(b, "pattern/f32/reduction_post_ops_max_chain_fusion.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	for range b.N {
		if _, err := ReadJSON(bytes.NewReader(raw)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteJSON(b *testing.B) {
	g := readJSONFile(b, sharedPath(b, "pattern/f32/reduction_post_ops_max_chain_fusion.json"))
	b.ResetTimer()
	for range b.N {
		if err := g.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// A Pow op keeps its beta through WriteJSON and ReadJSON.
func TestJSONRoundTripPow(t *testing.T) {
	g := New()
	mean := NewLogicalTensorAny(1, dtypes.F32, nil)
	if err := g.AddOp(NewOp(1, ReduceMean, "mean").AddInput(NewLogicalTensor(0, dtypes.F32, []int64{4, 8})).
		AddOutput(mean).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)); err != nil {
		t.Fatal(err)
	}
	if err := g.AddOp(NewOp(2, Pow, "rsqrt").AddInput(mean).AddOutput(NewLogicalTensorAny(2, dtypes.F32, nil)).
		SetAttr("beta", float32(-0.5))); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, g)
	b := string(writeJSON(t, g))
	if !strings.Contains(b, `"Pow"`) || !strings.Contains(b, `-0.5`) {
		t.Errorf("WriteJSON of a Pow:\n%s", b)
	}
}
