package bench

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// normGraphJSON is a normalization graph case: op kind with attrs on src [2,
// 6, 3, 5] (ids: src 0, gamma 1, beta 2, dst 3, mean 4, variance 5;
// SoftMax's stats 4, over axis 1), gamma and beta of pdims where given,
// then post (a fused op on dst: its JSON, or "").
func normGraphJSON(kind, attrs string, pdims string, stats bool, post string) string {
	t := func(id int, shape, stride string) string {
		return `{"id": ` + itoa(id) + `, "dtype": "f32", "shape": ` + shape + `, "stride": ` + stride +
			`, "layout_type": "strided", "property_type": "undef"}`
	}
	ins := t(0, "[2, 6, 3, 5]", "[90, 15, 5, 1]")
	if pdims != "" {
		ins += ", " + t(1, pdims, "null") + ", " + t(2, pdims, "null")
		if kind == "RMSNorm" {
			ins = t(0, "[2, 6, 3, 5]", "[90, 15, 5, 1]") + ", " + t(1, pdims, "null")
		}
	}
	outs := t(3, "[2, 6, 3, 5]", "[90, 15, 5, 1]")
	if kind == "LayerNorm" || kind == "GroupNorm" {
		attrs += `, "keep_stats": {"type": "bool", "value": ` + map[bool]string{true: "1", false: "0"}[stats] + `}`
	}
	switch {
	case stats && kind == "SoftMax":
		outs += `, {"id": 4, "dtype": "f32", "shape": [2, 1, 3, 5], "layout_type": "any", "property_type": "undef"}`
	case stats:
		outs += `, {"id": 4, "dtype": "f32", "shape": [2, 6, 3], "layout_type": "any", "property_type": "undef"}` +
			`, {"id": 5, "dtype": "f32", "shape": [2, 6, 3], "layout_type": "any", "property_type": "undef"}`
	}
	doc := `{"version": "3.0.0", "engine_kind": "cpu", "graph": [
	  {"id": 0, "name": "norm", "kind": "` + kind + `", "attrs": {` + attrs + `}, "inputs": [` + ins + `], "outputs": [` + outs + `]}`
	if post != "" {
		doc += ", " + post
	}
	return doc + "]}"
}

func itoa(i int) string { return string(rune('0' + i)) }

const (
	softmaxAttrs = `"axis": {"type": "s64", "value": 1}`
	lnormAttrs   = `"begin_norm_axis": {"type": "s64", "value": -2}, "use_affine": {"type": "bool", "value": 1},
	  "epsilon": {"type": "f32", "value": 0.0625}`
	gnormAttrs = `"groups": {"type": "s64", "value": 3}, "use_affine": {"type": "bool", "value": 1},
	  "epsilon": {"type": "f32", "value": 1e-5}, "data_format": {"type": "string", "value": "NCX"}`
	dstIn    = `{"id": 3, "dtype": "f32", "shape": [2, 6, 3, 5], "stride": [90, 15, 5, 1], "layout_type": "strided", "property_type": "undef"}`
	mulPost  = `{"id": 1, "name": "mul", "kind": "Multiply", "attrs": {}, "inputs": [` + dstIn + `, {"id": 7, "dtype": "f32", "shape": [1, 6, 1, 1], "stride": [6, 1, 1, 1], "layout_type": "strided", "property_type": "undef"}], "outputs": [{"id": 8, "dtype": "f32", "shape": [2, 6, 3, 5], "layout_type": "any", "property_type": "undef"}]}`
	geluPost = `{"id": 1, "name": "gelu", "kind": "GELU", "attrs": {}, "inputs": [` + dstIn + `], "outputs": [{"id": 8, "dtype": "f32", "shape": [2, 6, 3, 5], "layout_type": "any", "property_type": "undef"}]}`
)

// TestGraphNormPartitions: every normalization op, alone (with its
// statistics where it keeps them) and with a fused op after it, passes
// the check in f32, bf16 and f16.
func TestGraphNormPartitions(t *testing.T) {
	for name, doc := range map[string]string{
		"SoftMax":            normGraphJSON("SoftMax", softmaxAttrs, "", false, ""),
		"LogSoftmax":         normGraphJSON("LogSoftmax", `"axis": {"type": "s64", "value": -1}`, "", false, ""),
		"LayerNorm":          normGraphJSON("LayerNorm", lnormAttrs, "[3, 5]", false, ""),
		"LayerNorm stats":    normGraphJSON("LayerNorm", strings.Replace(lnormAttrs, "-2", "-1", 1), "[5]", true, ""),
		"RMSNorm":            normGraphJSON("RMSNorm", `"begin_norm_axis": {"type": "s64", "value": -1}, "use_affine": {"type": "bool", "value": 1}`, "[5]", false, ""),
		"GroupNorm":          normGraphJSON("GroupNorm", gnormAttrs, "[6]", false, ""),
		"SoftMax+Multiply":   normGraphJSON("SoftMax", softmaxAttrs, "", false, mulPost),
		"LayerNorm+GELU":     normGraphJSON("LayerNorm", lnormAttrs, "[3, 5]", false, geluPost),
		"GroupNorm+Multiply": normGraphJSON("GroupNorm", gnormAttrs, "[6]", false, mulPost),
	} {
		code, out, errw := runGraph(t, writeCase(t, doc, nil), "--dt=f32,bf16,f16")
		if code != 0 || summary(t, out)[1] != "3" {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errw)
		}
	}
	// SoftMax's stats are f32 whatever its src and dst (which --dt
	// retypes by id here, as the shared harnesses do).
	for name, c := range map[string]struct{ doc, dt string }{
		"SoftMax stats":      {normGraphJSON("SoftMax", softmaxAttrs, "", true, ""), "--dt=0:f32+3:f32,0:bf16+3:bf16,0:f16+3:f16"},
		"SoftMax stats+GELU": {normGraphJSON("SoftMax", softmaxAttrs, "", true, geluPost), "--dt=0:f32+3:f32+8:f32,0:bf16+3:bf16+8:bf16,0:f16+3:f16+8:f16"},
	} {
		code, out, errw := runGraph(t, writeCase(t, c.doc, nil), c.dt)
		if code != 0 || summary(t, out)[1] != "3" {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errw)
		}
	}
}

// TestGraphNormCheckCanFail: a wrong element of dst or of a statistic
// fails the check.
func TestGraphNormCheckCanFail(t *testing.T) {
	for _, c := range []struct {
		doc string
		out func(n *graphNorm) int
	}{
		{normGraphJSON("SoftMax", softmaxAttrs, "", false, mulPost), func(n *graphNorm) int { return n.dst }},
		{normGraphJSON("SoftMax", softmaxAttrs, "", true, ""), func(n *graphNorm) int { return n.mean }},
		{normGraphJSON("LayerNorm", strings.Replace(lnormAttrs, "-2", "-1", 1), "[5]", true, ""), func(n *graphNorm) int { return n.vari }},
		{normGraphJSON("GroupNorm", gnormAttrs, "[6]", false, geluPost), func(n *graphNorm) int { return n.dst }},
	} {
		path := writeCase(t, c.doc, nil)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := loadGraph(graphCase{file: path}, data)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := partition.Get(g, partition.Fusion)
		if err != nil || len(parts) != 1 {
			t.Fatalf("%d partitions, %v", len(parts), err)
		}
		n, fail := buildGraphNorm(g, parts[0], nil)
		if fail != nil {
			t.Fatal(fail.reason)
		}
		r := newRunner(io.Discard, io.Discard)
		n.fill(false, 3)
		if err := n.exec(0); err != nil {
			t.Fatal(err)
		}
		if f := r.compareGraphNorm(n, false); f != nil {
			t.Fatalf("%s: the unchanged output fails: %s", n.op.Kind, f.reason)
		}
		b := n.outBufs[0][c.out(n)]
		b.set(1, b.get(1)*1.001+1e-3)
		if f := r.compareGraphNorm(n, false); f == nil || f.state != "FAILED" {
			t.Errorf("%s: a changed output passes", n.op.Kind)
		}
	}
}

// TestGraphNormRefusals: what gdnnbench's reference does not cover is
// UNIMPLEMENTED with the reason, never a wrong verdict.
func TestGraphNormRefusals(t *testing.T) {
	nxc := strings.Replace(strings.Replace(gnormAttrs, "NCX", "NXC", 1), `"value": 3`, `"value": 5`, 1)
	doc := strings.Replace(normGraphJSON("GroupNorm", nxc, "[5]", false, ""), "[6]", "[5]", 1)
	code, out, _ := runGraph(t, writeCase(t, doc, nil))
	if code != 0 || summary(t, out)[3] != "1" || !strings.Contains(out, "data_format NCX") {
		t.Errorf("GroupNorm NXC: exit %d\n%s", code, out)
	}
	if graph.GroupNorm.String() != "GroupNorm" {
		t.Fatal("op name")
	}
}

// TestGraphNormDT: --dt retypes a LayerNorm's or GroupNorm's src and dst
// only, as benchdnn's does: gamma, beta and the statistics keep their
// types; the other ops' float tensors all take it.
func TestGraphNormDT(t *testing.T) {
	for _, kind := range []string{"LayerNorm", "GroupNorm"} {
		attrs := strings.Replace(lnormAttrs, "-2", "-1", 1)
		pdims := "[5]"
		if kind == "GroupNorm" {
			attrs, pdims = gnormAttrs, "[6]"
		}
		path := writeCase(t, normGraphJSON(kind, attrs, pdims, kind == "LayerNorm", geluPost), nil)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := loadGraph(graphCase{file: path, dt: "bf16"}, data)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[uint64]string{0: "bf16", 1: "f32", 2: "f32", 3: "bf16", 8: "bf16"} {
			if lt, ok := g.Tensor(id); !ok || lt.DataType.String() != want {
				t.Errorf("%s: tensor %d is %v, want %s", kind, id, lt.DataType, want)
			}
		}
		if kind == "LayerNorm" {
			for _, id := range []uint64{4, 5} {
				if lt, ok := g.Tensor(id); !ok || lt.DataType.String() != "f32" {
					t.Errorf("%s: statistic %d is %v, want f32", kind, id, lt.DataType)
				}
			}
		}
	}
}

// withDequant edits a case whose x is tensor 0 so that x is the output of
// a per-tensor Dequantize of tensor 9, of qdt.
func withDequant(qdt string, scale float64, zp int64) func(doc map[string]any) {
	return func(doc map[string]any) {
		ops := doc["graph"].([]any)
		var x map[string]any
		for _, op := range ops {
			for _, in := range op.(map[string]any)["inputs"].([]any) {
				if t := in.(map[string]any); t["id"] == 0.0 {
					x = t
				}
			}
		}
		q := map[string]any{}
		for k, v := range x {
			q[k] = v
		}
		q["id"], q["dtype"] = 9, qdt
		dq := map[string]any{"id": 99, "name": "dq", "kind": "Dequantize", "inputs": []any{q}, "outputs": []any{x},
			"attrs": map[string]any{"qtype": jt{"type": "string", "value": "per_tensor"}, "axis": jt{"type": "s64", "value": 0},
				"scales": jt{"type": "f32[]", "value": []float64{scale}}, "zps": jt{"type": "s64[]", "value": []int64{zp}}}}
		doc["graph"] = append([]any{dq}, ops...)
	}
}

// TestGraphDequantNorms: a Dequantize fused before a normalization op
// or a decomposed one, of an s8 or a u8 src, passes the check, which
// fails for a changed output; a LayerNorm or GroupNorm after a scale
// that is not a power of two is unimplemented, saying why.
func TestGraphDequantNorms(t *testing.T) {
	docs := decomposedCases(t)
	docs["SoftMax"] = normGraphJSON("SoftMax", softmaxAttrs, "", false, "")
	docs["LayerNorm"] = normGraphJSON("LayerNorm", lnormAttrs, "[3, 5]", false, "")
	docs["GroupNorm"] = normGraphJSON("GroupNorm", gnormAttrs, "[6]", false, mulPost)
	r := newRunner(io.Discard, io.Discard)
	for name, doc := range docs {
		for _, q := range []struct {
			dt    string
			scale float64
			zp    int64
		}{{"s8", 0.25, 3}, {"u8", 0.5, 128}} {
			path := writeCase(t, doc, withDequant(q.dt, q.scale, q.zp))
			code, out, errw := runGraph(t, path)
			if code != 0 || summary(t, out)[1] != "1" {
				t.Errorf("%s, %s: exit %d\n%s%s", name, q.dt, code, out, errw)
				continue
			}
			n := buildDecomposed(t, path)
			if n.dq == nil || n.ins[n.src].DataType.String() != q.dt {
				t.Fatalf("%s, %s: src %v, not the Dequantize's", name, q.dt, n.ins[n.src])
			}
			negative := n.isSoftmax()
			n.fill(negative, 5)
			if err := n.exec(0); err != nil {
				t.Fatal(err)
			}
			b := n.outBufs[0][n.dst]
			at := rows(n.outs[n.dst].Dims) / 2
			b.set(at, b.get(at)*1.001+1e-3)
			if f := r.compareGraphNorm(n, negative); f == nil || f.state != "FAILED" {
				t.Errorf("%s, %s: a changed output passes", name, q.dt)
			}
		}
	}
	for _, name := range []string{"LayerNorm", "GroupNorm"} {
		code, out, errw := runGraph(t, writeCase(t, docs[name], withDequant("s8", 0.3, 0)))
		if s := summary(t, out); code != 0 || s[3] != "1" || !strings.Contains(out, "after a fused Dequantize of a power-of-two scale") {
			t.Errorf("%s, scale 0.3: exit %d\n%s%s", name, code, out, errw)
		}
	}
}
