package graph_test

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/partition"
)

// buildBytes reads decisions from fuzz input; past its end every read is
// 0, so short inputs still describe a (small) graph.
type buildBytes struct {
	b []byte
	i int
}

func (f *buildBytes) intn(n int) int {
	if n <= 1 || f.i >= len(f.b) {
		return 0
	}
	f.i++
	return int(f.b[f.i-1]) % n
}

// Choices the generator draws from: valid values, and the hostile ones
// (unknown and invalid data types, negative and int64-overflowing dims,
// ranks past MaxRank, strides that point far outside any buffer).
var (
	fuzzDTypes = []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S32, dtypes.S8, dtypes.F64,
		dtypes.S64, dtypes.U32, dtypes.S16, dtypes.U64, dtypes.Boolean, dtypes.Undef, dtypes.DataType(99)}
	fuzzDims    = []int64{1, 2, 3, 4, 7, 16, 0, -1, -1, -2, 1 << 31, 1 << 40, math.MaxInt64}
	fuzzStrides = []int64{0, 1, 2, 5, -1, -2, 1 << 62}
	fuzzKinds   = []graph.OpKind{
		graph.ReduceMean, graph.ReduceMean, graph.ReduceMean, graph.ReduceMean,
		graph.ReduceSum, graph.ReduceMax, graph.ReduceMin, graph.ReduceProd, graph.ReduceL1, graph.ReduceL2,
		graph.ReduceBitwiseAnd, graph.ReduceBitwiseOr, graph.ReduceBitwiseXor,
		graph.ReduceLogicalAnd, graph.ReduceLogicalOr, graph.ReduceLogicalXor,
		graph.Abs, graph.Clamp, graph.Elu, graph.Exp, graph.GELU, graph.HardSigmoid, graph.HardSwish,
		graph.LeakyReLU, graph.Log, graph.Mish, graph.Pow, graph.Sigmoid, graph.SoftPlus, graph.ReLU, graph.Round,
		graph.Sqrt, graph.Square, graph.Tanh,
		graph.Add, graph.Multiply, graph.Maximum, graph.Minimum, graph.Divide, graph.Subtract,
		graph.MatMul, graph.SoftMax, graph.StaticReshape, graph.StaticTranspose,
		graph.Convolution, graph.LayerNorm, graph.Wildcard, graph.End, graph.OpKind(0), graph.OpKind(999),
		graph.ArgMax, graph.ArgMin,
	}
	fuzzAttrNames = []string{"axes", "keep_dims", "min", "max", "alpha", "beta", "mode", "auto_broadcast",
		"order", "shape", "special_zero", "strides", "pads_begin", "pads_end", "dilations", "bogus",
		"axis", "select_last_index"}
	fuzzAttrValues = []any{
		[]int64{0}, []int64{-1}, []int64{1, 2}, []int64{0, 0}, []int64{5}, []int64{}, []int64{-1 << 62, 3},
		true, false, float32(0.5), float32(-1), float32(math.NaN()), float32(math.Inf(1)), int64(2),
		"gelu_erf", "gelu_tanh", "numpy", "none", "bogus", []float32{1}, 3.5 + 0i,
	}
)

// tensorFrom describes a logical tensor from the fuzz bytes.
func tensorFrom(fb *buildBytes, id uint64) graph.LogicalTensor {
	t := graph.LogicalTensor{ID: id, DataType: fuzzDTypes[fb.intn(len(fuzzDTypes))], Property: graph.PropertyVariable}
	if r := fb.intn(16); r < 15 {
		t.Dims = make([]int64, r%14) // up to rank 13, one past MaxRank
		for i := range t.Dims {
			t.Dims[i] = fuzzDims[fb.intn(len(fuzzDims))]
		}
	}
	switch fb.intn(8) {
	case 0:
		t.Layout = graph.LayoutAny
	case 1:
		t.Layout = graph.LayoutUndef
	case 2:
		t.Layout = graph.Layout(7)
	case 3:
		t.Layout = graph.LayoutStrided
		t.Strides = make([]int64, len(t.Dims)+fb.intn(2))
		for i := range t.Strides {
			t.Strides[i] = fuzzStrides[fb.intn(len(fuzzStrides))]
		}
	case 4:
		t.Layout = graph.LayoutStrided // strides filled in by Finalize
	default:
		t.Layout, t.Strides = graph.LayoutStrided, graph.DenseStrides(t.Dims)
	}
	switch fb.intn(8) {
	case 0:
		t.Property = graph.PropertyConstant
	case 1:
		t.Property = graph.Property(9)
	}
	return t
}

// checkErr fails unless err is a *graph.Error with a known status and a
// message.
func checkErr(t *testing.T, what string, err error) {
	t.Helper()
	var e *graph.Error
	if !errors.As(err, &e) || e.Msg == "" {
		t.Fatalf("%s: error %v (%T) is not a *graph.Error with a message", what, err, err)
	}
	switch e.Status {
	case graph.InvalidArguments, graph.Unimplemented, graph.InvalidGraph, graph.InvalidGraphOp,
		graph.InvalidShape, graph.InvalidDataType, graph.OutOfMemory, graph.RuntimeError:
	default:
		t.Fatalf("%s: error %v has unknown status %d", what, err, int(e.Status))
	}
}

// FuzzGraphBuild turns bytes into a sequence of AddOp calls (random kinds,
// attributes of right and wrong types, tensors with hostile dims, strides,
// layouts, data types and properties, reused and conflicting ids), then
// Finalize, partition.Get under both policies, and Compile of every
// supported partition with random concrete shapes and layouts; small ones
// are executed too. Every failure must be a *graph.Error with a status.
// Every success must be consistent: a topological op order, every op in
// exactly one partition, a ReduceMean's inferred output dims equal to
// shape.ReduceDims of its axes, a compiled output of the reduction's dims
// and the partition's data type, and on data of all ones an output that is
// 1 everywhere (no post-ops) or the same value everywhere (post-ops).
func FuzzGraphBuild(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 0, 0, 3, 2, 5, 0, 0, 2, 1, 1, 0})
	f.Add([]byte{1, 2, 0, 5, 0, 0, 1, 4, 5, 6, 0, 9, 1, 1, 4, 0, 5, 0, 0, 0, 3, 1, 21, 1, 2, 0, 2, 3, 0, 0})
	f.Add([]byte{2, 0, 0, 4, 3, 2, 2, 1, 1, 1, 6, 0, 0, 1, 17, 4, 1, 14, 8, 0, 5, 5, 1, 2, 0, 5, 1, 0, 12})
	f.Add([]byte{3, 1, 3, 1, 0, 3, 7, 5, 6, 0, 0, 1, 0, 9, 12, 9, 0, 2, 8, 0, 3, 2, 9, 0, 1, 1, 20, 3, 4, 7, 9})
	f.Add([]byte{5, 0, 0, 0, 0, 14, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 1, 2, 2})
	// ReduceL2(x) over the last dim -> Maximum(n, eps of dims [1]) ->
	// Divide(x, ...): a decomposed L2 normalization.
	f.Add([]byte{2, 9, 1, 1, 1, 0, 2, 4, 5, 5, 2, 2, 0, 15, 0, 2, 2, 0, 1, 1, 7,
		30, 2, 1, 0, 3, 0, 1, 0, 5, 2, 4, 0, 15, 0, 2, 0, 32, 3, 1, 1, 1, 1, 4, 1, 5, 0, 15, 0, 2, 0})
	// Square(x) -> ReduceMean over the last dim -> Add(eps of dims [1]) ->
	// Sqrt -> Divide(x, ...): a decomposed RMS norm.
	f.Add([]byte{4, 26, 1, 1, 1, 0, 2, 4, 5, 5, 2, 2, 0, 15, 0, 2, 0, 0, 2, 1, 1, 0, 3, 0, 15, 0, 2, 2, 0, 1, 1, 7,
		28, 3, 1, 0, 4, 0, 1, 0, 5, 2, 5, 0, 15, 0, 2, 0, 25, 4, 1, 0, 6, 0, 15, 0, 2, 0, 32, 5, 1, 1, 1, 1, 6, 1, 7, 0, 15, 0, 2, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		fb := &buildBytes{b: data}
		g := graph.New()
		pool := map[uint64]graph.LogicalTensor{}
		pick := func(id uint64) graph.LogicalTensor {
			if lt, ok := pool[id]; ok && fb.intn(4) != 0 {
				return lt
			}
			lt := tensorFrom(fb, id)
			pool[id] = lt
			return lt
		}
		added := 0
		var prevOut *graph.LogicalTensor // the last op's output: chains are likelier
		for range 1 + fb.intn(6) {
			kind := fuzzKinds[fb.intn(len(fuzzKinds))]
			op := graph.NewOp(uint64(fb.intn(8)), kind, "fz")
			nIn := 1
			switch {
			case kind.IsBinary() || kind == graph.MatMul:
				nIn = 2
			case kind == graph.ReduceMean && fb.intn(4) == 0:
				nIn = 2
			}
			if fb.intn(8) == 0 {
				nIn = fb.intn(4)
			}
			for k := range nIn {
				switch {
				case k == 0 && prevOut != nil && fb.intn(2) == 0:
					op.AddInput(*prevOut)
				case k == 1 && kind.IsReduction() && fb.intn(2) == 0:
					// An axes tensor: s32, 1-D, some number of axes.
					ax := graph.NewLogicalTensor(uint64(20+fb.intn(3)), dtypes.S32, []int64{fuzzDims[fb.intn(len(fuzzDims))]})
					op.AddInput(ax.WithProperty(graph.Property(1 + fb.intn(2))))
				default:
					op.AddInput(pick(uint64(fb.intn(10))))
				}
			}
			if kind != graph.End {
				out := pick(uint64(fb.intn(10)))
				op.AddOutput(out)
				prevOut = &out
			}
			for range fb.intn(4) {
				op.SetAttr(fuzzAttrNames[fb.intn(len(fuzzAttrNames))], fuzzAttrValues[fb.intn(len(fuzzAttrValues))])
			}
			if err := g.AddOp(op); err != nil {
				checkErr(t, "AddOp", err)
				continue
			}
			added++
		}
		if err := g.Finalize(); err != nil {
			checkErr(t, "Finalize", err)
			if added > 0 && g.Finalized() {
				t.Fatal("Finalize failed but the graph says it is finalized")
			}
			return
		}
		checkFinalized(t, g)
		for _, policy := range []partition.Policy{partition.Fusion, partition.Debug} {
			parts, err := partition.Get(g, policy)
			if err != nil {
				t.Fatalf("Get(%s) of a finalized graph: %v", policy, err)
			}
			checkPartitions(t, g, policy, parts)
			for _, p := range parts {
				if p.IsSupported() {
					compileAndRun(t, fb, p)
				} else if _, err := p.Compile(p.Inputs(), p.Outputs()); err == nil {
					t.Fatalf("%v compiled though unsupported", p)
				} else {
					checkErr(t, "Compile of an unsupported partition", err)
				}
			}
		}
	})
}

// checkFinalized checks the topological order and the reduction shapes
// of a finalized graph.
func checkFinalized(t *testing.T, g *graph.Graph) {
	t.Helper()
	pos := map[uint64]int{}
	for i, op := range g.Ops() {
		pos[op.ID] = i
	}
	for i, op := range g.Ops() {
		for _, in := range op.Inputs {
			if p := g.Producer(in.ID); p != nil && pos[p.ID] >= i {
				t.Fatalf("%s reads tensor %d before its producer %s", op, in.ID, p)
			}
		}
		if !op.Kind.IsReduction() || len(op.Inputs) != 1 || !op.Inputs[0].KnownDims() {
			continue
		}
		axes, _ := op.Ints("axes")
		keep, _ := op.Bool("keep_dims")
		reduce, err := shape.NormalizeAxes(op, op.Inputs[0].ID, axes, len(op.Inputs[0].Dims))
		if err != nil {
			t.Fatalf("%s finalized with invalid axes %v: %v", op, axes, err)
		}
		want := shape.ReduceDims(op.Inputs[0].Dims, reduce, keep)
		if got := op.Outputs[0].Dims; !slices.Equal(got, want) {
			t.Fatalf("%s: inferred output dims %s, want %s", op, graph.DimsString(got), graph.DimsString(want))
		}
	}
}

// checkPartitions checks that every op but End is in exactly one
// partition, ids are indexes, only reduction partitions (headed by the
// reduction or by an Abs or Square pre-op), index reductions (alone or
// after an Abs) and normalization ops are supported, fused ops form a producer-consumer chain and the ports are
// the chain's outside inputs and last outputs.
func checkPartitions(t *testing.T, g *graph.Graph, policy partition.Policy, parts []*partition.Partition) {
	t.Helper()
	seen := map[uint64]int{}
	for i, p := range parts {
		if p.ID() != i {
			t.Fatalf("partition %d has id %d", i, p.ID())
		}
		ops := p.Ops()
		if len(ops) == 0 || (policy == partition.Debug && len(ops) != 1) {
			t.Fatalf("%s: %v has %d ops", policy, p, len(ops))
		}
		// A normalization op heads its partition, its post-ops after it.
		norm := ops[0].Kind.IsNormalization()
		if p.IsSupported() != (reductionOf(ops) != nil || norm || isIndexReduction(ops)) || (p.Reason() == "") != p.IsSupported() {
			t.Fatalf("%v: supported %v, reason %q", p, p.IsSupported(), p.Reason())
		}
		inside := map[uint64]bool{}
		for k, op := range ops {
			seen[op.ID]++
			if op.Kind == graph.End {
				t.Fatalf("End op in %v", p)
			}
			if k > 0 && !slices.ContainsFunc(op.Inputs, func(lt graph.LogicalTensor) bool { return lt.ID == ops[k-1].Outputs[0].ID }) {
				t.Fatalf("%v: %s does not consume %s", p, op, ops[k-1])
			}
			for _, o := range op.Outputs {
				inside[o.ID] = true
			}
		}
		for _, in := range p.Inputs() {
			if inside[in.ID] {
				t.Fatalf("%v: input port %d is produced inside", p, in.ID)
			}
		}
		last := ops[len(ops)-1].Outputs
		if outs := p.Outputs(); len(outs) != len(last) || (len(outs) > 0 && outs[0].ID != last[0].ID) {
			t.Fatalf("%v: output ports %v, last op outputs %v", p, outs, last)
		}
	}
	for _, op := range g.Ops() {
		if want := map[bool]int{true: 0, false: 1}[op.Kind == graph.End]; seen[op.ID] != want {
			t.Fatalf("%s: %s is in %d partitions", policy, op, seen[op.ID])
		}
	}
}

// isIndexReduction reports whether ops are an ArgMax or ArgMin, alone
// or after its Abs pre-op: a partition gdnn must support.
func isIndexReduction(ops []*graph.Op) bool {
	return ops[len(ops)-1].Kind.IsArg() && (len(ops) == 1 || len(ops) == 2 && ops[0].Kind == graph.Abs)
}

// reductionOf returns the reduction op of a partition gdnn must support:
// the first op, or the second after an Abs or square pre-op (Square, Pow
// with beta 2, a tensor times itself); nil if none.
func reductionOf(ops []*graph.Op) *graph.Op {
	switch {
	case ops[0].Kind.IsReduction():
		return ops[0]
	case len(ops) > 1 && ops[1].Kind.IsReduction() && (ops[0].Kind == graph.Abs || ops[0].IsSquare()):
		return ops[1]
	}
	return nil
}

// rereadSrc returns the id of the first op's src when a later op of the
// group reads it again (a decomposed normalization: x is reduced, then
// mapped with the statistic), else -1.
func rereadSrc(ops []*graph.Op) int64 {
	x := ops[0].Inputs[0].ID
	for _, op := range ops[1:] {
		for _, in := range op.Inputs {
			if in.ID == x {
				return int64(x)
			}
		}
	}
	return -1
}

// onesResult is what a reduction of n ones gives (|x| and x*x of one
// are one): n for sums and L1, sqrt(n) for L2, 1 otherwise; over an
// empty extent the kind's empty result.
func onesResult(k graph.OpKind, n int64) float64 {
	if n == 0 {
		return map[graph.OpKind]float64{graph.ReduceMean: math.NaN(), graph.ReduceProd: 1,
			graph.ReduceMax: math.Inf(-1), graph.ReduceMin: math.Inf(1)}[k]
	}
	switch k {
	case graph.ReduceSum, graph.ReduceL1:
		return float64(n)
	case graph.ReduceL2:
		return math.Sqrt(float64(n))
	}
	return 1
}

// compileAndRun compiles a supported partition for random concrete inputs
// and, when small enough, executes it on all-ones data.
func compileAndRun(t *testing.T, fb *buildBytes, p *partition.Partition) {
	t.Helper()
	ports := p.Inputs()
	ins := make([]graph.LogicalTensor, len(ports))
	for i, port := range ports {
		lt := port.Clone()
		if lt.Dims == nil {
			lt.Dims = make([]int64, fb.intn(4))
		}
		for k, d := range lt.Dims {
			if d < 0 {
				lt.Dims[k] = int64(1 + fb.intn(4))
			}
		}
		lt.Layout, lt.Strides = graph.LayoutStrided, graph.DenseStrides(lt.Dims)
		switch fb.intn(6) {
		case 0: // padded innermost pitch
			if n := len(lt.Dims); n > 1 {
				lt.Strides = graph.DenseStrides(append(slices.Clone(lt.Dims[:n-1]), lt.Dims[n-1]+int64(fb.intn(3))))
			}
		case 1: // reversed dims order in memory
			acc := int64(1)
			for k := range lt.Dims {
				lt.Strides[k] = acc
				if acc > 0 && lt.Dims[k] > 0 && acc <= math.MaxInt64/lt.Dims[k] {
					acc *= lt.Dims[k]
				} else {
					acc = -1
				}
			}
		case 2:
			lt.DataType = fuzzDTypes[fb.intn(len(fuzzDTypes))]
		}
		ins[i] = lt
	}
	outPort := p.Outputs()[0]
	c, err := p.Compile(ins, []graph.LogicalTensor{graph.NewLogicalTensorAny(outPort.ID, outPort.DataType, nil)})
	if err != nil {
		checkErr(t, "Compile", err)
		return
	}
	ops := p.Ops()
	mean := reductionOf(ops)
	if mean == nil {
		return // a normalization or an index reduction: compiled, as its partition must
	}
	if x := rereadSrc(ops); x >= 0 {
		// A normalization the graph spells out in ops (softmax, layer
		// norm, RMS norm, L2): its output has its src's dims.
		out, err := c.QueryLogicalTensor(outPort.ID)
		if err != nil {
			t.Fatalf("QueryLogicalTensor(%d): %v", outPort.ID, err)
		}
		for _, in := range ins {
			if in.ID == uint64(x) && !slices.Equal(in.Dims, out.Dims) {
				t.Fatalf("%v: compiled output dims %s, its src's %s", p, graph.DimsString(out.Dims), graph.DimsString(in.Dims))
			}
		}
		return
	}
	keep, _ := mean.Bool("keep_dims")
	out, err := c.QueryLogicalTensor(outPort.ID)
	if err != nil {
		t.Fatalf("QueryLogicalTensor(%d): %v", outPort.ID, err)
	}
	if out.DataType != outPort.DataType {
		t.Fatalf("compiled output is %s, the port %s", out.DataType, outPort.DataType)
	}
	src := ins[0]
	var reduce []bool
	if len(mean.Inputs) == 1 {
		axes, _ := mean.Ints("axes")
		if reduce, err = shape.NormalizeAxes(mean, mean.Inputs[0].ID, axes, len(src.Dims)); err != nil {
			t.Fatalf("compiled with invalid axes: %v", err)
		}
		if want := shape.ReduceDims(src.Dims, reduce, keep); !slices.Equal(out.Dims, want) {
			t.Fatalf("compiled output dims %s, the reduction gives %s", graph.DimsString(out.Dims), graph.DimsString(want))
		}
	}
	// Execute only what is small: all tensors within 1<<16 elements.
	const small = 1 << 16
	tensors := make([]partition.Tensor, len(ins))
	for i, lt := range ins {
		n := spanOf(lt)
		if n < 0 || n > small {
			return
		}
		buf := make([]byte, n*int64(lt.DataType.Size()))
		fillOnes(lt.DataType, buf)
		if i > 0 && len(mean.Inputs) == 2 && mean.Inputs[1].ID == lt.ID {
			// The axes tensor: random axes, some invalid.
			reduce = make([]bool, len(src.Dims))
			valid := true
			for k := int64(0); k < n; k++ {
				a := int64(fb.intn(2*len(src.Dims)+3)) - int64(len(src.Dims)) - 1
				if lt.DataType == dtypes.S64 {
					binary.LittleEndian.PutUint64(buf[8*k:], uint64(a))
				} else {
					binary.LittleEndian.PutUint32(buf[4*k:], uint32(int32(a)))
				}
				if a < 0 {
					a += int64(len(src.Dims))
				}
				if a < 0 || a >= int64(len(src.Dims)) || reduce[a] {
					valid = false
					continue
				}
				reduce[a] = true
			}
			if !valid {
				reduce = nil
			}
		}
		tt, err := partition.NewTensor(lt, buf)
		if err != nil {
			checkErr(t, "NewTensor", err)
			return
		}
		tensors[i] = tt
	}
	if reduce == nil {
		return // invalid run-time axes: FuzzExecute covers their errors
	}
	outLT := graph.NewLogicalTensor(out.ID, out.DataType, shape.ReduceDims(src.Dims, reduce, keep))
	if out.KnownDims() {
		outLT = out
	}
	n := spanOf(outLT)
	if n < 0 || n > small {
		return
	}
	dst := make([]byte, n*int64(outLT.DataType.Size()))
	dt, err := partition.NewTensor(outLT, dst)
	if err != nil {
		t.Fatalf("NewTensor of the compiled output %v: %v", outLT, err)
	}
	if err := c.Execute(tensors, []partition.Tensor{dt}); err != nil {
		checkErr(t, "Execute", err)
		if len(mean.Inputs) == 1 {
			t.Fatalf("Execute of valid tensors for %v: %v", p, err)
		}
		return
	}
	// Every output saw the same inputs (all ones), so they are all equal;
	// without post-ops the result is onesResult's, within a rounding of
	// the dst type.
	count := int64(1)
	for k, r := range reduce {
		if r {
			count *= src.Dims[k]
		}
	}
	want := onesResult(mean.Kind, count)
	if exact := exactOnes(mean, count, outLT.DataType); !math.IsNaN(exact) || isExact(mean) && (outLT.DataType.IsFloat() || outLT.DataType == dtypes.F64) {
		want = exact
	}
	switch outLT.DataType { // rounded to nearest even and saturated
	case dtypes.S8:
		want = float64(dtypes.F32ToS8(float32(want)))
	case dtypes.U8:
		want = float64(dtypes.F32ToU8(float32(want)))
	case dtypes.S32:
		want = float64(dtypes.F32ToS32(float32(want)))
	}
	ulp := map[dtypes.DataType]float64{dtypes.F32: 0x1p-23, dtypes.BF16: 0x1p-7, dtypes.F16: 0x1p-10, dtypes.F64: 0x1p-52}[outLT.DataType]
	vals := readAll(outLT.DataType, dst, n)
	for k, v := range vals {
		same := v == vals[0] || (math.IsNaN(v) && math.IsNaN(vals[0]))
		if !same {
			t.Fatalf("%v on all-ones data: output %d is %v, output 0 is %v", p, k, v, vals[0])
		}
		if ops[len(ops)-1] != mean {
			continue // post-ops follow
		}
		ok := v == want || (math.IsNaN(v) && math.IsNaN(want)) || math.Abs(v-want) <= 2*ulp*math.Abs(want)
		if outLT.DataType == dtypes.F16 && want > 65504 {
			ok = math.IsInf(v, 1)
		}
		if !ok {
			t.Fatalf("%v: reducing %d ones gives %v, want %v", p, count, v, want)
		}
	}
}

// spanOf is the elements a concrete tensor addresses, -1 if too many.
func spanOf(lt graph.LogicalTensor) int64 {
	n := int64(1)
	for i, d := range lt.Dims {
		if d == 0 {
			return 0
		}
		s := lt.Strides[i]
		if s < 0 || (s > 0 && d-1 > (1<<40)/s) {
			return -1
		}
		n += (d - 1) * s
		if n > 1<<40 {
			return -1
		}
	}
	return n
}

func fillOnes(dt dtypes.DataType, b []byte) {
	for i := 0; i+dt.Size() <= len(b) && dt.Size() > 0; i += dt.Size() {
		switch dt {
		case dtypes.F32:
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(1))
		case dtypes.BF16:
			binary.LittleEndian.PutUint16(b[i:], dtypes.F32ToBF16(1))
		case dtypes.F16:
			binary.LittleEndian.PutUint16(b[i:], dtypes.F32ToF16(1))
		case dtypes.S8, dtypes.U8:
			b[i] = 1
		case dtypes.F64:
			binary.LittleEndian.PutUint64(b[i:], math.Float64bits(1))
		default:
			if dt.IsInteger() || dt == dtypes.Boolean {
				b[i] = 1 // little-endian 1, the other bytes 0
			}
		}
	}
}

// isExact reports whether red reduces exactly (integer or boolean data
// wider than 8 bits, or a bitwise or logical kind).
func isExact(red *graph.Op) bool {
	switch red.Kind {
	case graph.ReduceBitwiseAnd, graph.ReduceBitwiseOr, graph.ReduceBitwiseXor,
		graph.ReduceLogicalAnd, graph.ReduceLogicalOr, graph.ReduceLogicalXor:
		return true
	}
	return red.Inputs[0].DataType.IsExact()
}

// exactOnes is an exact reduction's result over n ones into dst type
// dt, or NaN for a reduction that is not exact (and an exact mean of
// nothing into a float dst).
func exactOnes(red *graph.Op, n int64, dt dtypes.DataType) float64 {
	if !isExact(red) {
		return math.NaN()
	}
	src := red.Inputs[0].DataType
	bits := 8 * src.Size()
	least, largest := 0.0, math.Ldexp(1, bits)-1
	if src.IsSigned() {
		least, largest = -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)-1
	}
	if n == 0 {
		switch red.Kind {
		case graph.ReduceProd, graph.ReduceLogicalAnd:
			return 1
		case graph.ReduceMax:
			if src == dtypes.Boolean {
				return 0
			}
			return least
		case graph.ReduceMin:
			if src == dtypes.Boolean {
				return 1
			}
			return largest
		case graph.ReduceBitwiseAnd:
			if src.IsSigned() {
				return -1
			}
			return largest
		case graph.ReduceMean:
			if dt.IsFloat() || dt == dtypes.F64 {
				return math.NaN()
			}
		}
		return 0
	}
	switch red.Kind {
	case graph.ReduceSum: // n wraps around at the type's width
		w := math.Mod(float64(n), math.Ldexp(1, bits))
		if w > largest {
			w -= math.Ldexp(1, bits)
		}
		return w
	case graph.ReduceBitwiseXor, graph.ReduceLogicalXor:
		return float64(n % 2)
	}
	return 1
}

// readAll reads n dense elements of a reduction's dst type.
func readAll(dt dtypes.DataType, b []byte, n int64) []float64 {
	out := make([]float64, n)
	for i := range out {
		switch dt {
		case dtypes.F32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case dtypes.BF16:
			out[i] = float64(dtypes.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case dtypes.F16:
			out[i] = float64(dtypes.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case dtypes.S8:
			out[i] = float64(int8(b[i]))
		case dtypes.U8:
			out[i] = float64(b[i])
		case dtypes.S32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case dtypes.F64:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		case dtypes.S16:
			out[i] = float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case dtypes.U32:
			out[i] = float64(binary.LittleEndian.Uint32(b[4*i:]))
		case dtypes.S64:
			out[i] = float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
		case dtypes.U64:
			out[i] = float64(binary.LittleEndian.Uint64(b[8*i:]))
		case dtypes.Boolean:
			out[i] = float64(b[i])
		}
	}
	return out
}
