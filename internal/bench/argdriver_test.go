package bench

import (
	"math"
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
// modes C and P, on every src type (f64 and the integers wider than 8
// bits against exact keys), both kinds, and the tie rule.
func TestGraphArgMax(t *testing.T) {
	for _, dt := range []string{"f32", "bf16", "f16", "s8", "u8", "f64", "s16", "u16", "s32", "u32", "s64", "u64"} {
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

// TestArgReferenceKeys: the integer reference orders values exactly where
// float64 would not (2^62 and 2^62+1, the u64s around 2^63), puts
// negatives below positives, and takes |least| as the greatest magnitude.
func TestArgReferenceKeys(t *testing.T) {
	const big = int64(1) << 62
	cases := []struct {
		name        string
		vals        []int64
		signed, abs bool
		min, last   bool
		want        int64
	}{
		{"s64 low bit", []int64{big, big + 1, big}, true, false, false, false, 1},
		{"s64 low bit min", []int64{big + 1, big, big + 1}, true, false, true, false, 1},
		{"negative below positive", []int64{-1, 0, -5}, true, false, false, false, 1},
		{"u64 above 2^63", []int64{math.MaxInt64, math.MinInt64, -1, math.MinInt64 + 1}, false, false, false, false, 2},
		{"u64 min", []int64{-1, math.MinInt64, math.MaxInt64}, false, false, true, false, 2},
		{"abs of the least", []int64{math.MaxInt64, math.MinInt64, -3}, true, true, false, false, 1},
		{"abs ties, last", []int64{-7, 7, 2, -7}, true, true, false, true, 3},
		{"ties, first", []int64{3, 9, 9, 1}, true, false, false, false, 1},
	}
	for _, c := range cases {
		keys := make([]uint64, len(c.vals))
		for i, v := range c.vals {
			keys[i] = intKey(v, c.signed, c.abs)
		}
		if got := keyWinner(keys, c.min, c.last); got != c.want {
			t.Errorf("%s: winner %d, want %d", c.name, got, c.want)
		}
	}
}

// argAbsCase is an Abs fused before an ArgMax: [5, 41] over axis 1.
const argAbsCase = `{
  "version": "3.7.0", "engine_kind": "cpu", "fpmath_mode": "strict",
  "graph": [
    {"id": 9, "name": "abs", "kind": "Abs", "attrs": {},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [5, 41], "stride": [41, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 2, "dtype": "f32", "shape": [5, 41], "stride": [41, 1], "layout_type": "strided", "property_type": "undef"}]},
    {"id": 10, "name": "argmax", "kind": "ArgMax",
     "attrs": {"axis": {"type": "s64", "value": 1}},
     "inputs": [{"id": 2, "dtype": "f32", "shape": [5, 41], "stride": [41, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 1, "dtype": "s32", "shape": [5], "stride": [1], "layout_type": "strided", "property_type": "undef"}]}
  ]
}`

// TestGraphAbsArg checks an Abs fused before ArgMax and ArgMin through
// the graph driver, on the float src types an Abs takes, with and
// without select_last_index.
func TestGraphAbsArg(t *testing.T) {
	for _, dt := range []string{"f32", "bf16", "f16", "f64"} {
		for _, kind := range []string{"ArgMax", "ArgMin"} {
			for _, last := range []float64{0, 1} {
				path := writeCase(t, argAbsCase, func(doc map[string]any) {
					op := doc["graph"].([]any)[1].(map[string]any)
					op["kind"] = kind
					op["attrs"].(map[string]any)["select_last_index"] = map[string]any{"type": "bool", "value": last}
					tensorAt(doc, 0, false, 0)["dtype"] = dt
					tensorAt(doc, 0, true, 0)["dtype"] = dt
					tensorAt(doc, 1, false, 0)["dtype"] = dt
				})
				code, out, errOut := runGraph(t, path, "--mode=C")
				if code != 0 || !strings.Contains(out, "PASSED") {
					t.Fatalf("Abs %s %s last %v: exit %d\n%s\n%s", kind, dt, last, code, out, errOut)
				}
			}
		}
	}
}
