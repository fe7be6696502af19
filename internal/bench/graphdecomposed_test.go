package bench

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/partition"
)

// decomposedCase builds a graph case of ops on x [2, 6, 4, 5] (id 0)
// and a scalar eps [1] (id 1), every tensor f32 with its dims.
type decomposedCase struct {
	ops  []any
	next int
}

type jt = map[string]any

func (c *decomposedCase) tensor(id int, dims []int64) jt {
	strides := make([]int64, len(dims))
	s := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		strides[i] = s
		s *= dims[i]
	}
	return jt{"id": id, "dtype": "f32", "shape": dims, "stride": strides, "layout_type": "strided", "property_type": "undef"}
}

var (
	decX   = jt{"id": 0, "dtype": "f32", "shape": []int64{2, 6, 4, 5}, "stride": []int64{120, 20, 5, 1}, "layout_type": "strided", "property_type": "undef"}
	decEps = jt{"id": 1, "dtype": "f32", "shape": []int64{1}, "stride": []int64{1}, "layout_type": "strided", "property_type": "undef"}
)

// op adds an op of kind over ins whose output has dims, with attrs.
func (c *decomposedCase) op(kind string, ins []jt, dims []int64, attrs jt) jt {
	if c.next == 0 {
		c.next = 10
	}
	out := c.tensor(c.next, dims)
	if attrs == nil {
		attrs = jt{}
	}
	list := make([]any, len(ins))
	for i, in := range ins {
		list[i] = in
	}
	c.ops = append(c.ops, jt{"id": c.next, "name": strings.ToLower(kind), "kind": kind, "attrs": attrs,
		"inputs": list, "outputs": []any{out}})
	c.next++
	return out
}

func dimsOf(t jt) []int64 { return t["shape"].([]int64) }

// reduce is a Reduce* op over axes of x, dims kept.
func (c *decomposedCase) reduce(kind string, x jt, axes []int64) jt {
	dims := append([]int64(nil), dimsOf(x)...)
	for _, a := range axes {
		dims[(int(a)+len(dims))%len(dims)] = 1
	}
	return c.op(kind, []jt{x}, dims, jt{"axes": jt{"type": "s64[]", "value": axes}, "keep_dims": jt{"type": "bool", "value": 1}})
}

// bin is a binary op; its output has the larger operand's dims.
func (c *decomposedCase) bin(kind string, a, b jt) jt {
	dims := dimsOf(a)
	if rows(dimsOf(b)) > rows(dims) {
		dims = dimsOf(b)
	}
	return c.op(kind, []jt{a, b}, dims, jt{"auto_broadcast": jt{"type": "string", "value": "numpy"}})
}

func (c *decomposedCase) unary(kind string, x jt, attrs jt) jt {
	return c.op(kind, []jt{x}, dimsOf(x), attrs)
}

// square writes x^2 as Square, Pow 2 or Multiply(x, x).
func (c *decomposedCase) square(x jt, spelling string) jt {
	switch spelling {
	case "Pow":
		return c.unary("Pow", x, jt{"beta": jt{"type": "f32", "value": 2}})
	case "Multiply":
		return c.bin("Multiply", x, x)
	}
	return c.unary("Square", x, nil)
}

func (c *decomposedCase) json(t *testing.T) string {
	data, err := json.Marshal(jt{"version": "3.7.0", "engine_kind": "cpu", "fpmath_mode": "strict", "graph": c.ops})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// decomposedCases are the normalizations the partitioner recognizes
// written out in ops, in their spellings, over the last axis, the last
// two, or axis 1 alone (not the last), some with a Multiply by a
// per-channel operand fused after them.
func decomposedCases(t *testing.T) map[string]string {
	cases := map[string]string{}
	add := func(name string, build func(c *decomposedCase) jt, post bool) {
		c := &decomposedCase{}
		y := build(c)
		if post {
			c.bin("Multiply", y, c.tensor(2, []int64{1, 6, 1, 1}))
		}
		cases[name] = c.json(t)
	}
	last, last2, mid := []int64{-1}, []int64{2, 3}, []int64{1}
	layerNorm := func(axes []int64, sq string) func(c *decomposedCase) jt {
		return func(c *decomposedCase) jt {
			d := c.bin("Subtract", decX, c.reduce("ReduceMean", decX, axes))
			v := c.reduce("ReduceMean", c.square(d, sq), axes)
			return c.bin("Divide", d, c.unary("Sqrt", c.bin("Add", v, decEps), nil))
		}
	}
	rmsNorm := func(axes []int64, sq string, pow bool) func(c *decomposedCase) jt {
		return func(c *decomposedCase) jt {
			ms := c.bin("Add", c.reduce("ReduceMean", c.square(decX, sq), axes), decEps)
			if pow {
				return c.bin("Multiply", decX, c.unary("Pow", ms, jt{"beta": jt{"type": "f32", "value": -0.5}}))
			}
			return c.bin("Divide", decX, c.unary("Sqrt", ms, nil))
		}
	}
	l2Norm := func(axes []int64, reduceL2 bool, bound string) func(c *decomposedCase) jt {
		return func(c *decomposedCase) jt {
			var n jt
			if reduceL2 {
				n = c.reduce("ReduceL2", decX, axes)
			} else {
				n = c.unary("Sqrt", c.reduce("ReduceSum", c.square(decX, "Square"), axes), nil)
			}
			if bound != "" {
				n = c.bin(bound, n, decEps)
			}
			return c.bin("Divide", decX, n)
		}
	}
	softmax := func(axis int64) func(c *decomposedCase) jt {
		return func(c *decomposedCase) jt {
			e := c.unary("Exp", c.bin("Subtract", decX, c.reduce("ReduceMax", decX, []int64{axis})), nil)
			return c.bin("Divide", e, c.reduce("ReduceSum", e, []int64{axis}))
		}
	}
	add("layernorm", layerNorm(last, "Square"), false)
	add("layernorm Pow, two axes, Multiply after", layerNorm(last2, "Pow"), true)
	add("layernorm Multiply square, axis 1", layerNorm(mid, "Multiply"), false)
	add("rmsnorm Sqrt Divide", rmsNorm(last, "Square", false), false)
	add("rmsnorm Pow -0.5 Multiply, Multiply after", rmsNorm(last, "Pow", true), true)
	add("rmsnorm Multiply square, axis 1", rmsNorm(mid, "Multiply", false), false)
	add("l2 ReduceL2 no eps", l2Norm(last, true, ""), false)
	add("l2 ReduceL2 Maximum", l2Norm(last, true, "Maximum"), false)
	add("l2 ReduceL2 Add, two axes, Multiply after", l2Norm(last2, true, "Add"), true)
	add("l2 Square ReduceSum Sqrt no eps", l2Norm(last, false, ""), false)
	add("l2 Square ReduceSum Sqrt Maximum, axis 1", l2Norm(mid, false, "Maximum"), false)
	add("softmax", softmax(-1), false)
	add("softmax axis 1, Multiply after", softmax(1), true)
	return cases
}

// TestGraphDecomposedNorms: every decomposed normalization passes the
// check in f32, bf16 and f16, as one partition of gdnn's (its pattern).
func TestGraphDecomposedNorms(t *testing.T) {
	for name, doc := range decomposedCases(t) {
		path := writeCase(t, doc, nil)
		n := buildDecomposed(t, path)
		if n.dec == nil {
			t.Errorf("%s: not read as a decomposed normalization", name)
			continue
		}
		code, out, errw := runGraph(t, path, "--dt=f32,bf16,f16", "-v1")
		if code != 0 || summary(t, out)[1] != "3" {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errw)
		}
	}
}

// buildDecomposed partitions the case at path (one partition) and
// builds it for the check.
func buildDecomposed(t *testing.T, path string) *graphNorm {
	t.Helper()
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
	n, fail := buildGraphNorm(g, parts[0], readDecomposition(parts[0]))
	if fail != nil {
		t.Fatal(fail.reason)
	}
	return n
}

// TestGraphDecomposedCheckCanFail: for every decomposed normalization,
// gdnn's output passes and the same output with one element changed
// fails; so does the right output for an eps other than the one the
// reference reads.
func TestGraphDecomposedCheckCanFail(t *testing.T) {
	r := newRunner(io.Discard, io.Discard)
	for name, doc := range decomposedCases(t) {
		n := buildDecomposed(t, writeCase(t, doc, nil))
		negative := n.isSoftmax()
		n.fill(negative, 3)
		if err := n.exec(0); err != nil {
			t.Fatal(err)
		}
		if f := r.compareGraphNorm(n, negative); f != nil {
			t.Errorf("%s: the unchanged output fails: %s", name, f.reason)
			continue
		}
		b := n.outBufs[0][n.dst]
		for _, at := range []int64{1, rows(n.outs[n.dst].Dims) - 1} {
			old := b.get(at)
			b.set(at, old*1.001+1e-3)
			if f := r.compareGraphNorm(n, negative); f == nil || f.state != "FAILED" {
				t.Errorf("%s: a changed output %d passes", name, at)
			}
			b.set(at, old)
		}
		if n.eps >= 0 && !strings.Contains(name, "Maximum") { // (Maximum: eps is below every norm)
			n.inBufs[n.eps].set(0, 0.5)
			if err := n.exec(0); err != nil {
				t.Fatal(err)
			}
			n.inBufs[n.eps].set(0, decomposedEps)
			if f := r.compareGraphNorm(n, negative); f == nil || f.state != "FAILED" {
				t.Errorf("%s: the output for another eps passes", name)
			}
		}
	}
}
