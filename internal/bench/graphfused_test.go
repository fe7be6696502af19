package bench

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// jtensor is a dense f32 tensor of a case: id and dims.
func jtensor(id int, dims ...int64) map[string]any {
	return map[string]any{"id": id, "dtype": "f32", "shape": dims, "stride": graph.DenseStrides(dims),
		"layout_type": "strided", "property_type": "undef"}
}

// jop is an op of a case.
func jop(id int, kind string, attrs map[string]any, ins, outs []map[string]any) map[string]any {
	if attrs == nil {
		attrs = map[string]any{}
	}
	return map[string]any{"id": id, "name": strings.ToLower(kind), "kind": kind, "attrs": attrs, "inputs": ins, "outputs": outs}
}

// jdoc is a case of ops.
func jdoc(t *testing.T, ops ...map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"version": "3.0.0", "engine_kind": "cpu", "graph": ops})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func jattr(typ string, v any) map[string]any { return map[string]any{"type": typ, "value": v} }

func jlist(ts ...map[string]any) []map[string]any { return ts }

// residualCase is h = Add(x 0, skip 1) [h = Add(h, bias 3 of [16])],
// then kind (LayerNorm with gamma 4 and beta 5, or RMSNorm with gamma 4)
// over the last dim of [2, 6, 16] into 7, then post (nil: none) on 7.
// With keep, a ReduceMean of the sum reads it too: the sum is then an
// output port of the partition.
func residualCase(t *testing.T, kind string, bias, keep bool, post func(in map[string]any) []map[string]any) string {
	dims := []int64{2, 6, 16}
	ops := []map[string]any{jop(0, "Add", nil, jlist(jtensor(0, dims...), jtensor(1, dims...)), jlist(jtensor(2, dims...)))}
	sum := 2
	if bias {
		ops = append(ops, jop(1, "Add", map[string]any{"auto_broadcast": jattr("string", "numpy")},
			jlist(jtensor(2, dims...), jtensor(3, 16)), jlist(jtensor(6, dims...))))
		sum = 6
	}
	attrs := map[string]any{"begin_norm_axis": jattr("s64", -1), "use_affine": jattr("bool", 1), "epsilon": jattr("f32", 0.0625)}
	ins := jlist(jtensor(sum, dims...), jtensor(4, 16))
	if kind == "LayerNorm" {
		attrs["keep_stats"] = jattr("bool", 0)
		ins = append(ins, jtensor(5, 16))
	}
	ops = append(ops, jop(2, kind, attrs, ins, jlist(jtensor(7, dims...))))
	if keep {
		ops = append(ops, jop(3, "ReduceMean", map[string]any{"axes": jattr("s64[]", []int64{-1}), "keep_dims": jattr("bool", 1)},
			jlist(jtensor(sum, dims...)), jlist(jtensor(8, 2, 6, 1))))
	}
	if post != nil {
		ops = append(ops, post(jtensor(7, dims...))...)
	}
	return jdoc(t, ops...)
}

// geluAfter and mulAfter are post-ops on in: a GELU, or a Multiply by a
// per-channel operand 9.
func geluAfter(in map[string]any) []map[string]any {
	return jlist(jop(4, "GELU", nil, jlist(in), jlist(jtensor(10, 2, 6, 16))))
}

func mulAfter(in map[string]any) []map[string]any {
	return jlist(jop(4, "Multiply", nil, jlist(in, jtensor(9, 16)), jlist(jtensor(10, 2, 6, 16))))
}

// maskedCase is masked pooling as sentence-transformer exporters write
// it: x 0 [2, 7, 16] times mask 1 [2, 7, 1], then kind over the tokens
// (axis 1) into 3. With div, the pooled sum is divided by the mask's
// count, a ReduceSum of the mask clamped away from 0: a partition of
// its own, whose result is the pooling partition's operand. The graph
// lists the count's ops first, or with countLast after the pooling's.
func maskedCase(t *testing.T, kind string, keep, div, countLast bool) string {
	out := []int64{2, 16}
	if keep {
		out = []int64{2, 1, 16}
	}
	keepAttr := jattr("bool", map[bool]int{true: 1}[keep])
	pool := jlist(
		jop(0, "Multiply", nil, jlist(jtensor(0, 2, 7, 16), jtensor(1, 2, 7, 1)), jlist(jtensor(2, 2, 7, 16))),
		jop(1, kind, map[string]any{"axes": jattr("s64[]", []int64{1}), "keep_dims": keepAttr},
			jlist(jtensor(2, 2, 7, 16)), jlist(jtensor(3, out...))))
	if !div {
		return jdoc(t, pool...)
	}
	cnt := []int64{2, 1}
	if keep {
		cnt = []int64{2, 1, 1}
	}
	count := jlist(
		jop(2, "ReduceSum", map[string]any{"axes": jattr("s64[]", []int64{1}), "keep_dims": keepAttr},
			jlist(jtensor(1, 2, 7, 1)), jlist(jtensor(4, cnt...))),
		jop(3, "Clamp", map[string]any{"min": jattr("f32", 1e-9), "max": jattr("f32", 3.4e38)}, jlist(jtensor(4, cnt...)), jlist(jtensor(5, cnt...))))
	first, then := count, pool
	if countLast {
		first, then = pool, count
	}
	ops := append(append(jlist(), first...), then...)
	ops = append(ops, jop(4, "Divide", nil, jlist(jtensor(3, out...), jtensor(5, cnt...)), jlist(jtensor(6, out...))))
	return jdoc(t, ops...)
}

// TestGraphResidualNorms: a residual Add, with a bias Add or without,
// fused before a LayerNorm or RMSNorm (and its post-ops), with the sum
// an output port or not, passes in f32, bf16 and f16 and with x and skip
// bf16 under an f32 sum; the verbose lines show the sum checked where
// it is a port.
func TestGraphResidualNorms(t *testing.T) {
	for _, c := range []struct {
		name            string
		kind            string
		bias, keep      bool
		post            func(map[string]any) []map[string]any
		pattern         string
		parts, sumLines int
	}{
		{"LayerNorm", "LayerNorm", false, false, nil, "residual Add before LayerNorm", 1, 0},
		{"LayerNorm+GELU, sum kept", "LayerNorm", false, true, geluAfter, "residual Add before LayerNorm", 2, 1},
		{"bias+RMSNorm, sum kept", "RMSNorm", true, true, nil, "residual Add and bias Add before RMSNorm", 2, 1},
		{"bias+RMSNorm+Multiply", "RMSNorm", true, false, mulAfter, "residual Add and bias Add before RMSNorm", 1, 0},
		{"bias+LayerNorm, sum kept", "LayerNorm", true, true, nil, "residual Add and bias Add before LayerNorm", 2, 1},
	} {
		path := writeCase(t, residualCase(t, c.kind, c.bias, c.keep, c.post), nil)
		n := buildResidual(t, path, graphCase{})
		if n.parts[n.at].Pattern() != c.pattern || (n.res.sum >= 0) != c.keep {
			t.Fatalf("%s: pattern %q, sum port %d", c.name, n.parts[n.at].Pattern(), n.res.sum)
		}
		exp := "--expected-n-partitions=" + itoa(c.parts)
		dts := []string{"f32", "bf16", "f16"}
		for _, dt := range dts {
			code, out, errw := runGraph(t, path, exp, "--dt="+dt, "-v1")
			if code != 0 || summary(t, out)[1] != "1" {
				t.Errorf("%s, %s: exit %d\n%s%s", c.name, dt, code, out, errw)
			}
			if got := strings.Count(out, "[SUM] outputs:"); got != c.sumLines {
				t.Errorf("%s, %s: %d sums checked, want %d\n%s", c.name, dt, got, c.sumLines, out)
			}
		}
		// x and skip bf16, their sum (and all after it) f32.
		code, out, errw := runGraph(t, path, exp, "--dt=0:bf16+1:bf16")
		if code != 0 || summary(t, out)[1] != "1" {
			t.Errorf("%s, bf16 x and skip: exit %d\n%s%s", c.name, code, out, errw)
		}
	}
}

// TestGraphResidualModes: a residual partition runs under --mode=P (a
// perf line), B (bitwise) and I (the impl line), as the normalization
// partitions do.
func TestGraphResidualModes(t *testing.T) {
	path := writeCase(t, residualCase(t, "RMSNorm", true, false, nil), nil)
	for mode, want := range map[string]string{"P": "perf,", "B": "PASSED", "CP": "perf,", "I": "INITIALIZED"} {
		code, out, errw := runGraph(t, path, "--mode="+mode)
		if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "UNIMPLEMENTED") {
			t.Errorf("--mode=%s: exit %d, want %q\n%s%s", mode, code, want, out, errw)
		}
	}
}

// fusedNorm is a residual normalization partition of a case, built.
type fusedNorm struct {
	*graphNorm
	parts []*partition.Partition
	at    int
}

// buildResidual builds the residual partition of case path under c's
// knobs.
func buildResidual(t *testing.T, path string, c graphCase) fusedNorm {
	t.Helper()
	g, parts := partitionsOf(t, path, c)
	for i, p := range parts {
		if residualOps(p) == 0 {
			continue
		}
		n, fail := buildGraphNorm(g, p, readDecomposition(p))
		if fail != nil {
			t.Fatal(fail.reason)
		}
		if n.res == nil {
			t.Fatalf("partition %s: no residual read", p)
		}
		return fusedNorm{n, parts, i}
	}
	t.Fatalf("no residual partition in %v", parts)
	return fusedNorm{}
}

// TestGraphResidualCheckCanFail: the check of a residual partition fails
// for a changed dst or kept sum, for a reference that leaves out skip or
// the bias, and for a residual sum the normalization reads differently
// from the one the reference computes.
func TestGraphResidualCheckCanFail(t *testing.T) {
	for _, dt := range []string{"f32", "bf16"} {
		path := writeCase(t, residualCase(t, "RMSNorm", true, true, mulAfter), nil)
		n := buildResidual(t, path, graphCase{dt: dt})
		r := newRunner(io.Discard, io.Discard)
		run := func() {
			t.Helper()
			n.fill(false, 3)
			if err := n.exec(0); err != nil {
				t.Fatal(err)
			}
			if f := r.compareGraphNorm(n.graphNorm, false); f != nil {
				t.Fatalf("%s: the unchanged outputs fail: %s", dt, f.reason)
			}
		}
		mustFail := func(what, want string) {
			t.Helper()
			f := r.compareGraphNorm(n.graphNorm, false)
			if f == nil || f.state != "FAILED" || !strings.Contains(f.reason, want) {
				t.Errorf("%s: %s: %+v, want FAILED with %q", dt, what, f, want)
			}
		}
		for _, c := range []struct {
			what, want string
			out        func() int
		}{{"a changed dst", "DST", func() int { return n.dst }}, {"a changed sum", "SUM", func() int { return n.res.sum }}} {
			run()
			b := n.outBufs[0][c.out()]
			at := rows(n.outs[c.out()].Dims) / 2
			b.set(at, b.get(at)*1.01+0.125)
			mustFail(c.what, c.want)
		}
		// The inputs changed after the run: the reference of other
		// inputs than those the partition read.
		for _, in := range []struct {
			what string
			i    func() int
		}{{"skip", func() int { return n.res.skip }}, {"bias", func() int { return n.res.biasIn }}} {
			run()
			lt := n.ins[in.i()]
			vals := loadLogical(n.inBufs[in.i()], lt.Dims, lt.Strides)
			vals[1] += 0.5
			storeLogical(n.inBufs[in.i()], lt.Dims, lt.Strides, vals)
			mustFail("another "+in.what, "SUM")
		}
		// Without the sum port, a changed skip shows in dst.
		path = writeCase(t, residualCase(t, "LayerNorm", false, false, nil), nil)
		n = buildResidual(t, path, graphCase{dt: dt})
		run()
		lt := n.ins[n.res.skip]
		vals := loadLogical(n.inBufs[n.res.skip], lt.Dims, lt.Strides)
		vals[3] += 0.5
		storeLogical(n.inBufs[n.res.skip], lt.Dims, lt.Strides, vals)
		mustFail("another skip, no sum port", "DST")
	}
}

// TestResidualSplitExact: residualSplit's x, skip and bias hold their
// values in the narrowest type of the statistics fill, and add up to the
// fill exactly whether rounded after each Add or once, over rows of every
// statistics fill's kind (short and long rows, f32 and 16-bit).
func TestResidualSplitExact(t *testing.T) {
	for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
		for _, l := range []int64{1, 3, 8, 16, 255, 4096, 1 << 17} {
			rowsN := int64(14)
			if l > 4096 {
				rowsN = 2
			}
			dims := []int64{rowsN, l}
			sum := statsFill(rowsN, l, dt, 5)
			x, skip, bias := residualSplit(sum, dims, []int64{l}, 5)
			for i := range sum {
				b := bias[int64(i)%l]
				for _, v := range []float64{x[i], skip[i], b, x[i] + skip[i]} {
					if roundTo(dt, v) != v {
						t.Fatalf("%s, rows of %d: element %d: %v is not exact (x %v skip %v bias %v)", dt, l, i, v, x[i], skip[i], b)
					}
				}
				if x[i]+skip[i]+b != sum[i] {
					t.Fatalf("%s, rows of %d: element %d: %v + %v + %v is not %v", dt, l, i, x[i], skip[i], b, sum[i])
				}
			}
		}
	}
}

// TestGraphMaskedPooling: a Multiply by a mask fused before a ReduceSum
// or ReduceMean, with or without keep_dims, and the sentence-transformer
// mean pooling (the pooled sum divided by the mask's count, whichever
// the graph lists first), passes in f32, bf16 and f16.
func TestGraphMaskedPooling(t *testing.T) {
	for _, c := range []struct {
		name                 string
		kind                 string
		keep, div, countLast bool
		partitions           string
	}{
		{"ReduceMean", "ReduceMean", false, false, false, "1"},
		{"ReduceSum, keep_dims", "ReduceSum", true, false, false, "1"},
		{"mean pooling", "ReduceSum", false, true, false, "2"},
		{"mean pooling, keep_dims", "ReduceSum", true, true, false, "2"},
		{"mean pooling, count last", "ReduceSum", false, true, true, "2"},
		{"mean pooling, keep_dims, count last", "ReduceSum", true, true, true, "2"},
	} {
		path := writeCase(t, maskedCase(t, c.kind, c.keep, c.div, c.countLast), nil)
		_, parts := partitionsOf(t, path, graphCase{})
		last := map[bool]graph.OpKind{false: graph.ReduceMean, true: graph.Divide}[c.div]
		if c.kind == "ReduceSum" && !c.div {
			last = graph.ReduceSum
		}
		if ops := parts[len(parts)-1].Ops(); len(ops) < 2 || ops[0].Kind != graph.Multiply || ops[len(ops)-1].Kind != last {
			t.Fatalf("%s: partitions %v; want the Multiply fused before the reduction, then %s", c.name, parts, last)
		}
		code, out, errw := runGraph(t, path, "--expected-n-partitions="+c.partitions, "--dt=f32,bf16,f16")
		if code != 0 || summary(t, out)[1] != "3" {
			t.Errorf("%s: exit %d\n%s%s", c.name, code, out, errw)
		}
	}
	// The mask first, x second.
	path := writeCase(t, maskedCase(t, "ReduceMean", false, false, false), func(doc map[string]any) {
		ins := doc["graph"].([]any)[0].(map[string]any)["inputs"].([]any)
		ins[0], ins[1] = ins[1], ins[0]
	})
	if code, out, errw := runGraph(t, path); code != 0 || summary(t, out)[1] != "1" {
		t.Errorf("mask first: exit %d\n%s%s", code, out, errw)
	}
	for _, mode := range []string{"P", "B", "I"} {
		if code, out, errw := runGraph(t, path, "--mode="+mode); code != 0 || strings.Contains(out, "UNIMPLEMENTED") || strings.Contains(out, "FAILED") {
			t.Errorf("--mode=%s: exit %d\n%s%s", mode, code, out, errw)
		}
	}
}

// TestGraphMaskedCheckCanFail: the mask is filled with both 0 and 1, the
// masked pooling's reference multiplies by it (a reference of another
// mask fails), and a changed output fails.
func TestGraphMaskedCheckCanFail(t *testing.T) {
	for _, swap := range []bool{false, true} {
		path := writeCase(t, maskedCase(t, "ReduceMean", false, false, false), func(doc map[string]any) {
			if swap {
				ins := doc["graph"].([]any)[0].(map[string]any)["inputs"].([]any)
				ins[0], ins[1] = ins[1], ins[0]
			}
		})
		g, parts := partitionsOf(t, path, graphCase{})
		if len(parts) != 1 {
			t.Fatalf("partitions %v", parts)
		}
		r := newRunner(io.Discard, io.Discard)
		gp, fail := r.buildGraphPartition(g, parts[0])
		if fail != nil {
			t.Fatal(fail.reason)
		}
		b := gp.b
		if !b.masked || b.srcLT.ID != 0 || b.opLTs[0].ID != 1 {
			t.Fatalf("swap %v: src %d, operands %v; want src 0 and mask 1", swap, b.srcLT.ID, b.opLTs)
		}
		exec := func(i int) error { return r.execute(b, i) }
		for _, mode := range []fillMode{fillExact, fillRandom} {
			c := redCase{sdt: gp.sdt, ddt: gp.ddt}
			if f := r.checkOnce(b, c, mode, 11, exec); f != nil {
				t.Fatalf("%s fill: %s", fillName(mode), f.reason)
			}
			mask := loadLogical(b.operands[0], b.opLTs[0].Dims, b.opLTs[0].Strides)
			ones := 0
			for _, v := range mask {
				if v == 1 {
					ones++
				} else if v != 0 {
					t.Fatalf("mask value %v", v)
				}
			}
			if ones == 0 || ones == len(mask) {
				t.Fatalf("%s fill: %d of %d mask elements are 1", fillName(mode), ones, len(mask))
			}
			// The reference of an all-ones mask: the unmasked mean.
			for i := range mask {
				mask[i] = 1
			}
			storeLogical(b.operands[0], b.opLTs[0].Dims, b.opLTs[0].Strides, mask)
			ref, allow, alts := reductionReference(b, c.ddt, mode)
			if chk := compareOutput(b.outs[0], b.outLT.Dims, b.outLT.Strides, ref, allow, alts); chk.errors == 0 {
				t.Errorf("swap %v, %s fill: the reference of another mask passes", swap, fillName(mode))
			}
			// A changed output.
			fillInputs(b, c.sdt, mode, 11)
			if err := exec(0); err != nil {
				t.Fatal(err)
			}
			b.outs[0].set(1, b.outs[0].get(1)*1.01+0.125)
			ref, allow, alts = reductionReference(b, c.ddt, mode)
			if chk := compareOutput(b.outs[0], b.outLT.Dims, b.outLT.Strides, ref, allow, alts); chk.errors == 0 {
				t.Errorf("swap %v, %s fill: a changed output passes", swap, fillName(mode))
			}
		}
	}
}

// partitionsOf loads case path under c's knobs and partitions it.
func partitionsOf(t *testing.T, path string, c graphCase) (*graph.Graph, []*partition.Partition) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c.file = path
	g, err := loadGraph(c, data)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		t.Fatal(err)
	}
	return g, parts
}

// TestGraphResidualRefusals: a residual sum of a tensor with itself,
// which gdnnbench cannot fill as a split of the statistics fill, is
// UNIMPLEMENTED, saying why, not a wrong verdict or a crash.
func TestGraphResidualRefusals(t *testing.T) {
	for name, edit := range map[string]func(doc map[string]any){
		"x + x": func(doc map[string]any) {
			ins := doc["graph"].([]any)[0].(map[string]any)["inputs"].([]any)
			ins[1] = ins[0]
		},
		"bias x": func(doc map[string]any) {
			doc["graph"].([]any)[1].(map[string]any)["inputs"].([]any)[1] = jtensor(0, 2, 6, 16)
		},
	} {
		path := writeCase(t, residualCase(t, "LayerNorm", true, false, nil), edit)
		_, parts := partitionsOf(t, path, graphCase{})
		if residualOps(parts[0]) == 0 {
			t.Logf("%s: not fused (%v); nothing to refuse", name, parts)
			continue
		}
		code, out, errw := runGraph(t, path)
		if code != 0 || summary(t, out)[3] != "1" || !strings.Contains(out, "adds a tensor to itself") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errw)
		}
	}
}
