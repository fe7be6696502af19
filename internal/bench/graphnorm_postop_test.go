package bench

import "testing"

// TestGraphNormShiftPostOpCancels: a LayerNorm without its own beta
// whose dst is scaled and shifted by fused Multiply and Add post-ops
// (gamma and beta as a decomposed layer norm's exporter writes them)
// passes: an output that nearly cancels the shift is judged by the
// error the normalization's result carries through the chain, not
// against its own small magnitude.
func TestGraphNormShiftPostOpCancels(t *testing.T) {
	dst := func(id string) string {
		return `{"id": ` + id + `, "dtype": "f32", "shape": [2, 6, 3, 5], "stride": [90, 15, 5, 1], "layout_type": "strided", "property_type": "undef"}`
	}
	operand := func(id string) string {
		return `{"id": ` + id + `, "dtype": "f32", "shape": [5], "stride": [1], "layout_type": "strided", "property_type": "undef"}`
	}
	post := `{"id": 1, "name": "gamma", "kind": "Multiply", "attrs": {}, "inputs": [` + dst("3") + `, ` + operand("7") + `], "outputs": [` + dst("8") + `]}, ` +
		`{"id": 2, "name": "beta", "kind": "Add", "attrs": {}, "inputs": [` + dst("8") + `, ` + operand("9") + `], "outputs": [` + dst("10") + `]}`
	attrs := `"begin_norm_axis": {"type": "s64", "value": -1}, "use_affine": {"type": "bool", "value": 0}, "epsilon": {"type": "f32", "value": 0.0625}`
	for _, kind := range []string{"LayerNorm", "RMSNorm"} {
		doc := normGraphJSON(kind, attrs, "", false, post)
		code, out, errw := runGraph(t, writeCase(t, doc, nil), "--dt=f32")
		if code != 0 || summary(t, out)[1] != "1" {
			t.Errorf("%s + Multiply + Add: exit %d\n%s%s", kind, code, out, errw)
		}
	}
}
