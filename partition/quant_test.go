package partition

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/shape"
)

// qcase is one random int8 graph: src (s8/u8) -> Dequantize -> Reduce* ->
// [ReLU] [-> Add(operand)] [-> Quantize].
type qcase struct {
	srcDT      dtypes.DataType
	dims       []int64
	axes       []int64
	reduce     []bool
	keep       bool
	kind       graph.OpKind
	dqScales   []float32
	dqZps      []int64
	dqAxis     int // -1: per tensor
	relu       bool
	add        bool // Add of a per-output f32 operand
	quant      bool
	qDT        dtypes.DataType
	qScales    []float32
	qZps       []int64
	qAxis      int // on the output dims; -1: per tensor
	outDims    []int64
	srcVals    []int64 // dense row-major
	srcStrides []int64 // the src layout: nil dense, else permuted and padded
	addOperand []float32
}

func randQCase(r *rand.Rand) qcase {
	var c qcase
	c.srcDT = []dtypes.DataType{dtypes.S8, dtypes.U8}[r.IntN(2)]
	rank := 1 + r.IntN(4)
	for range rank {
		c.dims = append(c.dims, int64(1+r.IntN(7)))
	}
	c.reduce = make([]bool, rank)
	for i := range rank {
		if r.IntN(2) == 0 {
			c.reduce[i] = true
			c.axes = append(c.axes, int64(i)-int64(rank*r.IntN(2))) // sometimes negative
		}
	}
	if len(c.axes) == 0 {
		c.reduce[rank-1] = true
		c.axes = []int64{int64(rank - 1)}
	}
	c.keep = r.IntN(2) == 0
	c.kind = []graph.OpKind{graph.ReduceMean, graph.ReduceSum, graph.ReduceMax, graph.ReduceMin, graph.ReduceL1, graph.ReduceL2}[r.IntN(6)]
	lpNorm := c.kind == graph.ReduceL1 || c.kind == graph.ReduceL2
	scale := func() float32 {
		s := float32(math.Ldexp(0.5+r.Float64(), -r.IntN(8)))
		if r.IntN(4) == 0 && !lpNorm {
			s = -s
		}
		return s
	}
	zp := func(dt dtypes.DataType) int64 {
		if lpNorm && dt == c.srcDT || r.IntN(3) == 0 {
			return 0
		}
		if dt == dtypes.U8 {
			return int64(r.IntN(256))
		}
		return int64(r.IntN(256) - 128)
	}
	// Per-channel dequantize along a kept dim.
	c.dqAxis = -1
	var kept []int
	for i, red := range c.reduce {
		if !red {
			kept = append(kept, i)
		}
	}
	n := 1
	if len(kept) > 0 && r.IntN(2) == 0 {
		c.dqAxis = kept[r.IntN(len(kept))]
		n = int(c.dims[c.dqAxis])
	}
	sign := float32(1)
	if r.IntN(3) == 0 && !lpNorm {
		sign = -1 // max/min need one sign over the channels
	}
	for range n {
		s := scale()
		if c.dqAxis >= 0 {
			s = sign * float32(math.Abs(float64(s)))
		}
		c.dqScales = append(c.dqScales, s)
		c.dqZps = append(c.dqZps, zp(c.srcDT))
	}
	c.relu = r.IntN(3) == 0
	c.add = r.IntN(4) == 0
	c.quant = r.IntN(3) != 0
	c.outDims = shape.ReduceDims(c.dims, c.reduce, c.keep)
	c.qAxis = -1
	if c.quant {
		c.qDT = []dtypes.DataType{dtypes.S8, dtypes.U8}[r.IntN(2)]
		n := 1
		if len(c.outDims) > 0 && r.IntN(2) == 0 {
			c.qAxis = r.IntN(len(c.outDims))
			n = int(c.outDims[c.qAxis])
		}
		for range n {
			c.qScales = append(c.qScales, float32(math.Ldexp(0.5+r.Float64(), -r.IntN(6))))
			c.qZps = append(c.qZps, zp(c.qDT))
		}
	}
	size := int64(1)
	for _, d := range c.dims {
		size *= d
	}
	for range size {
		if c.srcDT == dtypes.U8 {
			c.srcVals = append(c.srcVals, int64(r.IntN(256)))
		} else {
			c.srcVals = append(c.srcVals, int64(r.IntN(256)-128))
		}
	}
	if r.IntN(2) == 0 {
		// A permuted (NHWC-like) layout with padding between dims.
		order := r.Perm(rank)
		c.srcStrides = make([]int64, rank)
		st := int64(1)
		for k := rank - 1; k >= 0; k-- {
			d := order[k]
			c.srcStrides[d] = st
			st = st*c.dims[d] + int64(r.IntN(2))
		}
	}
	outSize := 1
	for _, d := range c.outDims {
		outSize *= int(d)
	}
	for range outSize {
		c.addOperand = append(c.addOperand, float32(r.NormFloat64()))
	}
	return c
}

func (c qcase) String() string {
	return fmt.Sprintf("%s %v strides %v axes %v keep %v %s dq s%v zp%v axis %d relu %v add %v quant %v %s s%v zp%v axis %d",
		c.srcDT, c.dims, c.srcStrides, c.axes, c.keep, c.kind, c.dqScales, c.dqZps, c.dqAxis, c.relu, c.add, c.quant, c.qDT, c.qScales, c.qZps, c.qAxis)
}

// graph builds the case's graph: tensors 0 src, 1 dequantized, 2 reduced,
// 3 after ReLU, 4 the Add operand, 5 after Add, 9 quantized.
func (c qcase) graph(t *testing.T) (*graph.Graph, graph.LogicalTensor) {
	t.Helper()
	g := graph.New()
	add := func(op *graph.Op) {
		t.Helper()
		if err := g.AddOp(op); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	src := graph.NewLogicalTensor(0, c.srcDT, c.dims)
	cur := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	dq := graph.NewOp(0, graph.Dequantize, "dq").AddInput(src).AddOutput(cur).
		SetAttr("scales", c.dqScales).SetAttr("zps", c.dqZps)
	if c.dqAxis >= 0 {
		dq.SetAttr("qtype", "per_channel").SetAttr("axis", c.dqAxis)
	}
	add(dq)
	next := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
	add(graph.NewOp(1, c.kind, "red").AddInput(cur).AddOutput(next).SetAttr("axes", c.axes).SetAttr("keep_dims", c.keep))
	cur = next
	if c.relu {
		next = graph.NewLogicalTensorAny(3, dtypes.F32, nil)
		add(graph.NewOp(2, graph.ReLU, "relu").AddInput(cur).AddOutput(next))
		cur = next
	}
	if c.add {
		next = graph.NewLogicalTensorAny(5, dtypes.F32, nil)
		add(graph.NewOp(3, graph.Add, "add").AddInput(cur).AddInput(graph.NewLogicalTensor(4, dtypes.F32, c.outDims)).AddOutput(next))
		cur = next
	}
	if c.quant {
		next = graph.NewLogicalTensorAny(9, c.qDT, nil)
		q := graph.NewOp(4, graph.Quantize, "q").AddInput(cur).AddOutput(next).SetAttr("scales", c.qScales).SetAttr("zps", c.qZps)
		if c.qAxis >= 0 {
			q.SetAttr("qtype", "per_channel").SetAttr("axis", c.qAxis)
		}
		add(q)
		cur = next
	}
	if err := g.Finalize(); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	return g, cur
}

// reference runs the unfused graph as oneDNN Graph specifies each op:
// Dequantize in f32, the reduction in float64 over the f32 values
// (rounded once to f32), the post-ops in f32, Quantize in f32. It returns
// the f32 values before the Quantize's rounding (the pre-rounding
// quantized value where the case quantizes), in row-major output order.
func (c qcase) reference() []float64 {
	rank := len(c.dims)
	kept := make([]int64, rank)
	for i, d := range c.dims {
		kept[i] = d
		if c.reduce[i] {
			kept[i] = 1
		}
	}
	nOut := int64(1)
	for _, d := range kept {
		nOut *= d
	}
	acc := make([]float64, nOut)
	cnt := make([]float64, nOut)
	for i := range acc {
		switch c.kind {
		case graph.ReduceMax:
			acc[i] = math.Inf(-1)
		case graph.ReduceMin:
			acc[i] = math.Inf(1)
		}
	}
	keptStrides := graph.DenseStrides(kept)
	srcStrides := graph.DenseStrides(c.dims)
	forEachIndex(c.dims, func(idx []int64) {
		o := int64(0)
		for i, x := range idx {
			if !c.reduce[i] {
				o += x * keptStrides[i]
			}
		}
		ch := 0
		if c.dqAxis >= 0 {
			ch = int(idx[c.dqAxis])
		}
		x := c.srcVals[offset(idx, srcStrides)]
		v := float64(float32(float32(x-c.dqZps[ch]) * c.dqScales[ch]))
		switch c.kind {
		case graph.ReduceMean, graph.ReduceSum:
			acc[o] += v
		case graph.ReduceMax:
			acc[o] = math.Max(acc[o], v)
		case graph.ReduceMin:
			acc[o] = math.Min(acc[o], v)
		case graph.ReduceL1:
			acc[o] += math.Abs(v)
		case graph.ReduceL2:
			acc[o] += v * v
		}
		cnt[o]++
	})
	res := make([]float64, 0, nOut)
	forEachIndex(c.outDims, func(oidx []int64) {
		i := len(res)
		v := acc[i]
		switch c.kind {
		case graph.ReduceMean:
			v /= cnt[i]
		case graph.ReduceL2:
			v = math.Sqrt(v)
		}
		f := float32(v)
		if c.relu {
			f = max(f, 0)
		}
		if c.add {
			f += c.addOperand[i]
		}
		if c.quant {
			ch := 0
			if c.qAxis >= 0 {
				ch = int(oidx[c.qAxis])
			}
			f = f/c.qScales[ch] + float32(c.qZps[ch])
		}
		res = append(res, float64(f))
	})
	return res
}

// checkQuantOutput compares an integer dst with the pre-rounding
// reference u: exactly round-half-even(u), saturated, where u is not
// within tol of a rounding tie; within 1 of it where it is (the fused
// maps round differently from the unfused ops in the last bits of f32).
func checkQuantOutput(t *testing.T, c qcase, got []int64, want []float64) {
	t.Helper()
	lo, hi := -128.0, 127.0
	if c.qDT == dtypes.U8 {
		lo, hi = 0, 255
	}
	for i, u := range want {
		exact := math.Max(lo, math.Min(hi, math.RoundToEven(u)))
		frac := math.Abs(u - math.Floor(u) - 0.5)
		tol := 1e-4 * math.Max(1, math.Abs(u))
		ok := float64(got[i]) == exact
		if !ok && frac <= tol {
			ok = math.Abs(float64(got[i])-exact) <= 1
		}
		if !ok {
			t.Fatalf("%v: dst[%d] = %d, want %v (pre-rounding %v)", c, i, got[i], exact, u)
		}
	}
}

// checkFloatOutput compares an f32 dst with the reference, within a
// relative 1e-5 of the largest magnitude the reduction may pass through
// (the fused map shifts the integers' result, the unfused graph each
// element).
func checkFloatOutput(t *testing.T, c qcase, got []float32, want []float64) {
	t.Helper()
	span := 0.0
	for i, s := range c.dqScales {
		span = max(span, math.Abs(float64(s))*(256+math.Abs(float64(c.dqZps[i]))))
	}
	if c.kind == graph.ReduceSum || c.kind == graph.ReduceL1 || c.kind == graph.ReduceL2 {
		n := 1.0
		for i, d := range c.dims {
			if c.reduce[i] {
				n *= float64(d)
			}
		}
		span *= n
	}
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); !(d <= 1e-5*(span+math.Abs(w))+1e-6) {
			t.Fatalf("%v: dst[%d] = %v, want %v (|diff| %g)", c, i, got[i], w, d)
		}
	}
}

// runQCase partitions, compiles and executes the case's graph and
// returns the one partition and the dst values.
func runQCase(t *testing.T, c qcase) (*Partition, *CompiledPartition, []float64) {
	t.Helper()
	g, dst := c.graph(t)
	parts, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	p := parts[0]
	if len(parts) != 1 || !p.IsSupported() {
		t.Fatalf("%v: %d partitions, first %v; want one fused partition", c, len(parts), p)
	}
	srcLT := graph.NewLogicalTensor(0, c.srcDT, c.dims)
	if c.srcStrides != nil {
		srcLT.Strides = c.srcStrides
	}
	inputs := p.Inputs()
	inputs[0] = srcLT
	cp, err := p.Compile(inputs, p.Outputs())
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	out, err := cp.QueryLogicalTensor(dst.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The src bytes laid out with its strides; gaps hold 0x55, which no
	// result may read.
	span, err := MemSize(srcLT)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, span)
	for i := range raw {
		raw[i] = 0x55
	}
	strides := c.srcStrides
	if strides == nil {
		strides = graph.DenseStrides(c.dims)
	}
	dense := graph.DenseStrides(c.dims)
	forEachIndex(c.dims, func(idx []int64) {
		raw[offset(idx, strides)] = byte(c.srcVals[offset(idx, dense)])
	})
	var srcData any = raw
	if c.srcDT == dtypes.S8 {
		s := make([]int8, len(raw))
		for i, v := range raw {
			s[i] = int8(v)
		}
		srcData = s
	}
	ins := []Tensor{mustNewTensor(t, srcLT, srcData)}
	if c.add {
		ins = append(ins, mustNewTensor(t, graph.NewLogicalTensor(4, dtypes.F32, c.outDims), c.addOperand))
	}
	n := out.NumElements()
	var res []float64
	switch out.DataType {
	case dtypes.F32:
		d := make([]float32, n)
		if err := cp.Execute(ins, []Tensor{mustNewTensor(t, out, d)}); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		for _, v := range d {
			res = append(res, float64(v))
		}
	case dtypes.U8:
		d := make([]uint8, n)
		if err := cp.Execute(ins, []Tensor{mustNewTensor(t, out, d)}); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		for _, v := range d {
			res = append(res, float64(v))
		}
	case dtypes.S8:
		d := make([]int8, n)
		if err := cp.Execute(ins, []Tensor{mustNewTensor(t, out, d)}); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		for _, v := range d {
			res = append(res, float64(v))
		}
	}
	return p, cp, res
}

func mustNewTensor(t *testing.T, lt graph.LogicalTensor, data any) Tensor {
	t.Helper()
	x, err := NewTensor(lt, data)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestInt8FusedMatchesUnfused: random Dequantize -> Reduce* [-> ReLU]
// [-> Add] [-> Quantize] graphs fuse into one partition whose results
// match the float64/f32 reference of the unfused graph, on every ISA cap.
func TestInt8FusedMatchesUnfused(t *testing.T) {
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(24, uint64(isa)))
		runs := 300
		if testing.Short() {
			runs = 60
		}
		for range runs {
			c := randQCase(r)
			g, _ := c.graph(t)
			parts, err := Get(g, Fusion)
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) != 1 {
				// Only the binary budget may keep ops apart here: a
				// Dequantize and a Quantize around an Add each need
				// their own maps.
				if !strings.Contains(parts[0].Reason()+fmt.Sprint(parts), "binary post-ops") {
					t.Fatalf("%v: partitions %v", c, parts)
				}
				continue
			}
			_, _, got := runQCase(t, c)
			want := c.reference()
			if len(got) != len(want) {
				t.Fatalf("%v: %d values, want %d", c, len(got), len(want))
			}
			if c.quant {
				ints := make([]int64, len(got))
				for i, v := range got {
					ints[i] = int64(v)
				}
				checkQuantOutput(t, c, ints, want)
			} else {
				f := make([]float32, len(got))
				for i, v := range got {
					f[i] = float32(v)
				}
				checkFloatOutput(t, c, f, want)
			}
		}
	})
}

// TestInt8GAPVerbose: the u8 global average pool is one partition; its
// verbose line names the fused ops and what the maps became.
func TestInt8GAPVerbose(t *testing.T) {
	c := qcase{srcDT: dtypes.U8, dims: []int64{2, 3, 3, 4}, axes: []int64{1, 2}, reduce: []bool{false, true, true, false},
		keep: true, kind: graph.ReduceMean, dqScales: []float32{0.5}, dqZps: []int64{10}, dqAxis: -1,
		quant: true, qDT: dtypes.U8, qScales: []float32{0.25}, qZps: []int64{3}, qAxis: -1}
	c.outDims = shape.ReduceDims(c.dims, c.reduce, c.keep)
	for i := range 72 {
		c.srcVals = append(c.srcVals, int64(i*7%256))
	}
	p, cp, got := runQCase(t, c)
	if s := p.String(); s != "partition 0 [Dequantize(0) -> ReduceMean(1) -> Quantize(4)] supported" {
		t.Errorf("partition %s", s)
	}
	line := cp.verboseLine(0)
	for _, want := range []string{"u8:2x3x3x4", "dst_u8:2x1x1x4", "alg:mean", "dequant:u8/scale:0.5/zp:10", "quant:u8/scale:0.25/zp:3", "folded", "Dequantize+ReduceMean+Quantize"} {
		if !strings.Contains(line, want) {
			t.Errorf("verbose line %q lacks %q", line, want)
		}
	}
	want := c.reference()
	ints := make([]int64, len(got))
	for i, v := range got {
		ints[i] = int64(v)
	}
	checkQuantOutput(t, c, ints, want)
}

// TestInt8FoldPastF32: a Dequantize and a Quantize whose scales' quotient
// passes f32's range are not folded into one map (0 * Inf would make a
// zero difference NaN, stored as 0): the two maps give the zero point,
// as the unfused graph does, on every ISA.
func TestInt8FoldPastF32(t *testing.T) {
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, c := range []struct {
			kind   graph.OpKind
			vals   []int64
			dqS    float32
			dqZ    int64
			qS     float32
			qZ     int64
			qDT    dtypes.DataType
			want   int64
			folded bool
		}{
			{graph.ReduceMean, []int64{7, 7, 7, 7}, 1, 7, 1e-45, 5, dtypes.U8, 5, false},
			{graph.ReduceSum, []int64{7, 7, 7, 7}, 1, 7, 1e-45, 5, dtypes.U8, 5, false},
			{graph.ReduceMax, []int64{7, 7, 7, 7}, 1e30, 7, 1e-10, 3, dtypes.U8, 3, false},
			{graph.ReduceMax, []int64{7, 7, 7, 7}, 1, 7, 1e-40, 3, dtypes.U8, 3, false},
			{graph.ReduceMax, []int64{7, 8, 7, 7}, 1, 7, 1e-40, 3, dtypes.U8, 255, false},
			{graph.ReduceMean, []int64{7, 7, 7, 7}, 1, 7, 0.5, 5, dtypes.U8, 5, true},
		} {
			q := qcase{srcDT: dtypes.U8, dims: []int64{4}, axes: []int64{0}, reduce: []bool{true}, keep: true, kind: c.kind,
				dqScales: []float32{c.dqS}, dqZps: []int64{c.dqZ}, dqAxis: -1,
				quant: true, qDT: c.qDT, qScales: []float32{c.qS}, qZps: []int64{c.qZ}, qAxis: -1, srcVals: c.vals}
			q.outDims = shape.ReduceDims(q.dims, q.reduce, q.keep)
			_, cp, got := runQCase(t, q)
			if len(got) != 1 || int64(got[0]) != c.want {
				t.Errorf("%v %v dq %g/%d q %g/%d: %v, want %d", isa, c.kind, c.dqS, c.dqZ, c.qS, c.qZ, got, c.want)
			}
			if folded := strings.Contains(cp.verboseLine(0), "folded"); folded != c.folded {
				t.Errorf("%v %v dq %g q %g: folded %v, want %v", isa, c.kind, c.dqS, c.qS, folded, c.folded)
			}
		}
	})
}

// TestInt8NotFused: what does not lower stays apart, with a Reason that
// says why, and the rest still fuses where it can.
func TestInt8NotFused(t *testing.T) {
	base := func() qcase {
		c := qcase{srcDT: dtypes.S8, dims: []int64{4, 6}, axes: []int64{1}, reduce: []bool{false, true}, kind: graph.ReduceSum,
			dqScales: []float32{0.5}, dqZps: []int64{2}, dqAxis: -1, qAxis: -1}
		c.outDims = []int64{4}
		return c
	}
	cases := []struct {
		name   string
		edit   func(c *qcase)
		reason string
		parts  int
	}{
		{"prod", func(c *qcase) { c.kind = graph.ReduceProd }, "ReduceProd of dequantized data is not a map", 2},
		{"l1 zp", func(c *qcase) { c.kind = graph.ReduceL1 }, "ReduceL1 of (x - zp) * scale with zp 2", 2},
		{"l2 zp", func(c *qcase) { c.kind = graph.ReduceL2 }, "ReduceL2 of (x - zp) * scale with zp 2", 2},
		{"per-channel on reduced axis", func(c *qcase) {
			c.dqAxis, c.dqScales, c.dqZps = 1, []float32{1, 1, 1, 1, 1, 1}, []int64{0, 0, 0, 0, 0, 0}
		}, "per-channel axis 1 is reduced", 2},
		{"max mixed signs", func(c *qcase) {
			c.kind, c.dqAxis, c.dqScales, c.dqZps = graph.ReduceMax, 0, []float32{1, -1, 1, 1}, []int64{0, 0, 0, 0}
		}, "scales of both signs", 2},
	}
	for _, tc := range cases {
		c := base()
		tc.edit(&c)
		g, _ := c.graph(t)
		parts, err := Get(g, Fusion)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != tc.parts {
			t.Errorf("%s: %d partitions %v, want %d", tc.name, len(parts), parts, tc.parts)
			continue
		}
		var reasons []string
		for _, p := range parts {
			reasons = append(reasons, p.Reason())
		}
		all := strings.Join(reasons, " | ")
		if !strings.Contains(all, tc.reason) {
			t.Errorf("%s: reasons %q lack %q", tc.name, all, tc.reason)
		}
		// The Dequantize is alone and unsupported; the reduction's
		// partition is supported.
		if parts[0].IsSupported() || len(parts[0].Ops()) != 1 || parts[0].Ops()[0].Kind != graph.Dequantize {
			t.Errorf("%s: first partition %v, want the Dequantize alone", tc.name, parts[0])
		}
		if !parts[1].IsSupported() {
			t.Errorf("%s: %v should be supported", tc.name, parts[1])
		}
		if _, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs()); !errors.Is(err, graph.Unimplemented) {
			t.Errorf("%s: compiling the Dequantize alone: %v", tc.name, err)
		}
	}
	// Run-time axes and a ReduceSum with a zero point.
	g := graph.New()
	src := graph.NewLogicalTensor(0, dtypes.U8, []int64{2, 3})
	if err := g.AddOp(graph.NewOp(0, graph.Dequantize, "dq").AddInput(src).AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).
		SetAttr("scales", []float32{2}).SetAttr("zps", []int64{1})); err != nil {
		t.Fatal(err)
	}
	if err := g.AddOp(graph.NewOp(1, graph.ReduceSum, "sum").AddInput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).
		AddInput(graph.NewLogicalTensor(5, dtypes.S32, []int64{1})).AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil))); err != nil {
		t.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].IsSupported() || !strings.Contains(parts[0].Reason(), "N depends on axes that arrive at run time") {
		t.Errorf("run-time axes: %v", parts)
	}
	// A Quantize alone, and Debug: every op alone.
	for _, pol := range []Policy{Debug} {
		c := base()
		c.quant, c.qDT, c.qScales, c.qZps = true, dtypes.U8, []float32{1}, []int64{0}
		g, _ := c.graph(t)
		parts, _ := Get(g, pol)
		if len(parts) != 3 || parts[0].IsSupported() || parts[2].IsSupported() ||
			!strings.Contains(parts[0].Reason(), "Dequantize only fused before a reduction") ||
			!strings.Contains(parts[2].Reason(), "Quantize only fused after a reduction") {
			t.Errorf("debug: %v", parts)
		}
	}
}

// TestInt8FiveBinariesFuse: Dequantize's zero point and scale, an Add and
// Quantize's scale and zero point need five binary post-ops, within
// plan.MaxBinary (six): one partition, whose result matches the unfused
// reference (TestInt8FusedMatchesUnfused checks the values of such chains).
func TestInt8FiveBinariesFuse(t *testing.T) {
	c := qcase{}
	for r := rand.New(rand.NewPCG(5, 5)); ; {
		c = randQCase(r)
		if c.kind == graph.ReduceSum || c.kind == graph.ReduceMean {
			break
		}
	}
	c.dqAxis, c.dqScales, c.dqZps = -1, []float32{0.5}, []int64{2}
	c.relu, c.add, c.quant, c.qDT, c.qAxis, c.qScales, c.qZps = true, true, true, dtypes.S8, -1, []float32{3}, []int64{1}
	g, _ := c.graph(t)
	parts, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("%d partitions %v, want one supported", len(parts), parts)
	}
}

// TestInt8QuantizeAfterF32: an f32 reduction followed by a Quantize fuses
// (f32 src, 8-bit dst), per channel too.
func TestInt8QuantizeAfterF32(t *testing.T) {
	g := graph.New()
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{3, 5})
	mean := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	dst := graph.NewLogicalTensorAny(2, dtypes.S8, nil)
	for _, op := range []*graph.Op{
		graph.NewOp(0, graph.ReduceMean, "mean").AddInput(src).AddOutput(mean).SetAttr("axes", []int64{1}),
		graph.NewOp(1, graph.Quantize, "q").AddInput(mean).AddOutput(dst).SetAttr("qtype", "per_channel").SetAttr("axis", 0).
			SetAttr("scales", []float32{0.5, 0.25, 1}).SetAttr("zps", []int64{1, -3, 0}),
	} {
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil || len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("%v %v", parts, err)
	}
	cp, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cp.QueryLogicalTensor(2)
	x := []float32{1, 2, 3, 4, 5, -1, -2, -3, -4, -5, 100, 100, 100, 100, 200}
	y := make([]int8, 3)
	if err := cp.Execute([]Tensor{mustNewTensor(t, src, x)}, []Tensor{mustNewTensor(t, out, y)}); err != nil {
		t.Fatal(err)
	}
	// 3/0.5+1 = 7; -3/0.25-3 = -15; 120/1 = 120.
	if !slices.Equal(y, []int8{7, -15, 120}) {
		t.Errorf("got %v, want [7 -15 120]", y)
	}
}

// TestInt8CompileChecksChannels: a per-channel Dequantize over a dim the
// graph left unknown fuses, and Compile refuses concrete dims whose
// channel count differs from the scales (the constant operand would be
// read out of its bounds otherwise).
func TestInt8CompileChecksChannels(t *testing.T) {
	g := graph.New()
	src := graph.NewLogicalTensor(0, dtypes.U8, []int64{2, graph.UnknownDim})
	deq := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	for _, op := range []*graph.Op{
		graph.NewOp(0, graph.Dequantize, "dq").AddInput(src).AddOutput(deq).
			SetAttr("qtype", "per_channel").SetAttr("axis", 1).SetAttr("scales", []float32{1, 2, 3}),
		graph.NewOp(1, graph.ReduceSum, "sum").AddInput(deq).AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).
			SetAttr("axes", []int64{0}),
	} {
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil || len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("%v %v", parts, err)
	}
	bad := graph.NewLogicalTensor(0, dtypes.U8, []int64{2, 5})
	if _, err := parts[0].Compile([]graph.LogicalTensor{bad}, parts[0].Outputs()); !errors.Is(err, graph.InvalidShape) ||
		!strings.Contains(err.Error(), "needs 5 scales, scales holds 3") {
		t.Errorf("compile with 5 channels: %v", err)
	}
	good := graph.NewLogicalTensor(0, dtypes.U8, []int64{2, 3})
	cp, err := parts[0].Compile([]graph.LogicalTensor{good}, parts[0].Outputs())
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cp.QueryLogicalTensor(2)
	y := make([]float32, 3)
	if err := cp.Execute([]Tensor{mustNewTensor(t, good, []uint8{1, 2, 3, 4, 5, 6})}, []Tensor{mustNewTensor(t, out, y)}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(y, []float32{5, 14, 27}) { // (1+4)*1, (2+5)*2, (3+6)*3
		t.Errorf("got %v, want [5 14 27]", y)
	}
}

// TestInt8Hostile drives random, often malformed, Dequantize -> Reduce* ->
// Quantize graphs (bad qtypes, axes, scale and zero point counts, NaN and
// zero scales, huge zero points, wrong data types, unknown and zero dims)
// through AddOp, Finalize, Get, Compile and Execute: every failure is a
// *graph.Error with a status, and nothing panics or reads out of bounds.
func TestInt8Hostile(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 24))
	dts := []dtypes.DataType{dtypes.U8, dtypes.S8, dtypes.F32, dtypes.S32, dtypes.BF16}
	// Mostly the right types (u8/s8 in and out, f32 between), sometimes not.
	pick := func(good ...dtypes.DataType) dtypes.DataType {
		if r.IntN(8) == 0 {
			return dts[r.IntN(len(dts))]
		}
		return good[r.IntN(len(good))]
	}
	scalesOf := [][]float32{{0.5}, {-2}, {0}, {float32(math.NaN())}, {1, 2}, {1, 2, 3}, {}, {0.25, 0.5, 1, 2}}
	zpsOf := [][]int64{nil, {0}, {3}, {1 << 40}, {1, 2}, {0, 1, 2}, {-5, 6, 7, 8}}
	kinds := []graph.OpKind{graph.ReduceMean, graph.ReduceSum, graph.ReduceMax, graph.ReduceMin, graph.ReduceProd, graph.ReduceL1, graph.ReduceL2}
	check := func(what string, err error) bool {
		t.Helper()
		if err == nil {
			return true
		}
		var e *graph.Error
		if !errors.As(err, &e) || e.Msg == "" {
			t.Fatalf("%s: %v (%T) is not a *graph.Error", what, err, err)
		}
		return false
	}
	for i := range 400 {
		rank := r.IntN(4)
		dims := make([]int64, rank)
		for k := range dims {
			dims[k] = []int64{1, 2, 3, 4, 0, graph.UnknownDim}[r.IntN(6)]
		}
		quantOp := func(id uint64, kind graph.OpKind, in, out graph.LogicalTensor) *graph.Op {
			sc := scalesOf[0]
			if r.IntN(2) == 0 {
				sc = scalesOf[r.IntN(len(scalesOf))]
			}
			op := graph.NewOp(id, kind, "").AddInput(in).AddOutput(out).SetAttr("scales", sc)
			if z := zpsOf[r.IntN(len(zpsOf))]; z != nil && r.IntN(2) == 0 {
				op.SetAttr("zps", z)
			}
			if r.IntN(3) == 0 {
				op.SetAttr("qtype", []string{"per_channel", "per_tensor", "per_group", "bogus"}[r.IntN(4)])
				op.SetAttr("axis", r.IntN(7)-3)
			}
			return op
		}
		g := graph.New()
		src := graph.NewLogicalTensor(0, pick(dtypes.U8, dtypes.S8), dims)
		var axes []int64
		for k := range rank {
			if r.IntN(2) == 0 {
				axes = append(axes, int64(k))
			}
		}
		ops := []*graph.Op{
			quantOp(0, graph.Dequantize, src, graph.NewLogicalTensorAny(1, pick(dtypes.F32), nil)),
			graph.NewOp(1, kinds[r.IntN(len(kinds))], "").AddInput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).
				AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).SetAttr("axes", axes).SetAttr("keep_dims", r.IntN(2) == 0),
			quantOp(2, graph.Quantize, graph.NewLogicalTensorAny(2, dtypes.F32, nil), graph.NewLogicalTensorAny(3, pick(dtypes.U8, dtypes.S8), nil)),
		}
		ok := true
		for _, op := range ops {
			ok = ok && check(fmt.Sprint("case ", i, " AddOp"), g.AddOp(op))
		}
		if !ok || !check("Finalize", g.Finalize()) {
			continue
		}
		parts, err := Get(g, Fusion)
		if !check("Get", err) {
			continue
		}
		for _, p := range parts {
			if !p.IsSupported() {
				if p.Reason() == "" {
					t.Fatalf("case %d: %v unsupported with no reason", i, p)
				}
				continue
			}
			ins := p.Inputs()
			for k := range ins {
				for d := range ins[k].Dims {
					if ins[k].Dims[d] < 0 {
						ins[k].Dims[d] = int64(1 + r.IntN(4))
					}
				}
				ins[k].Strides = nil
			}
			cp, err := p.Compile(ins, p.Outputs())
			if !check("Compile", err) {
				continue
			}
			var inT, outT []Tensor
			for _, lt := range cp.Inputs() {
				n, _ := MemSize(lt)
				inT = append(inT, mustNewTensor(t, lt, make([]byte, n+1)))
			}
			for _, lt := range cp.Outputs() {
				n, _ := MemSize(lt)
				outT = append(outT, mustNewTensor(t, lt, make([]byte, n+1)))
			}
			check("Execute", cp.Execute(inT, outT))
		}
	}
}

// TestInt8QuantizeAfterPreOps: a Quantize fuses after an Abs pre-op group
// and after log-sum-exp's Exp -> ReduceSum -> Log.
func TestInt8QuantizeAfterPreOps(t *testing.T) {
	for _, tc := range []struct {
		pre   []graph.OpKind // ops before the Quantize, in order
		red   graph.OpKind
		x     []float32
		scale float32
		want  int8
	}{
		{[]graph.OpKind{graph.Abs}, graph.ReduceMax, []float32{-3, 1, 2}, 0.5, 6},          // max |x| = 3
		{[]graph.OpKind{graph.Exp}, graph.ReduceSum, []float32{0, 0, 0, 0}, 0.1, 14},       // log 4 = 1.386
		{[]graph.OpKind{graph.Square}, graph.ReduceSum, []float32{1, 2, 3, -4}, 0.25, 120}, // 30/0.25
	} {
		g := graph.New()
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{int64(len(tc.x))})
		ops := []*graph.Op{
			graph.NewOp(0, tc.pre[0], "pre").AddInput(src).AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)),
			graph.NewOp(1, tc.red, "red").AddInput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).
				AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).SetAttr("axes", []int64{0}),
		}
		last := uint64(2)
		if tc.pre[0] == graph.Exp {
			ops = append(ops, graph.NewOp(2, graph.Log, "log").AddInput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).
				AddOutput(graph.NewLogicalTensorAny(3, dtypes.F32, nil)))
			last = 3
		}
		dst := graph.NewLogicalTensorAny(9, dtypes.S8, nil)
		ops = append(ops, graph.NewOp(9, graph.Quantize, "q").AddInput(graph.NewLogicalTensorAny(last, dtypes.F32, nil)).
			AddOutput(dst).SetAttr("scales", []float32{tc.scale}))
		for _, op := range ops {
			if err := g.AddOp(op); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Finalize(); err != nil {
			t.Fatal(err)
		}
		parts, err := Get(g, Fusion)
		if err != nil || len(parts) != 1 || !parts[0].IsSupported() {
			t.Fatalf("%v: %v %v", tc.pre, parts, err)
		}
		cp, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
		if err != nil {
			t.Fatal(err)
		}
		out, _ := cp.QueryLogicalTensor(9)
		y := make([]int8, 1)
		if err := cp.Execute([]Tensor{mustNewTensor(t, src, tc.x)}, []Tensor{mustNewTensor(t, out, y)}); err != nil {
			t.Fatal(err)
		}
		if y[0] != tc.want {
			t.Errorf("%v -> %v -> Quantize: %d, want %d", tc.pre, tc.red, y[0], tc.want)
		}
	}
}

// TestQuantChannelCountsUnknownDim: per-channel Dequantize and Quantize
// maps of different channel counts on a dim unknown when partitioning do
// not merge (no panic); Compile with the concrete dim refuses the one
// that does not match.
func TestQuantChannelCountsUnknownDim(t *testing.T) {
	g := graph.New()
	src := graph.NewLogicalTensor(0, dtypes.U8, []int64{2, graph.UnknownDim})
	deq := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	for _, op := range []*graph.Op{
		graph.NewOp(0, graph.Dequantize, "dq").AddInput(src).AddOutput(deq).
			SetAttr("qtype", "per_channel").SetAttr("axis", 1).SetAttr("scales", []float32{1, 2, 3}),
		graph.NewOp(1, graph.ReduceSum, "sum").AddInput(deq).AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).
			SetAttr("axes", []int64{0}),
		graph.NewOp(2, graph.Quantize, "q").AddInput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).AddOutput(graph.NewLogicalTensorAny(3, dtypes.U8, nil)).
			SetAttr("qtype", "per_channel").SetAttr("axis", 0).SetAttr("scales", []float32{1, 2, 3, 4, 5}),
	} {
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if !p.IsSupported() {
			continue
		}
		ins := p.Inputs()
		for i := range ins {
			if ins[i].ID == 0 {
				ins[i] = graph.NewLogicalTensor(0, dtypes.U8, []int64{2, 3})
			}
		}
		if _, err := p.Compile(ins, p.Outputs()); err == nil {
			t.Errorf("%v compiled with 3 channels against a Quantize of 5", p)
		} else {
			checkGraphError(t, err)
		}
	}
}
