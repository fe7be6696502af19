package bench

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// meanCase is a oneDNN graph case like benchdnn's op/f32/reducemean.json,
// small enough to check quickly: ReduceMean over axis 1 of an NCHW
// 2x16x4x4 f32 tensor, keeping dims.
const meanCase = `{
  "version": "3.0.0",
  "engine_kind": "cpu",
  "fpmath_mode": "strict",
  "graph": [
    {"id": 0, "name": "mean", "kind": "ReduceMean",
     "attrs": {"axes": {"type": "s64[]", "value": [1]}, "keep_dims": {"type": "bool", "value": 1}},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 16, 4, 4], "stride": [256, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 1, "dtype": "f32", "shape": [2, 1, 4, 4], "stride": [16, 16, 4, 1],
                  "layout_type": "strided", "property_type": "undef"}]}
  ]
}`

// meanAddCase is ReduceMean followed by an Add of a graph input (id 2),
// the shape of benchdnn's reduction post-op patterns.
const meanAddCase = `{
  "version": "3.0.0",
  "engine_kind": "cpu",
  "graph": [
    {"id": 0, "name": "mean", "kind": "ReduceMean",
     "attrs": {"axes": {"type": "s64[]", "value": [1]}, "keep_dims": {"type": "bool", "value": 1}},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 16, 4, 4], "stride": [256, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 1, "dtype": "f32", "shape": [2, 1, 4, 4], "stride": [16, 16, 4, 1],
                  "layout_type": "strided", "property_type": "undef"}]},
    {"id": 1, "name": "add", "kind": "Add",
     "attrs": {"auto_broadcast": {"type": "string", "value": "numpy"}},
     "inputs": [{"id": 1, "dtype": "f32", "shape": [2, 1, 4, 4], "stride": [16, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"},
                {"id": 2, "dtype": "f32", "shape": [2, 1, 4, 4], "stride": [16, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 3, "dtype": "f32", "shape": [2, 1, 4, 4], "stride": [16, 16, 4, 1],
                  "layout_type": "strided", "property_type": "undef"}]}
  ]
}`

// sumAddDroppedCase is ReduceSum over axis 1 without keep_dims, 4x6x5 ->
// 4x5, then an Add whose operand numpy-broadcasts against the 4x5 result.
const sumAddDroppedCase = `{
  "version": "3.0.0",
  "engine_kind": "cpu",
  "graph": [
    {"id": 0, "name": "sum", "kind": "ReduceSum",
     "attrs": {"axes": {"type": "s64[]", "value": [1]}, "keep_dims": {"type": "bool", "value": 0}},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [4, 6, 5], "stride": [30, 5, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 1, "dtype": "f32", "shape": [4, 5], "stride": [5, 1],
                  "layout_type": "strided", "property_type": "undef"}]},
    {"id": 1, "name": "add", "kind": "Add",
     "attrs": {"auto_broadcast": {"type": "string", "value": "numpy"}},
     "inputs": [{"id": 1, "dtype": "f32", "shape": [4, 5], "stride": [5, 1],
                 "layout_type": "strided", "property_type": "undef"},
                {"id": 2, "dtype": "f32", "shape": [4, 5], "stride": [5, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 3, "dtype": "f32", "shape": [4, 5], "stride": [5, 1],
                  "layout_type": "strided", "property_type": "undef"}]}
  ]
}`

// writeCase writes base, changed by edit (nil: unchanged), to a file in a
// fresh temporary folder and returns its path. edit works on the decoded
// document so that each test states only the field it breaks.
func writeCase(t *testing.T, base string, edit func(doc map[string]any)) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(base), &doc); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(doc)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "case.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tensorAt returns the JSON object of graph[op].inputs[i] (or outputs when
// out is true) for edit functions.
func tensorAt(doc map[string]any, op int, out bool, i int) map[string]any {
	key := "inputs"
	if out {
		key = "outputs"
	}
	return doc["graph"].([]any)[op].(map[string]any)[key].([]any)[i].(map[string]any)
}

// runGraph runs one case with knobs and returns the exit status, stdout
// and stderr.
func runGraph(t *testing.T, path string, knobs ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"--graph"}, knobs...)
	return runMain(t, append(args, "--case="+path)...)
}

// TestGraphMalformedVersusUnsupportedJSON checks that a value oneDNN does
// not define is invalid input (INVALID_ARGUMENTS, exit 1), while a value
// oneDNN defines but gdnn cannot run is UNIMPLEMENTED (exit 0).
func TestGraphMalformedVersusUnsupportedJSON(t *testing.T) {
	setDType := func(dt string) func(map[string]any) {
		return func(doc map[string]any) { tensorAt(doc, 0, false, 0)["dtype"] = dt }
	}
	cases := []struct {
		name  string
		edit  func(map[string]any)
		code  int
		state string
		want  string
	}{
		{"dtype zz", setDType("zz"), 1, "INVALID_ARGUMENTS", `unknown data type "zz"`},
		{"dtype empty", setDType(""), 1, "INVALID_ARGUMENTS", `unknown data type ""`},
		{"dtype x", setDType("x"), 1, "INVALID_ARGUMENTS", `unknown data type "x"`},
		{"engine f32", func(doc map[string]any) { doc["engine_kind"] = "f32" }, 1, "INVALID_ARGUMENTS", `unknown engine_kind "f32"`},
		{"op kind garbage", func(doc map[string]any) { doc["graph"].([]any)[0].(map[string]any)["kind"] = "ReduceMedian" }, 1, "INVALID_ARGUMENTS", `unknown op kind "ReduceMedian"`},
		// Real oneDNN values gdnn does not implement.
		{"dtype boolean", setDType("boolean"), 0, "UNIMPLEMENTED", "a mean of boolean data has no meaning"},
		{"dtype f8_e5m2", setDType("f8_e5m2"), 0, "UNIMPLEMENTED", `"f8_e5m2"`},
		{"engine gpu", func(doc map[string]any) { doc["engine_kind"] = "gpu" }, 0, "UNIMPLEMENTED", `"gpu"`},
		{"op kind AvgPool", func(doc map[string]any) { doc["graph"].([]any)[0].(map[string]any)["kind"] = "AvgPool" }, 0, "UNIMPLEMENTED", `"AvgPool"`},
		{"host_scalar", func(doc map[string]any) { tensorAt(doc, 0, false, 0)["property_type"] = "host_scalar" }, 0, "UNIMPLEMENTED", "host_scalar"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errw := runGraph(t, writeCase(t, meanCase, c.edit))
			if code != c.code || !strings.Contains(out, "0:"+c.state+" (") || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with 0:%s mentioning %q\nstdout:\n%s\nstderr:\n%s", code, c.code, c.state, c.want, out, errw)
			}
		})
	}
}

// TestGraphInputsWithoutStrides runs cases whose input tensors carry no
// strides: no "stride" field, "stride": null, or layout any/undef (which
// drop strides). gdnn compiles such inputs as dense, and gdnnbench must
// size its buffers and read them the same way instead of crashing.
func TestGraphInputsWithoutStrides(t *testing.T) {
	variants := []struct {
		name string
		set  func(lt map[string]any)
	}{
		{"no stride field", func(lt map[string]any) { delete(lt, "stride") }},
		{"stride null", func(lt map[string]any) { lt["stride"] = nil }},
		{"layout any", func(lt map[string]any) { lt["layout_type"] = "any"; lt["stride"] = []any{} }},
		{"layout undef", func(lt map[string]any) { lt["layout_type"] = "undef" }},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			// The src of a lone ReduceMean, and both inputs of a fused Add.
			for _, c := range []struct {
				base string
				ins  [][2]int // op, input index
			}{
				{meanCase, [][2]int{{0, 0}}},
				{meanAddCase, [][2]int{{0, 0}, {1, 1}}},
			} {
				path := writeCase(t, c.base, func(doc map[string]any) {
					for _, in := range c.ins {
						v.set(tensorAt(doc, in[0], false, in[1]))
					}
				})
				code, out, errw := runGraph(t, path)
				if code != 0 || !strings.Contains(out, "0:PASSED") {
					t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errw)
				}
				// The buffers follow the dense layout Compile chose.
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				g, err := loadGraph(graphCase{expectedN: 1}, data)
				if err != nil {
					t.Fatal(err)
				}
				parts, err := partition.Get(g, partition.Fusion)
				if err != nil || len(parts) != 1 {
					t.Fatalf("partitions: %d, %v", len(parts), err)
				}
				gp, fail := newRunner(io.Discard, io.Discard).buildGraphPartition(g, parts[0])
				if fail != nil {
					t.Fatalf("%s: %s", fail.state, fail.reason)
				}
				if got := gp.b.srcLT.Strides; !slices.Equal(got, []int64{256, 16, 4, 1}) {
					t.Errorf("src strides %v, want dense 256x16x4x1", got)
				}
				for _, lt := range gp.b.opLTs {
					if !slices.Equal(lt.Strides, []int64{16, 16, 4, 1}) {
						t.Errorf("operand %d strides %v, want dense 16x16x4x1", lt.ID, lt.Strides)
					}
				}
			}
		})
	}
}

// TestGraphBatchGoesOnAfterStridelessCase runs a stride-less case and a
// plain one in one batch: both must run (the crash used to end the batch).
func TestGraphBatchGoesOnAfterStridelessCase(t *testing.T) {
	stridelessPath := writeCase(t, meanCase, func(doc map[string]any) { delete(tensorAt(doc, 0, false, 0), "stride") })
	plainPath := writeCase(t, meanCase, nil)
	code, out, errw := runMain(t, "--graph", "--case="+stridelessPath, "--case="+plainPath)
	if code != 0 || summary(t, out)[1] != "2" {
		t.Errorf("exit %d, want 2 passed\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
}

// TestSpanOfUnresolvedLayout checks that a tensor without strides is an
// error value for spanOf, not an index panic.
func TestSpanOfUnresolvedLayout(t *testing.T) {
	if _, err := spanOf([]int64{2, 3}, nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("no strides: err %v, want InvalidArguments", err)
	}
	if _, err := spanOf([]int64{2, 3}, []int64{3}); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("1 stride for 2 dims: err %v, want InvalidArguments", err)
	}
	if n, err := spanOf([]int64{2, 3}, []int64{1, 2}); err != nil || n != 6 {
		t.Errorf("2x3 strides 1x2: span %d, %v; want 6", n, err)
	}
}

// TestGraphMBAndInShapes checks --mb against driver_graph.md: --mb
// replaces dim 0 of the inputs that carry the minibatch, taking precedence
// over --in-shapes, and keeps the layout given by the case or by
// --in-shapes instead of making it dense.
func TestGraphMBAndInShapes(t *testing.T) {
	nhwc := func(doc map[string]any) { tensorAt(doc, 0, false, 0)["stride"] = []any{256, 1, 64, 16} }
	stridePadded := func(doc map[string]any) { tensorAt(doc, 0, false, 0)["stride"] = []any{512, 16, 4, 1} }
	noStride := func(doc map[string]any) { delete(tensorAt(doc, 0, false, 0), "stride") }
	cases := []struct {
		name                  string
		edit                  func(map[string]any)
		mb                    int64
		inShapes, opAttrs     string
		wantDims, wantStrides []int64 // nil strides: left for Compile
	}{
		{"mb over in-shapes shape", nil, 2, "0:16x1024", "0:axes:1", []int64{2, 1024}, []int64{1024, 1}},
		{"mb over in-shapes shape and tag", nil, 2, "0:1x16x4x4*acdb", "", []int64{2, 16, 4, 4}, []int64{256, 1, 64, 16}},
		{"mb with in-shapes tag only", nil, 3, "0:*acdb", "", []int64{3, 16, 4, 4}, []int64{256, 1, 64, 16}},
		{"in-shapes shape only is dense", nhwc, 0, "0:1x16x4x4", "", []int64{1, 16, 4, 4}, []int64{256, 16, 4, 1}},
		{"in-shapes without mb keeps strides", nil, 0, "0:1x16x4x4*512x16x4x1", "", []int64{1, 16, 4, 4}, []int64{512, 16, 4, 1}},
		// Strides written for another dim 0 keep their dim order.
		{"mb over in-shapes strides", nil, 2, "0:1x16x4x4*256x1x64x16", "", []int64{2, 16, 4, 4}, []int64{256, 1, 64, 16}},
		{"mb keeps the case's NHWC", nhwc, 5, "", "", []int64{5, 16, 4, 4}, []int64{256, 1, 64, 16}},
		{"mb equal to the case's keeps its strides", stridePadded, 2, "", "", []int64{2, 16, 4, 4}, []int64{512, 16, 4, 1}},
		{"mb changes padded strides to dense", stridePadded, 3, "", "", []int64{3, 16, 4, 4}, []int64{256, 16, 4, 1}},
		{"mb on a stride-less input", noStride, 4, "", "", []int64{4, 16, 4, 4}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(writeCase(t, meanCase, c.edit))
			if err != nil {
				t.Fatal(err)
			}
			g, err := loadGraph(graphCase{mb: c.mb, inShapes: c.inShapes, opAttrs: c.opAttrs, expectedN: 1}, data)
			if err != nil {
				t.Fatal(err)
			}
			src, _ := g.Tensor(0)
			if !slices.Equal(src.Dims, c.wantDims) || !slices.Equal(src.Strides, c.wantStrides) {
				t.Errorf("src %v strides %v, want %v strides %v", src.Dims, src.Strides, c.wantDims, c.wantStrides)
			}
		})
	}
	// The first case end to end: it runs with the overridden minibatch.
	code, out, errw := runGraph(t, writeCase(t, meanCase, nil), "--mb=2", "--in-shapes=0:16x1024", "--op-attrs=0:axes:1")
	if code != 0 || !strings.Contains(out, "0:PASSED __REPRO: --graph --mb=2 --in-shapes=0:16x1024 --op-attrs=0:axes:1 --case=") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
}

// TestGraphMBReachesMinibatchInputsOnly checks which inputs --mb resizes:
// those whose dim 0 flows to the output as the minibatch (benchdnn's
// rule), so a binary operand of the full rank follows while one of lower
// rank (broadcast) keeps its shape; an intermediate tensor of unknown rank
// passes the minibatch on.
func TestGraphMBReachesMinibatchInputsOnly(t *testing.T) {
	cases := []struct {
		name          string
		operand       []any
		unknownMiddle bool // the mean's output of unknown rank (a null shape)
		wantOperand   []int64
	}{
		{"operand of full rank", []any{2, 1, 4, 4}, false, []int64{3, 1, 4, 4}},
		{"operand of dim 0 one, full rank", []any{1, 1, 4, 4}, false, []int64{3, 1, 4, 4}},
		{"operand of lower rank", []any{1, 4, 4}, false, []int64{1, 4, 4}},
		{"operand of full rank, the mean's output of unknown rank", []any{2, 1, 4, 4}, true, []int64{3, 1, 4, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(writeCase(t, meanAddCase, func(doc map[string]any) {
				op := tensorAt(doc, 1, false, 1)
				op["shape"] = c.operand
				delete(op, "stride")
				if c.unknownMiddle {
					for _, mid := range []map[string]any{tensorAt(doc, 0, true, 0), tensorAt(doc, 1, false, 0)} {
						mid["shape"], mid["layout_type"] = nil, "any"
						delete(mid, "stride")
					}
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			g, err := loadGraph(graphCase{mb: 3, expectedN: 1}, data)
			if err != nil {
				t.Fatal(err)
			}
			src, _ := g.Tensor(0)
			operand, _ := g.Tensor(2)
			if !slices.Equal(src.Dims, []int64{3, 16, 4, 4}) || !slices.Equal(operand.Dims, c.wantOperand) {
				t.Errorf("src %v operand %v, want 3x16x4x4 and %v", src.Dims, operand.Dims, c.wantOperand)
			}
		})
	}
	// The axes input of a ReduceMean (its second input) is no minibatch.
	data := []byte(strings.Replace(meanCase, `"inputs": [{"id": 0, "dtype": "f32", "shape": [2, 16, 4, 4], "stride": [256, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"}]`, `"inputs": [{"id": 0, "dtype": "f32", "shape": [2, 16, 4, 4], "stride": [256, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"},
                {"id": 5, "dtype": "s32", "shape": [1], "stride": [1], "layout_type": "strided", "property_type": "constant"}]`, 1))
	data = []byte(strings.Replace(string(data), `"attrs": {"axes": {"type": "s64[]", "value": [1]}, `, `"attrs": {`, 1))
	g0, err := graph.ReadJSON(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]graph.LogicalTensor{0: {}, 5: {}}
	if got := inputsWithMB(g0, ids); !got[0] || got[5] {
		t.Errorf("inputs with mb %v, want src 0 only", got)
	}
}

// TestGraphTensorProperty checks --tensor-property as driver_graph.md
// documents it: undef, variable and constant are set on the tensor (and
// the case still runs), host_scalar is UNIMPLEMENTED, a tensor the case
// lacks is INVALID_ARGUMENTS and a bad value is an option error.
func TestGraphTensorProperty(t *testing.T) {
	data, err := os.ReadFile(writeCase(t, meanAddCase, nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err := loadGraph(graphCase{tensorProp: "0:constant+2:constant+2:variable+3:constant", expectedN: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uint64]graph.Property{0: graph.PropertyConstant, 2: graph.PropertyVariable, 3: graph.PropertyConstant} {
		if lt, _ := g.Tensor(id); lt.Property != want {
			t.Errorf("tensor %d property %v, want %v", id, lt.Property, want)
		}
	}

	path := writeCase(t, meanAddCase, nil)
	cases := []struct {
		knob string
		code int
		want string
	}{
		{"--tensor-property=0:constant+2:constant", 0, "0:PASSED __REPRO: --graph --tensor-property=0:constant+2:constant --case="},
		{"--tensor-property=0:variable,2:undef", 0, "tests:2 passed:2"},
		{"--tensor-property=2:host_scalar", 0, "0:UNIMPLEMENTED (--tensor-property: tensor 2: property host_scalar"},
		{"--tensor-property=7:constant", 1, "0:INVALID_ARGUMENTS (--tensor-property: tensor 7 is not in the graph)"},
		{"--tensor-property=0:const", 2, `property "const", want one of undef, variable, constant, host_scalar`},
	}
	for _, c := range cases {
		code, out, errw := runGraph(t, path, c.knob)
		if code != c.code || !strings.Contains(out+errw, c.want) {
			t.Errorf("%s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.knob, code, c.code, c.want, out, errw)
		}
	}
	// --reset clears it.
	code, out, _ := runMain(t, "--graph", "--tensor-property=2:host_scalar", "--reset", "--case="+path)
	if code != 0 || !strings.Contains(out, "0:PASSED __REPRO: --graph --case=") {
		t.Errorf("after --reset: exit %d\n%s", code, out)
	}
}

// TestGraphNegativeDimsInOutputsAndInputs runs cases with negative dims
// and strides: inputs and outputs follow one rule. -5 is invalid in
// either; INT64_MIN is oneDNN's unknown dim, so an output with it is
// inferred (the case passes) while an input with it cannot be compiled.
func TestGraphNegativeDimsInOutputsAndInputs(t *testing.T) {
	// json.Number, because float64 would print INT64_MIN rounded.
	const int64Min = "-9223372036854775808"
	setAt := func(out bool, field string, v string) func(map[string]any) {
		return func(doc map[string]any) { tensorAt(doc, 0, out, 0)[field].([]any)[0] = json.Number(v) }
	}
	cases := []struct {
		name string
		edit func(map[string]any)
		code int
		want string
	}{
		{"output dim -5", setAt(true, "shape", "-5"), 1, "0:INVALID_ARGUMENTS (JSON at graph[0].outputs[0].shape[0]: -5 is negative"},
		{"output stride -5", setAt(true, "stride", "-5"), 1, "0:INVALID_ARGUMENTS (JSON at graph[0].outputs[0].stride[0]: -5 is negative"},
		{"input dim -5", setAt(false, "shape", "-5"), 1, "0:INVALID_ARGUMENTS (JSON at graph[0].inputs[0].shape[0]: -5 is negative"},
		{"input stride -5", setAt(false, "stride", "-5"), 1, "0:INVALID_ARGUMENTS (JSON at graph[0].inputs[0].stride[0]: -5 is negative"},
		{"output dim INT64_MIN", setAt(true, "shape", int64Min), 0, "0:PASSED"},
		{"output stride INT64_MIN", setAt(true, "stride", int64Min), 0, "0:PASSED"},
		{"input dim INT64_MIN", setAt(false, "shape", int64Min), 1, "0:INVALID_ARGUMENTS (input tensor 0 has dims ?x16x4x4; Compile needs concrete input dims)"},
		{"input stride INT64_MIN", setAt(false, "stride", int64Min), 1, "0:INVALID_ARGUMENTS (tensor 0 stride 0 is -1; strides must be known"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errw := runGraph(t, writeCase(t, meanCase, c.edit))
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, c.code, c.want, out, errw)
			}
		})
	}
}

// TestGraphOutputShapeMustMatchOp checks that an op output whose shape the
// case states in full must be the shape gdnn infers for it, as oneDNN's
// shape inference demands: a contradicting shape is INVALID_ARGUMENTS
// naming the tensor and both shapes, while a matching, partly unknown or
// null shape runs. Knobs that change shapes (--mb, --in-shapes,
// --op-attrs) turn the check off, since the case's output shapes then
// describe another problem.
func TestGraphOutputShapeMustMatchOp(t *testing.T) {
	// setOut sets the shape (and, when given, the strides) of output out of
	// op op; nil strides drop the field, so that any rank fits.
	setOut := func(op int, shape, strides []any) func(map[string]any) {
		return func(doc map[string]any) {
			lt := tensorAt(doc, op, true, 0)
			lt["shape"] = shape
			if strides == nil {
				delete(lt, "stride")
			} else {
				lt["stride"] = strides
			}
		}
	}
	// The same tensor as the Add's first input must agree with the mean's
	// output, or ReadJSON refuses the graph before any shape is inferred.
	setMeanOut := func(shape []any) func(map[string]any) {
		return func(doc map[string]any) {
			setOut(0, shape, nil)(doc)
			lt := tensorAt(doc, 1, false, 0)
			lt["shape"] = shape
			delete(lt, "stride")
		}
	}
	const int64Min = "-9223372036854775808"
	cases := []struct {
		name  string
		base  string
		edit  func(map[string]any)
		knobs []string
		code  int
		want  string
	}{
		{"channels kept", meanCase, setOut(0, []any{2, 16, 4, 4}, nil), nil, 1,
			`0:INVALID_ARGUMENTS (op 0 (ReduceMean "mean"): output tensor 1 has shape 2x16x4x4 in the case, but gdnn infers 2x1x4x4)`},
		{"wrong minibatch", meanCase, setOut(0, []any{3, 1, 4, 4}, nil), nil, 1,
			"0:INVALID_ARGUMENTS (op 0 (ReduceMean \"mean\"): output tensor 1 has shape 3x1x4x4 in the case, but gdnn infers 2x1x4x4)"},
		{"wrong rank", meanCase, setOut(0, []any{2, 4, 4}, nil), nil, 1,
			"output tensor 1 has shape 2x4x4 in the case, but gdnn infers 2x1x4x4"},
		// Internal and final outputs of a fused chain alike.
		{"fused mean output", meanAddCase, setMeanOut([]any{2, 16, 4, 4}), nil, 1,
			"output tensor 1 has shape 2x16x4x4 in the case, but gdnn infers 2x1x4x4"},
		{"fused add output", meanAddCase, setOut(1, []any{2, 2, 4, 4}, nil), nil, 1,
			`0:INVALID_ARGUMENTS (op 1 (Add "add"): output tensor 3 has shape 2x2x4x4 in the case, but gdnn infers 2x1x4x4)`},
		// --dt changes no shape: the check stays on.
		{"with --dt", meanCase, setOut(0, []any{2, 16, 4, 4}, nil), []string{"--dt=bf16"}, 1,
			"output tensor 1 has shape 2x16x4x4 in the case, but gdnn infers 2x1x4x4"},

		{"right shape", meanCase, nil, nil, 0, "0:PASSED"},
		{"right shape, fused", meanAddCase, nil, nil, 0, "0:PASSED"},
		{"unknown dim -1", meanCase, setOut(0, []any{2, -1, 4, 4}, nil), nil, 0, "0:PASSED"},
		{"unknown dim INT64_MIN", meanCase, setOut(0, []any{json.Number(int64Min), 16, 4, 4}, nil), nil, 0, "0:PASSED"},
		{"unknown rank", meanCase, setOut(0, nil, nil), nil, 0, "0:PASSED"},
		{"empty shape", meanCase, setOut(0, []any{}, nil), nil, 0, "0:PASSED"},
		// Strides are not compared (see checkStatedOutputs): gdnnbench
		// compiles outputs with layout any, and a case may ask for another.
		{"other strides", meanCase, setOut(0, []any{2, 1, 4, 4}, []any{16, 1, 4, 1}), nil, 0, "0:PASSED"},

		// Knobs that change shapes: the case's output shapes are not
		// checked, whether or not they still hold.
		{"wrong shape with --mb", meanCase, setOut(0, []any{2, 16, 4, 4}, nil), []string{"--mb=2"}, 0, "0:PASSED"},
		{"old shape with --mb", meanCase, nil, []string{"--mb=3"}, 0, "0:PASSED"},
		{"wrong shape with --in-shapes", meanCase, setOut(0, []any{2, 16, 4, 4}, nil), []string{"--in-shapes=0:2x16x4x4"}, 0, "0:PASSED"},
		{"old shape with --in-shapes", meanCase, nil, []string{"--in-shapes=0:4x16x4x4"}, 0, "0:PASSED"},
		{"old shape with --op-attrs", meanCase, nil, []string{"--op-attrs=0:keep_dims:0"}, 0, "0:PASSED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errw := runGraph(t, writeCase(t, c.base, c.edit), c.knobs...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, c.code, c.want, out, errw)
			}
		})
	}
}

// preOpCase is Square -> ReduceSum -> Sqrt (an L2 norm spelled out), the
// pre-op fusion gdnn does.
const preOpCase = `{
  "version": "3.0.0",
  "engine_kind": "cpu",
  "graph": [
    {"id": 0, "name": "sq", "kind": "Square", "attrs": {},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 16, 4, 4], "stride": [256, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 1, "dtype": "f32", "shape": [2, 16, 4, 4], "stride": [256, 16, 4, 1],
                  "layout_type": "strided", "property_type": "undef"}]},
    {"id": 1, "name": "sum", "kind": "ReduceSum",
     "attrs": {"axes": {"type": "s64[]", "value": [1, 3]}, "keep_dims": {"type": "bool", "value": 0}},
     "inputs": [{"id": 1, "dtype": "f32", "shape": [2, 16, 4, 4], "stride": [256, 16, 4, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 2, "dtype": "f32", "shape": [2, 4], "stride": [4, 1],
                  "layout_type": "strided", "property_type": "undef"}]},
    {"id": 2, "name": "root", "kind": "Sqrt", "attrs": {},
     "inputs": [{"id": 2, "dtype": "f32", "shape": [2, 4], "stride": [4, 1],
                 "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 3, "dtype": "f32", "shape": [2, 4], "stride": [4, 1],
                  "layout_type": "strided", "property_type": "undef"}]}
  ]
}`

// TestGraphEveryReduceKind runs every Reduce* op, alone and with a fused
// Add, in each float type, and the pre-op fusions (Abs, the square's
// three forms, log-sum-exp): each must be checked and PASS.
func TestGraphEveryReduceKind(t *testing.T) {
	for _, k := range []string{"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1", "ReduceL2"} {
		setKind := func(doc map[string]any) { doc["graph"].([]any)[0].(map[string]any)["kind"] = k }
		for _, base := range []string{meanCase, meanAddCase} {
			code, out, errw := runGraph(t, writeCase(t, base, setKind), "--dt=f32,bf16,f16")
			if code != 0 || summary(t, out)[1] != "3" {
				t.Errorf("%s: exit %d\n%s%s", k, code, out, errw)
			}
		}
	}
	// Exp -> ReduceSum -> Log: log-sum-exp, the Log its own.
	lse := func(doc map[string]any) {
		doc["graph"].([]any)[0].(map[string]any)["kind"] = "Exp"
		doc["graph"].([]any)[2].(map[string]any)["kind"] = "Log"
	}
	code, out, errw := runGraph(t, writeCase(t, preOpCase, lse), "--dt=f32,bf16,f16")
	if code != 0 || summary(t, out)[1] != "3" {
		t.Errorf("Exp -> ReduceSum -> Log: exit %d\n%s%s", code, out, errw)
	}
	for _, pre := range []string{"Square", "Abs"} {
		for _, red := range []string{"ReduceSum", "ReduceMax", "ReduceMean", "ReduceMin"} {
			edit := func(doc map[string]any) {
				doc["graph"].([]any)[0].(map[string]any)["kind"] = pre
				doc["graph"].([]any)[1].(map[string]any)["kind"] = red
			}
			code, out, errw := runGraph(t, writeCase(t, preOpCase, edit), "--dt=f32,bf16,f16")
			if code != 0 || summary(t, out)[1] != "3" {
				t.Errorf("%s -> %s: exit %d\n%s%s", pre, red, code, out, errw)
			}
		}
	}
	// The square as ONNX exporters write it: Pow with beta 2, and a
	// Multiply of a tensor by itself.
	squares := map[string]func(op map[string]any){
		"Pow": func(op map[string]any) {
			op["attrs"] = map[string]any{"beta": map[string]any{"type": "f32", "value": 2}}
		},
		"Multiply": func(op map[string]any) {
			in := op["inputs"].([]any)
			op["inputs"] = append(in, in[0])
		},
	}
	for pre, set := range squares {
		edit := func(doc map[string]any) {
			op := doc["graph"].([]any)[0].(map[string]any)
			op["kind"] = pre
			set(op)
			doc["graph"].([]any)[1].(map[string]any)["kind"] = "ReduceMean"
		}
		code, out, errw := runGraph(t, writeCase(t, preOpCase, edit), "--dt=f32,bf16,f16")
		if code != 0 || summary(t, out)[1] != "3" {
			t.Errorf("%s -> ReduceMean: exit %d\n%s%s", pre, code, out, errw)
		}
	}
}

// TestReadReduction checks what the graph driver reads of a partition's
// ops, and its refusals: no reduction, two ops before it, a pre-op other
// than Abs and a square (Square, Pow with beta 2, x*x; Exp only as
// log-sum-exp: before a ReduceSum whose
// output a Log takes), a pre-op before a reduction that has its own
// (ReduceL1), and a pre-op that does not feed the reduction.
func TestReadReduction(t *testing.T) {
	lt := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, dtypes.F32, nil) }
	op := func(id uint64, k graph.OpKind, in, out uint64) *graph.Op {
		return graph.NewOp(id, k, k.String()).AddInput(lt(in)).AddOutput(lt(out))
	}
	rd, why := readReduction([]*graph.Op{op(0, graph.Square, 5, 6), op(1, graph.ReduceMax, 6, 7), op(2, graph.ReLU, 7, 8)})
	if why != "" || rd.post != 2 || rd.val != 7 || rd.kind.pre != "square" || rd.kind.combine != combineMax || rd.src.ID != 5 || rd.root {
		t.Errorf("Square -> ReduceMax: %+v %q", rd, why)
	}
	rd, why = readReduction([]*graph.Op{op(0, graph.Exp, 1, 2), op(1, graph.ReduceSum, 2, 3), op(2, graph.Log, 3, 4), op(3, graph.ReLU, 4, 5)})
	if why != "" || !rd.kind.lse || rd.post != 3 || rd.val != 4 || rd.src.ID != 1 {
		t.Errorf("Exp -> ReduceSum -> Log: %+v %q", rd, why)
	}
	for _, sq := range []*graph.Op{op(0, graph.Pow, 5, 6).SetAttr("beta", float32(2)), op(0, graph.Multiply, 5, 6).AddInput(lt(5))} {
		rd, why = readReduction([]*graph.Op{sq, op(1, graph.ReduceSum, 6, 7)})
		if why != "" || rd.kind.pre != "square" || rd.src.ID != 5 {
			t.Errorf("%s -> ReduceSum: %+v %q", sq.Kind, rd, why)
		}
	}
	for _, red := range []graph.OpKind{graph.ReduceSum, graph.ReduceMean} {
		rd, why = readReduction([]*graph.Op{op(0, graph.Multiply, 1, 2).AddInput(lt(9)), op(1, red, 2, 3), op(2, graph.Divide, 3, 4).AddInput(lt(5))})
		if why != "" || rd.mask == nil || rd.mask.ID != 9 || rd.src.ID != 1 || rd.kind.pre != "" || rd.kind.mean != (red == graph.ReduceMean) || rd.post != 2 || rd.val != 3 {
			t.Errorf("x times a mask -> %s: %+v %q", red, rd, why)
		}
	}
	rd, why = readReduction([]*graph.Op{op(0, graph.ReduceL2, 1, 2)})
	if why != "" || rd.post != 1 || rd.kind.pre != "square" || !rd.root || rd.src.ID != 1 {
		t.Errorf("ReduceL2: %+v %q", rd, why)
	}
	for name, ops := range map[string][]*graph.Op{
		"no reduction":           {op(0, graph.ReLU, 1, 2)},
		"two pre-ops":            {op(0, graph.Abs, 1, 2), op(1, graph.Square, 2, 3), op(2, graph.ReduceSum, 3, 4)},
		"exp pre-op":             {op(0, graph.Exp, 1, 2), op(1, graph.ReduceSum, 2, 3)},
		"exp, max, log":          {op(0, graph.Exp, 1, 2), op(1, graph.ReduceMax, 2, 3), op(2, graph.Log, 3, 4)},
		"log elsewhere":          {op(0, graph.Exp, 1, 2), op(1, graph.ReduceSum, 2, 3), op(2, graph.Log, 9, 4)},
		"abs before l1":          {op(0, graph.Abs, 1, 2), op(1, graph.ReduceL1, 2, 3)},
		"not its source":         {op(0, graph.Abs, 1, 2), op(1, graph.ReduceSum, 9, 3)},
		"pow, beta 3":            {op(0, graph.Pow, 1, 2).SetAttr("beta", float32(3)), op(1, graph.ReduceSum, 2, 3)},
		"x times y, then max":    {op(0, graph.Multiply, 1, 2).AddInput(lt(9)), op(1, graph.ReduceMax, 2, 3)},
		"x times y, then l2":     {op(0, graph.Multiply, 1, 2).AddInput(lt(9)), op(1, graph.ReduceL2, 2, 3)},
		"logical or, then relu":  {op(0, graph.ReduceLogicalOr, 1, 2), op(1, graph.ReLU, 2, 3)},
		"abs before bitwise and": {op(0, graph.Abs, 1, 2), op(1, graph.ReduceBitwiseAnd, 2, 3)},
	} {
		if _, why := readReduction(ops); why == "" {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestGraphExactReductions: a reduction alone over integer or boolean
// data is checked by the exact reference, whose integer mean truncates
// as gdnn's does (the float one expected the unrounded quotient and
// failed s64 and u16 means), and the bitwise and logical reductions,
// which the float reference lacks, are checked rather than
// UNIMPLEMENTED; each output and src type, without keep_dims.
func TestGraphExactReductions(t *testing.T) {
	cases := []struct{ kind, sdt, ddt string }{
		{"ReduceMean", "s64", "s64"}, {"ReduceMean", "u16", "u16"}, {"ReduceMean", "s32", "f32"},
		{"ReduceSum", "u64", "u64"}, {"ReduceProd", "s32", "s32"}, {"ReduceMin", "s16", "s16"},
		{"ReduceBitwiseAnd", "s32", "s32"}, {"ReduceBitwiseXor", "u8", "u8"},
		{"ReduceLogicalOr", "boolean", "boolean"}, {"ReduceLogicalAnd", "boolean", "boolean"},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.sdt+":"+c.ddt, func(t *testing.T) {
			path := writeCase(t, sumAddDroppedCase, func(doc map[string]any) {
				red := doc["graph"].([]any)[0].(map[string]any)
				red["kind"] = c.kind
				red["inputs"].([]any)[0].(map[string]any)["dtype"] = c.sdt
				red["outputs"].([]any)[0].(map[string]any)["dtype"] = c.ddt
				doc["graph"] = doc["graph"].([]any)[:1]
			})
			code, out, errw := runGraph(t, path, "--mode=C", "-v1")
			if code != 0 || summary(t, out)[1] != "1" || !strings.Contains(out, "[random fill] outputs:20 exact errors:0") {
				t.Errorf("exit %d, want 0, 1 passed and the exact reference's line\nstdout:\n%s\nstderr:\n%s", code, out, errw)
			}
		})
	}
}

// TestGraphOutputLayouts: a partition's output is compiled with the
// layout the case gives it, so gdnnbench runs and checks it there
// (column-major, rows with gaps), and refuses strides no buffer can
// have (that do not nest) or that address more than it may allocate.
func TestGraphOutputLayouts(t *testing.T) {
	saved := memLimit
	memLimit = func() (int64, string) { return 1 << 30, "a test's limit" }
	defer func() { memLimit = saved }()
	for _, c := range []struct {
		name    string
		strides []any
		state   string
		text    string
	}{
		{"dense", []any{5, 1}, "PASSED", ""},
		{"column-major", []any{1, 4}, "PASSED", ""},
		{"rows with gaps", []any{8, 1}, "PASSED", ""},
		{"overlapping", []any{0, 0}, "INVALID_ARGUMENTS", "do not nest"},
		{"huge", []any{int64(1) << 40, 1}, "SKIPPED", "span more than"},
		{"sparse past memory", []any{int64(1) << 30, 1}, "SKIPPED", "more than the 1.1 GB limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeCase(t, sumAddDroppedCase, func(doc map[string]any) {
				tensorAt(doc, 0, true, 0)["stride"] = c.strides
				tensorAt(doc, 1, false, 0)["stride"] = c.strides
				doc["graph"] = doc["graph"].([]any)[:1]
			})
			_, out, errw := runGraph(t, path, "--mode=C")
			if line := strings.Split(out, "\n")[0]; !strings.HasPrefix(line, "0:"+c.state+" ") || !strings.Contains(line, c.text) {
				t.Errorf("%q, want %s with %q\nstderr:\n%s", line, c.state, c.text, errw)
			}
		})
	}
}

// TestGraphBinaryAfterDroppedDims runs a reduction without keep_dims
// followed by an Add whose operand broadcasts against the smaller result
// (full, a row, a column, a scalar-like [1]) and a mean over two axes
// down to one: each is checked and PASSES (the reference lays the
// operand over the keep-dims shape).
func TestGraphBinaryAfterDroppedDims(t *testing.T) {
	operand := func(shape, stride []any) func(map[string]any) {
		return func(doc map[string]any) {
			in := doc["graph"].([]any)[1].(map[string]any)["inputs"].([]any)[1].(map[string]any)
			in["shape"], in["stride"] = shape, stride
		}
	}
	twoAxes := func(doc map[string]any) {
		ops := doc["graph"].([]any)
		red := ops[0].(map[string]any)
		red["kind"] = "ReduceMean"
		red["attrs"].(map[string]any)["axes"].(map[string]any)["value"] = []any{0, 2}
		for _, lt := range []map[string]any{red["outputs"].([]any)[0].(map[string]any),
			ops[1].(map[string]any)["inputs"].([]any)[0].(map[string]any),
			ops[1].(map[string]any)["inputs"].([]any)[1].(map[string]any),
			ops[1].(map[string]any)["outputs"].([]any)[0].(map[string]any)} {
			lt["shape"], lt["stride"] = []any{6}, []any{1}
		}
	}
	cases := []struct {
		name string
		edit func(map[string]any)
	}{
		{"same shape", nil},
		{"a row", operand([]any{5}, []any{1})},
		{"a row, rank 2", operand([]any{1, 5}, []any{5, 1})},
		{"a column", operand([]any{4, 1}, []any{1, 1})},
		{"one value", operand([]any{1}, []any{1})},
		{"mean over two axes", twoAxes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errw := runGraph(t, writeCase(t, sumAddDroppedCase, c.edit), "--mode=C", "--dt=f32,bf16")
			if code != 0 || summary(t, out)[1] != "2" {
				t.Errorf("exit %d, want 0 and 2 passed\nstdout:\n%s\nstderr:\n%s", code, out, errw)
			}
		})
	}
}

// TestGraphOperandReadTwice: a tensor that is the operand of two post-ops
// is one input of the partition, one buffer in gdnnbench and one operand
// in its reference (it PASSES); src read again as an operand is
// UNIMPLEMENTED with a reason, as gdnnbench fills src and operands apart.
func TestGraphOperandReadTwice(t *testing.T) {
	lt := func(id int, shape, stride []any) map[string]any {
		return map[string]any{"id": id, "dtype": "f32", "shape": shape, "stride": stride, "layout_type": "strided", "property_type": "undef"}
	}
	divideToo := func(doc map[string]any) {
		doc["graph"] = append(doc["graph"].([]any), map[string]any{"id": 2, "name": "div", "kind": "Divide",
			"attrs":   map[string]any{"auto_broadcast": map[string]any{"type": "string", "value": "numpy"}},
			"inputs":  []any{lt(3, []any{4, 5}, []any{5, 1}), lt(2, []any{4, 5}, []any{5, 1})},
			"outputs": []any{lt(4, []any{4, 5}, []any{5, 1})}})
	}
	code, out, errw := runGraph(t, writeCase(t, sumAddDroppedCase, divideToo), "--mode=C", "--dt=f32,bf16")
	if code != 0 || summary(t, out)[1] != "2" {
		t.Errorf("operand of two post-ops: exit %d, want 0 and 2 passed\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
	srcOperand := func(doc map[string]any) {
		ops := doc["graph"].([]any)
		red, add := ops[0].(map[string]any), ops[1].(map[string]any)
		red["attrs"].(map[string]any)["keep_dims"].(map[string]any)["value"] = 1
		red["inputs"] = []any{lt(0, []any{4, 1}, []any{1, 1})}
		red["outputs"] = []any{lt(1, []any{4, 1}, []any{1, 1})}
		add["inputs"] = []any{lt(1, []any{4, 1}, []any{1, 1}), lt(0, []any{4, 1}, []any{1, 1})}
		add["outputs"] = []any{lt(3, []any{4, 1}, []any{1, 1})}
	}
	code, out, errw = runGraph(t, writeCase(t, sumAddDroppedCase, srcOperand), "--mode=C")
	if code != 0 || !strings.Contains(out, "UNIMPLEMENTED (op 1 (Add \"add\") reads src 0 as its operand; gdnnbench fills src and operands apart)") {
		t.Errorf("src as an operand: exit %d, want 0 and UNIMPLEMENTED with the reason\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
}

// TestGraphOpAttrsOnEnd: --op-attrs can name the End op ReadJSON adds for
// an output port other ops read (op 2 here, one above the file's
// largest); End has no attributes (oneDNN's has none), so even a name
// other ops know is refused, by name, instead of being set and ignored.
func TestGraphOpAttrsOnEnd(t *testing.T) {
	path := writeCase(t, meanAddCase, func(doc map[string]any) {
		doc["input_ports"] = []any{0, 2}
		doc["output_ports"] = []any{1, 3}
	})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := loadGraph(graphCase{expectedN: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	if end, ok := g.Op(2); !ok || end.Kind != graph.End {
		t.Fatalf("op 2 is %v, want the End op ReadJSON adds", end)
	}
	for _, c := range []struct{ knob, name string }{
		{"--op-attrs=2:axes:1", "axes"},
		{"--op-attrs=0:keep_dims:1+2:keep_dims:0", "keep_dims"},
	} {
		code, out, errw := runGraph(t, path, "--mode=C", c.knob)
		want := `0:INVALID_ARGUMENTS (op 2 (End "output_port_1"): unknown attribute "` + c.name + `" for End)`
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, want 1 and %q\nstdout:\n%s\nstderr:\n%s", c.knob, code, want, out, errw)
		}
	}
}

// TestGraphOpKind: --op-kind changes a binary op's kind (the check then
// follows the new kind, and the repro line keeps the knob), and refuses
// an op that is not in the graph, a reduction, a kind of the other
// class and a kind that is no binary or eltwise kind.
func TestGraphOpKind(t *testing.T) {
	path := writeCase(t, sumAddDroppedCase, nil)
	code, out, errw := runGraph(t, path, "--mode=C", "--op-kind=1:Multiply,1:Maximum")
	if code != 0 || summary(t, out)[1] != "2" || !strings.Contains(out, "--op-kind=1:Multiply ") || !strings.Contains(out, "--op-kind=1:Maximum ") {
		t.Errorf("exit %d, want 0, 2 passed and the knob in the repro lines\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
	for _, c := range []struct{ knob, want string }{
		{"--op-kind=7:Multiply", "--op-kind: op 7 is not in the graph"},
		{"--op-kind=0:ReduceMax", "ReduceMax is not a binary or eltwise op kind"},
		{"--op-kind=1:ReLU", "cannot become ReLU (binary ops change to binary kinds, eltwise ops to eltwise kinds)"},
		{"--op-kind=1:NoSuchOp", "NoSuchOp"},
		{"--op-kind=x:Add", "wants ID:KIND"},
	} {
		code, out, errw := runGraph(t, path, "--mode=C", c.knob)
		if !strings.Contains(out+errw, c.want) {
			t.Errorf("%s: exit %d, want a message saying %q\nstdout:\n%s\nstderr:\n%s", c.knob, code, c.want, out, errw)
		}
	}
}

// TestGraphOpKindUndef: --op-kind=ID:undef removes the op, as
// driver_graph.md says: a unary op's consumers read its input, a binary
// op passes on the input another op produces; a chain of removed ops
// passes through them all. It refuses an op that is not in the graph, a
// reduction, and a binary op whose inputs are both (or neither) produced.
func TestGraphOpKindUndef(t *testing.T) {
	withReLU := func(doc map[string]any) {
		ops := doc["graph"].([]any)
		relu := map[string]any{"id": 2, "name": "relu", "kind": "ReLU", "attrs": map[string]any{},
			"inputs":  []any{map[string]any{"id": 3, "dtype": "f32", "shape": []any{4, 5}, "stride": []any{5, 1}, "layout_type": "strided", "property_type": "undef"}},
			"outputs": []any{map[string]any{"id": 4, "dtype": "f32", "shape": []any{4, 5}, "stride": []any{5, 1}, "layout_type": "strided", "property_type": "undef"}}}
		doc["graph"] = append(ops, relu)
	}
	path := writeCase(t, sumAddDroppedCase, withReLU)
	for _, knob := range []string{"--op-kind=1:undef", "--op-kind=2:undef", "--op-kind=1:undef+2:undef"} {
		code, out, errw := runGraph(t, path, "--mode=C", knob)
		if code != 0 || summary(t, out)[1] != "1" || !strings.Contains(out, knob+" ") {
			t.Errorf("%s: exit %d, want 0, 1 passed and the knob in the repro line\nstdout:\n%s\nstderr:\n%s", knob, code, out, errw)
		}
	}
	bothInputs := writeCase(t, sumAddDroppedCase, func(doc map[string]any) {
		tensorAt(doc, 1, false, 0)["id"] = 5 // the Add reads two graph inputs
	})
	for _, c := range []struct{ path, knob, want string }{
		{path, "--op-kind=7:undef", "--op-kind: op 7 is not in the graph"},
		{path, "--op-kind=0:undef", "cannot be removed (undef removes binary and eltwise ops)"},
		{bothInputs, "--op-kind=1:undef", "neither of its inputs is produced by another op"},
	} {
		code, out, errw := runGraph(t, c.path, "--mode=C", c.knob)
		if !strings.Contains(out+errw, c.want) {
			t.Errorf("%s: exit %d, want a message saying %q\nstdout:\n%s\nstderr:\n%s", c.knob, code, c.want, out, errw)
		}
	}
}

// TestGraphRefusesModeF: the graph driver supports neither --mode=F nor
// --mode-modifier=M (driver_graph.md), and says so; other modifiers and
// the reduction driver are unaffected.
func TestGraphRefusesModeF(t *testing.T) {
	path := writeCase(t, sumAddDroppedCase, nil)
	for _, knob := range []string{"--mode=F", "--mode-modifier=M", "--mode-modifier=PM"} {
		code, out, errw := runGraph(t, path, knob)
		want := "the graph driver does not support --mode-modifier=M"
		if knob == "--mode=F" {
			want = "the graph driver does not support --mode=F"
		}
		if code == 0 || !strings.Contains(out+errw, want) {
			t.Errorf("%s: exit %d, want an input error\nstdout:\n%s\nstderr:\n%s", knob, code, out, errw)
		}
	}
	if code, out, errw := runGraph(t, path, "--mode-modifier=P", "--mode=C"); code != 0 || summary(t, out)[1] != "1" {
		t.Errorf("--mode-modifier=P: exit %d, want 0 and 1 passed\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
	if code, out, errw := runMain(t, "--reduction", "--mode-modifier=M", "--mode=C", "4x4:4x1"); code != 0 || summary(t, out)[1] != "1" {
		t.Errorf("reduction with --mode-modifier=M: exit %d, want 0 and 1 passed\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
}

// TestVerboseSaysWhyTheInterpreterRuns: at --verbose=1 a problem the
// interpreter runs (in whole or part) gets an [impl] line with the cause
// (CompiledPartition.Reason) before its result line; a problem the JIT
// runs whole gets none, and without --verbose nothing is added. The deep
// problem is rank 12 with alternating reduced and kept dims: 6 outer and 6
// reduced loops, past every emitter's depth, so it runs on the interpreter
// whatever the machine.
func TestVerboseSaysWhyTheInterpreterRuns(t *testing.T) {
	const deep = "2x2x2x2x2x2x2x2x2x2x2x2:2x1x2x1x2x1x2x1x2x1x2x1"
	jitHere := jit.EffectiveISA() != jit.None
	code, out, errw := runMain(t, "--reduction", "-v1", "--mode=C", deep, "2x3x4:2x1x4")
	first, second, _ := strings.Cut(out, "0:PASSED")
	if code != 0 || !strings.Contains(first, "[impl] interpreter: ") || jitHere && !strings.Contains(first, "6 outer and 6 reduced loops exceed the supported depth") {
		t.Errorf("deep problem: exit %d, want 0 and an [impl] line with the loop depth before its result\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
	if jitHere && strings.Contains(second, "[impl]") {
		t.Errorf("2x3x4 runs on the JIT, yet has an [impl] line:\n%s", out)
	}
	if _, out, _ := runMain(t, "--reduction", "--mode=C", deep); strings.Contains(out, "[impl]") {
		t.Errorf("without --verbose: an [impl] line:\n%s", out)
	}

	// The graph driver too; here the cause is the ISA cap.
	// --max-isa sets the process's cap: restore it afterwards.
	prev := jit.SetMaxISA(jit.EffectiveISA())
	defer jit.SetMaxISA(prev)
	code, out, errw = runGraph(t, writeCase(t, meanCase, nil), "--max-isa=none", "-v1", "--mode=C")
	if first, _, _ := strings.Cut(out, "0:PASSED"); code != 0 || !strings.Contains(first, "[impl] interpreter: ") {
		t.Errorf("graph driver, --max-isa=none: exit %d, want 0 and an [impl] line before the result\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
}
