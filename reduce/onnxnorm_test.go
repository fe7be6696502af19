package reduce_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/reduce"
)

// onnxRows applies f to each row of x (dense over dims): the elements
// that share their index in the dims normed is false for, in order.
func onnxRows(x []float64, dims []int, normed []bool, f func([]float64) []float64) []float64 {
	rows := map[int][]int{} // kept index -> element positions
	var order []int
	idx := make([]int, len(dims))
	for e := range x {
		key := 0
		for d := range dims {
			if !normed[d] {
				key = key*dims[d] + idx[d]
			}
		}
		if _, ok := rows[key]; !ok {
			order = append(order, key)
		}
		rows[key] = append(rows[key], e)
		for d := len(dims) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
	out := make([]float64, len(x))
	for _, k := range order {
		vals := make([]float64, len(rows[k]))
		for i, e := range rows[k] {
			vals[i] = x[e]
		}
		for i, v := range f(vals) {
			out[rows[k][i]] = v
		}
	}
	return out
}

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// ONNX's definitions of the ops, on one row, in float64.
func onnxSoftmaxRow(log bool) func([]float64) []float64 {
	return func(v []float64) []float64 {
		m := math.Inf(-1)
		for _, x := range v {
			m = math.Max(m, x)
		}
		s := 0.0
		for _, x := range v {
			s += math.Exp(x - m)
		}
		out := make([]float64, len(v))
		for i, x := range v {
			if log {
				out[i] = x - m - math.Log(s)
			} else {
				out[i] = math.Exp(x-m) / s
			}
		}
		return out
	}
}

func onnxStandardize(eps float64, rms, mvn bool) func([]float64) []float64 {
	return func(v []float64) []float64 {
		m := meanOf(v)
		sq := make([]float64, len(v))
		for i, x := range v {
			sq[i] = x * x
		}
		ms := meanOf(sq)
		out := make([]float64, len(v))
		for i, x := range v {
			switch {
			case rms:
				out[i] = x / math.Sqrt(ms+eps)
			case mvn:
				out[i] = (x - m) / (math.Sqrt(ms-m*m) + 1e-9)
			default:
				out[i] = (x - m) / math.Sqrt(ms-m*m+eps)
			}
		}
		return out
	}
}

func normedFrom(r int, from int) []bool {
	n := make([]bool, r)
	for i := from; i < r; i++ {
		n[i] = true
	}
	return n
}

func randomData(r *rand.Rand, n int, center float64) ([]float32, []float64) {
	x := make([]float32, n)
	x64 := make([]float64, n)
	for i := range x {
		x[i] = float32(center + r.NormFloat64())
		x64[i] = float64(x[i])
	}
	return x, x64
}

func checkClose(t *testing.T, what string, got []float32, want []float64, rel float64) {
	t.Helper()
	for i := range want {
		if !closeTo(float64(got[i]), want[i], rel) && math.Abs(float64(got[i])-want[i]) > rel {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestONNXNormAgainstDefinitions: each op type at the opsets where its
// definition differs, against ONNX's definition written in float64.
func TestONNXNormAgainstDefinitions(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	dims := []int{2, 3, 4, 5}
	n := product(int64sOf(dims))
	x, x64 := randomData(r, n, 0)
	node := func(op string, opset int) reduce.ONNXNorm {
		nd, err := reduce.NewONNXNorm(op, opset)
		if err != nil {
			t.Fatal(err)
		}
		return nd
	}
	y := make([]float32, n)
	run := func(nd reduce.ONNXNorm, scale, bias []float32, opts ...reduce.Option) {
		t.Helper()
		if err := reduce.RunONNXNorm(nd, y, x, scale, bias, dims, opts...); err != nil {
			t.Fatalf("%s at opset %d: %v", nd.OpType, nd.Opset, err)
		}
	}

	// Softmax before 13: the 2-D coercion at axis 1 (default); from 13
	// the one axis (default -1). LogSoftmax likewise.
	for _, op := range []string{"Softmax", "LogSoftmax"} {
		log := op == "LogSoftmax"
		run(node(op, 11), nil, nil)
		checkClose(t, op+" opset 11", y, onnxRows(x64, dims, normedFrom(4, 1), onnxSoftmaxRow(log)), 1e-5)
		nd := node(op, 1)
		nd.Axis = 2
		run(nd, nil, nil)
		checkClose(t, op+" opset 1 axis 2", y, onnxRows(x64, dims, normedFrom(4, 2), onnxSoftmaxRow(log)), 1e-5)
		run(node(op, 13), nil, nil)
		checkClose(t, op+" opset 13", y, onnxRows(x64, dims, normedFrom(4, 3), onnxSoftmaxRow(log)), 1e-5)
		nd = node(op, 13)
		nd.Axis = 1
		run(nd, nil, nil)
		checkClose(t, op+" opset 13 axis 1", y, onnxRows(x64, dims, []bool{false, true, false, false}, onnxSoftmaxRow(log)), 1e-5)
	}

	// LayerNormalization from axis 2, with Scale, B, Mean and InvStdDev.
	ln := node("LayerNormalization", 17)
	ln.Axis = -2
	scale, s64 := randomData(r, 20, 1)
	bias, b64 := randomData(r, 20, 0)
	mean, inv := make([]float32, 6), make([]float32, 6)
	run(ln, scale, bias, reduce.Stats(mean, inv))
	want := onnxRows(x64, dims, normedFrom(4, 2), onnxStandardize(1e-5, false, false))
	for i := range want {
		want[i] = want[i]*s64[i%20] + b64[i%20]
	}
	checkClose(t, "LayerNormalization", y, want, 1e-5)
	for row := range 6 {
		v := x64[row*20 : row*20+20]
		m := meanOf(v)
		va := 0.0
		for _, e := range v {
			va += (e - m) * (e - m) / 20
		}
		checkClose(t, "LayerNormalization Mean", mean[row:row+1], []float64{m}, 1e-5)
		checkClose(t, "LayerNormalization InvStdDev", inv[row:row+1], []float64{1 / math.Sqrt(va+1e-5)}, 1e-5)
	}

	// RMSNormalization (opset 23) over the last dim.
	rms := node("RMSNormalization", 23)
	run(rms, scale[:5], nil)
	want = onnxRows(x64, dims, normedFrom(4, 3), onnxStandardize(1e-5, true, false))
	for i := range want {
		want[i] *= s64[i%5]
	}
	checkClose(t, "RMSNormalization", y, want, 1e-5)

	// GroupNormalization: 6 channels in 2 groups; opset 18's scale and
	// bias per group, 21's per channel.
	gdims := []int{2, 6, 4, 5}
	gn := product(int64sOf(gdims))
	gx, gx64 := randomData(r, gn, 3)
	gy := make([]float32, gn)
	chScale, c64 := randomData(r, 6, 1)
	chBias, cb64 := randomData(r, 6, 0)
	for _, opset := range []int{18, 21} {
		nd := node("GroupNormalization", opset)
		nd.NumGroups = 2
		sc, bi := chScale, chBias
		if opset == 18 {
			sc, bi = chScale[:2], chBias[:2]
		}
		if err := reduce.RunONNXNorm(nd, gy, gx, sc, bi, gdims); err != nil {
			t.Fatalf("GroupNormalization opset %d: %v", opset, err)
		}
		// Groups of 3 channels: dims [2, 2, 3*20], the last normalized.
		want := onnxRows(gx64, []int{2, 2, 60}, []bool{false, false, true}, onnxStandardize(1e-5, false, false))
		for i := range want {
			c := i / 20 % 6
			if opset == 18 {
				want[i] = want[i]*c64[c/3] + cb64[c/3]
			} else {
				want[i] = want[i]*c64[c] + cb64[c]
			}
		}
		checkClose(t, "GroupNormalization", gy, want, 1e-5)
	}

	// InstanceNormalization: each channel over the spatial dims.
	in := node("InstanceNormalization", 6)
	if err := reduce.RunONNXNorm(in, gy, gx, chScale, chBias, gdims); err != nil {
		t.Fatal(err)
	}
	want = onnxRows(gx64, []int{12, 20}, []bool{false, true}, onnxStandardize(1e-5, false, false))
	for i := range want {
		c := i / 20 % 6
		want[i] = want[i]*c64[c] + cb64[c]
	}
	checkClose(t, "InstanceNormalization", gy, want, 1e-5)

	// LpNormalization: p 1 over axis 1, p 2 over the last (default);
	// no epsilon.
	for _, p := range []int64{1, 2} {
		lp := node("LpNormalization", 1)
		lp.P = p
		if p == 1 {
			lp.Axis = 1
		}
		run(lp, nil, nil)
		normed := normedFrom(4, 3)
		if p == 1 {
			normed = []bool{false, true, false, false}
		}
		want := onnxRows(x64, dims, normed, func(v []float64) []float64 {
			s := 0.0
			for _, e := range v {
				s += math.Pow(math.Abs(e), float64(p))
			}
			s = math.Pow(s, 1/float64(p))
			out := make([]float64, len(v))
			for i, e := range v {
				out[i] = e / s
			}
			return out
		})
		checkClose(t, "LpNormalization", y, want, 1e-5)
	}

	// MeanVarianceNormalization over the default axes [0, 2, 3] (per
	// channel), and over [-1].
	mvx, mvx64 := randomData(r, n, 0)
	mvn := node("MeanVarianceNormalization", 13)
	if err := reduce.RunONNXNorm(mvn, y, mvx, []float32(nil), nil, dims); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "MeanVarianceNormalization", y, onnxRows(mvx64, dims, []bool{true, false, true, true}, onnxStandardize(0, false, true)), 1e-5)
	mvn.Axes = []int64{-1}
	if err := reduce.RunONNXNorm(mvn, y, mvx, []float32(nil), nil, dims); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "MeanVarianceNormalization axes [-1]", y, onnxRows(mvx64, dims, normedFrom(4, 3), onnxStandardize(0, false, true)), 1e-5)
	// A constant row: 0 / (0 + 1e-9) = 0.
	c := []float32{2, 2, 2, 2}
	cy := make([]float32, 4)
	mvn.Axes = nil
	if err := reduce.RunONNXNorm(mvn, cy, c, []float32(nil), nil, []int{4}); err != nil || cy[0] != 0 || cy[3] != 0 {
		t.Fatalf("MVN of a constant: %v, %v", cy, err)
	}
	// LpNormalization of a row of 0s: 0/0.
	z := make([]float32, 4)
	lp := node("LpNormalization", 22)
	if err := reduce.RunONNXNorm(lp, cy, z, []float32(nil), nil, []int{1, 4}); err != nil || !math.IsNaN(float64(cy[0])) {
		t.Fatalf("LpNormalization of 0s: %v, %v", cy, err)
	}
	// bf16 data through Type and ParamType.
	xb := make([]uint16, 20)
	sb := make([]uint16, 5)
	for i := range xb {
		xb[i] = dtypes.F32ToBF16(x[i])
	}
	for i := range sb {
		sb[i] = dtypes.F32ToBF16(1)
	}
	yb := make([]uint16, 20)
	if err := reduce.RunONNXNorm(rms, yb, xb, sb, nil, []int{4, 5}, reduce.Type(dtypes.BF16), reduce.ParamType(dtypes.BF16)); err != nil {
		t.Fatal(err)
	}
}

// TestONNXNormRefusals: every node or input ONNX does not define, or
// gdnn does not run, is an error with its status.
func TestONNXNormRefusals(t *testing.T) {
	x := make([]float32, 24)
	y := make([]float32, 24)
	dims := []int{2, 3, 4}
	node := func(op string, opset int, set func(*reduce.ONNXNorm)) reduce.ONNXNorm {
		nd := reduce.ONNXNorm{OpType: op, Opset: opset, Axis: -1, Epsilon: 1e-5, StashType: 1, P: 2}
		if set != nil {
			set(&nd)
		}
		return nd
	}
	three := []float32{1, 1, 1}
	for _, c := range []struct {
		name  string
		nd    reduce.ONNXNorm
		scale []float32
		bias  []float32
		opts  []reduce.Option
		is    error
		text  string
	}{
		{"unknown op", node("BatchNormalization", 15, nil), nil, nil, nil, graph.InvalidArguments, "not an ONNX normalization"},
		{"before the op", node("LayerNormalization", 16, nil), three, nil, nil, graph.InvalidArguments, "exists from opset 17"},
		{"RMS before 23", node("RMSNormalization", 22, nil), three, nil, nil, graph.InvalidArguments, "from opset 23"},
		{"future opset", node("Softmax", 99, nil), nil, nil, nil, graph.Unimplemented, "opset 99"},
		{"no scale", node("LayerNormalization", 17, nil), nil, nil, nil, graph.InvalidArguments, "scale input is required"},
		{"no bias", node("InstanceNormalization", 6, nil), three, nil, nil, graph.InvalidArguments, "bias input is required"},
		{"softmax scale", node("Softmax", 13, nil), three, nil, nil, graph.InvalidArguments, "no scale or bias"},
		{"stash_type", node("LayerNormalization", 17, func(n *reduce.ONNXNorm) { n.StashType = 11 }), make([]float32, 4), nil, nil, graph.Unimplemented, "stash_type 11"},
		{"scale size", node("LayerNormalization", 17, nil), three, nil, nil, graph.InvalidShape, "gamma holds 3"},
		{"InvStdDev size", node("LayerNormalization", 17, nil), make([]float32, 4), nil, []reduce.Option{reduce.Stats(make([]float32, 6), make([]float32, 5))},
			graph.InvalidArguments, "Stats: Mean holds 6 values and InvStdDev 5; there are 6 rows"},
		{"num_groups", node("GroupNormalization", 21, func(n *reduce.ONNXNorm) { n.NumGroups = 2 }), three, three, nil, graph.InvalidArguments, "num_groups 2"},
		{"num_groups 0", node("GroupNormalization", 21, nil), three, three, nil, graph.InvalidArguments, "num_groups 0"},
		{"opset 18 per channel", node("GroupNormalization", 18, func(n *reduce.ONNXNorm) { n.NumGroups = 1 }), three, three, nil, graph.InvalidShape, "one value per group"},
		{"opset 18 bias per channel", node("GroupNormalization", 18, func(n *reduce.ONNXNorm) { n.NumGroups = 3 }), three, []float32{1, 1}, nil, graph.InvalidShape,
			"bias holds 2 values; at opset 18 scale and bias hold one value per group: 3"},
		{"opset 18 scale per channel", node("GroupNormalization", 18, func(n *reduce.ONNXNorm) { n.NumGroups = 3 }), []float32{1}, three, nil, graph.InvalidShape,
			"scale holds 1 values; at opset 18"},
		{"p 3", node("LpNormalization", 1, func(n *reduce.ONNXNorm) { n.P = 3 }), nil, nil, nil, graph.InvalidArguments, "p is 3"},
		{"axis", node("Softmax", 13, func(n *reduce.ONNXNorm) { n.Axis = 3 }), nil, nil, nil, graph.InvalidArguments, "out of range"},
		{"coerced axis", node("Softmax", 11, func(n *reduce.ONNXNorm) { n.Axis = -4 }), nil, nil, nil, graph.InvalidArguments, "out of range"},
		{"coerced strides", node("Softmax", 11, nil), nil, nil, []reduce.Option{reduce.SrcStrides([]int{12, 4, 1})}, graph.Unimplemented, "2-D coercion"},
		{"MVN axes", node("MeanVarianceNormalization", 13, func(n *reduce.ONNXNorm) { n.Axes = []int64{0, 0} }), nil, nil, nil, graph.InvalidArguments, "repeated"},
		{"MVN strides", node("MeanVarianceNormalization", 13, func(n *reduce.ONNXNorm) { n.Axes = []int64{1} }), nil, nil, []reduce.Option{reduce.DstStrides([]int{12, 4, 1})}, graph.Unimplemented, "strides"},
		{"Stats on softmax", node("Softmax", 13, nil), nil, nil, []reduce.Option{reduce.Stats(nil, nil)}, graph.InvalidArguments, "Mean and InvStdDev"},
		{"InfAsZero", node("Softmax", 13, nil), nil, nil, []reduce.Option{reduce.InfAsZero(true)}, graph.InvalidArguments,
			"option 0: RunONNXNorm does not take InfAsZero; ONNX's Softmax has no such attribute"},
		{"SoftmaxStats", node("Softmax", 13, nil), nil, nil, []reduce.Option{reduce.KeepDims(false), reduce.SoftmaxStats(make([]float32, 6))}, graph.InvalidArguments,
			"option 1: RunONNXNorm does not take SoftmaxStats; ONNX's Softmax has no such output"},
		{"InfAsZero on LogSoftmax", node("LogSoftmax", 13, nil), nil, nil, []reduce.Option{reduce.InfAsZero(false)}, graph.InvalidArguments,
			"RunONNXNorm does not take InfAsZero; ONNX's LogSoftmax has no such attribute"},
		{"epsilon NaN", node("RMSNormalization", 23, func(n *reduce.ONNXNorm) { n.Epsilon = float32(math.NaN()) }), make([]float32, 4), nil, nil, graph.InvalidArguments, "epsilon is NaN"},
	} {
		err := reduce.RunONNXNorm(c.nd, y, x, c.scale, c.bias, dims, c.opts...)
		if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, err, c.is, c.text)
		}
	}
	if _, err := reduce.NewONNXNorm("LayerNormalization", 16); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("NewONNXNorm before the op: %v", err)
	}
	// Dims the 2-D coercion and GroupNormalization's per-group scale
	// compute with before any other check: negative, overflowing, or
	// more elements than x holds, or than y holds where x is strided (a
	// per-channel scale of huge values would be allocated). huge is 2^62
	// where int has 64 bits.
	one := []float32{1}
	huge := math.MaxInt/2 + 1
	for _, c := range []struct {
		name string
		nd   reduce.ONNXNorm
		dims []int
		text string
		opts []reduce.Option
	}{
		{"coerced negative", node("Softmax", 11, func(n *reduce.ONNXNorm) { n.Axis = 2 }), []int{-2, -2, 6}, "is -2 (negative)", nil},
		{"coerced wrap", node("LogSoftmax", 1, func(n *reduce.ONNXNorm) { n.Axis = 1 }), []int{1, huge + 1, 4}, "dims", nil},
		{"coerced wrap to 0", node("Softmax", 11, func(n *reduce.ONNXNorm) { n.Axis = 1 }), []int{1, huge, huge}, "dims", nil},
		{"coerced too many", node("Softmax", 11, nil), []int{5, 5}, "hold 25 elements; x holds 24", nil},
		{"groups of huge channels", node("GroupNormalization", 18, func(n *reduce.ONNXNorm) { n.NumGroups = 1 }), []int{1, huge}, "x holds 24", nil},
		{"groups of huge channels, strided x", node("GroupNormalization", 18, func(n *reduce.ONNXNorm) { n.NumGroups = 1 }), []int{1, huge}, "y holds 24",
			[]reduce.Option{reduce.SrcStrides([]int{0, 0})}},
		{"groups of more channels than y, strided x", node("GroupNormalization", 18, func(n *reduce.ONNXNorm) { n.NumGroups = 1 }), []int{1, 25}, "y holds 24",
			[]reduce.Option{reduce.SrcStrides([]int{25, 1})}},
		{"groups negative", node("GroupNormalization", 18, func(n *reduce.ONNXNorm) { n.NumGroups = 1 }), []int{-1, 4, 6}, "is -1 (negative)", nil},
	} {
		err := reduce.RunONNXNorm(c.nd, y, x, one, one, c.dims, c.opts...)
		if c.nd.OpType != "GroupNormalization" {
			err = reduce.RunONNXNorm(c.nd, y, x, []float32(nil), nil, c.dims, c.opts...)
		}
		// Slices too short are InvalidArguments, as every call's; dims
		// that are no shape InvalidShape.
		want := graph.InvalidShape
		if strings.Contains(c.text, "holds") {
			want = graph.InvalidArguments
		}
		if !errors.Is(err, want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, err, want, c.text)
		}
	}
}

// TestONNXAxisPastInt32 checks that an ONNX axis attribute int cannot
// hold on a 32-bit platform is refused there as on 64-bit ones, not
// truncated into range (2^32+1 to 1, -2^32+1 to 1): out of range for
// every rank.
func TestONNXAxisPastInt32(t *testing.T) {
	x := make([]float32, 24)
	y := make([]float32, 24)
	dims := []int{2, 3, 4}
	for _, axis := range []int64{1<<32 + 1, -1<<32 + 1} {
		for _, c := range []struct {
			op    string
			opset int
			scale []float32
		}{
			{"Softmax", 13, nil}, {"LogSoftmax", 13, nil}, {"LayerNormalization", 17, make([]float32, 12)},
			{"RMSNormalization", 23, make([]float32, 12)}, {"LpNormalization", 1, nil},
		} {
			nd, err := reduce.NewONNXNorm(c.op, c.opset)
			if err != nil {
				t.Fatal(err)
			}
			nd.Axis = axis
			err = reduce.RunONNXNorm(nd, y, x, c.scale, nil, dims)
			if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("%s axis %d: %v, want InvalidArguments, out of range", c.op, axis, err)
			}
		}
		for _, op := range []string{"ArgMax", "ArgMin"} {
			nd, err := reduce.NewONNXArgNode(op, 13)
			if err != nil {
				t.Fatal(err)
			}
			nd.Axis = axis
			err = reduce.RunONNXArg(nd, make([]int64, 24), x, dims)
			if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("%s axis %d: %v, want InvalidArguments, out of range", op, axis, err)
			}
			if _, err := nd.DstDims(dims); !errors.Is(err, graph.InvalidArguments) {
				t.Errorf("%s.DstDims axis %d: %v, want InvalidArguments", op, axis, err)
			}
		}
	}
}
