package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
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

// TestGraphArgEmpty: an index reduction with a zero-size dim beside its
// axis has no output to check, and runs; over a zero-size axis it is
// refused, with the case's error, not a crash of the run.
func TestGraphArgEmpty(t *testing.T) {
	for _, dt := range []string{"f32", "s32", "u64"} {
		for _, c := range []struct {
			in, out []any
			pass    bool
		}{{[]any{0, 37}, []any{0}, true}, {[]any{6, 0}, []any{6}, false}} {
			path := writeCase(t, argMaxCase, func(doc map[string]any) {
				in := tensorAt(doc, 0, false, 0)
				in["dtype"], in["shape"] = dt, c.in
				in["stride"] = []any{c.in[1], 1}
				tensorAt(doc, 0, true, 0)["shape"] = c.out
			})
			code, out, errOut := runGraph(t, path, "--mode=C")
			if c.pass && (code != 0 || !strings.Contains(out, "PASSED")) ||
				!c.pass && (code != 1 || !strings.Contains(out, "INVALID_ARGUMENTS") || !strings.Contains(out, "no element to pick")) {
				t.Errorf("%s %v: exit %d\n%s\n%s", dt, c.in, code, out, errOut)
			}
		}
	}
}

// TestArgReferenceKeys: the integer reference orders values exactly where
// float64 would not (2^62 and 2^62+1, the u64s around 2^63), puts
// and puts negatives below positives.
func TestArgReferenceKeys(t *testing.T) {
	const big = int64(1) << 62
	cases := []struct {
		name      string
		vals      []int64
		signed    bool
		min, last bool
		want      int64
	}{
		{"s64 low bit", []int64{big, big + 1, big}, true, false, false, 1},
		{"s64 low bit min", []int64{big + 1, big, big + 1}, true, true, false, 1},
		{"negative below positive", []int64{-1, 0, -5}, true, false, false, 1},
		{"u64 above 2^63", []int64{math.MaxInt64, math.MinInt64, -1, math.MinInt64 + 1}, false, false, false, 2},
		{"u64 min", []int64{-1, math.MinInt64, math.MaxInt64}, false, true, false, 2},
		{"ties, first", []int64{3, 9, 9, 1}, true, false, false, 1},
	}
	for _, c := range cases {
		keys := make([]uint64, len(c.vals))
		for i, v := range c.vals {
			keys[i] = intKey(v, c.signed)
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

// TestArgFillNeighbours: the tied fill of the integers wider than 16
// bits holds rows whose winner (the max's or the min's) a comparison
// through f32 (32-bit types) or f64 (64-bit ones) gets wrong, so the
// driver's exact check would catch a kernel that compares so.
func TestArgFillNeighbours(t *testing.T) {
	for _, dt := range []dtypes.DataType{dtypes.S32, dtypes.U32, dtypes.S64, dtypes.U64} {
		const rows, n = 64, 37
		caught := 0
		for seed := uint64(0); seed < 8; seed++ {
			a := &argCase{in: graph.NewLogicalTensor(0, dt, []int64{rows, n}), keys: make([]uint64, rows*n)}
			switch dt {
			case dtypes.S32:
				a.srcData = make([]int32, rows*n)
			case dtypes.U32:
				a.srcData = make([]uint32, rows*n)
			case dtypes.S64:
				a.srcData = make([]int64, rows*n)
			case dtypes.U64:
				a.srcData = make([]uint64, rows*n)
			}
			a.fill(seed, true)
			for r := range rows {
				keys := a.keys[r*n : (r+1)*n]
				rounded := make([]uint64, n)
				for i, k := range keys {
					v := k // the value's bits
					if dt.IsSigned() {
						v ^= 1 << 63
					}
					var f float64
					switch {
					case dt.IsSigned() && dt.Size() == 4:
						f = float64(float32(int64(v)))
					case dt.Size() == 4:
						f = float64(float32(v))
					case dt.IsSigned():
						f = float64(int64(v))
					default:
						f = float64(v)
					}
					// f's bits in the order of the floats
					if b := math.Float64bits(f); f < 0 {
						rounded[i] = ^b
					} else {
						rounded[i] = b | 1<<63
					}
				}
				if keyWinner(keys, false, false) != keyWinner(rounded, false, false) || keyWinner(keys, true, false) != keyWinner(rounded, true, false) {
					caught++
				}
			}
		}
		if caught == 0 {
			t.Errorf("%s: no tied row whose winner a comparison through floats gets wrong", dt)
		}
		t.Logf("%s: %d of %d rows", dt, caught, 8*rows)
	}
}
