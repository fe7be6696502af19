package bench

import (
	"strings"
	"testing"
)

// argMaxCase is the ONNX Runtime anchor's ArgMax case (gen_models.py's
// spelling: the axis as axes), small: [6, 37] over axis 1 into s64.
const argMaxCase = `{
  "version": "3.7.0", "engine_kind": "cpu", "fpmath_mode": "strict",
  "graph": [
    {"id": 10, "name": "ARGMAX_0", "kind": "ArgMax",
     "attrs": {"axes": {"type": "s64[]", "value": [1]}, "keep_dims": {"type": "bool", "value": 0}},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [6, 37], "stride": [37, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 1, "dtype": "s64", "shape": [6], "stride": [1], "layout_type": "strided", "property_type": "undef"}]}
  ]
}`

// TestGraphArgMax checks index reductions through the graph driver, in
// modes C and P, on every src type, both kinds, an Abs before, and the
// tie rule.
func TestGraphArgMax(t *testing.T) {
	for _, dt := range []string{"f32", "bf16", "f16", "s8", "u8"} {
		for _, kind := range []string{"ArgMax", "ArgMin"} {
			for _, axis := range []float64{0, 1} {
				path := writeCase(t, argMaxCase, func(doc map[string]any) {
					op := doc["graph"].([]any)[0].(map[string]any)
					op["kind"] = kind
					op["attrs"].(map[string]any)["axes"].(map[string]any)["value"] = []any{axis}
					op["attrs"].(map[string]any)["select_last_index"] = map[string]any{"type": "bool", "value": axis}
					tensorAt(doc, 0, false, 0)["dtype"] = dt
					out := tensorAt(doc, 0, true, 0)
					if axis == 0 {
						out["shape"] = []any{37}
					}
				})
				code, out, errOut := runGraph(t, path, "--mode=CP", "--fix-times-per-prb=3")
				if code != 0 || !strings.Contains(out, "PASSED") || !strings.Contains(out, "perf,cpu,") {
					t.Fatalf("%s %s axis %v: exit %d\n%s\n%s", kind, dt, axis, code, out, errOut)
				}
			}
		}
	}
}
