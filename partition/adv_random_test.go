package partition_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/partition"
)

type advGen struct {
	r        *rand.Rand
	g        *graph.Graph
	nextT    uint64
	nextOp   uint64
	inputs   map[uint64]advVal
	axes     map[uint64][]int64
	special  bool
	prod     bool
	big      bool
	highRank bool
	log      []string
}

func (a *advGen) tid() uint64 { a.nextT++; return a.nextT }
func (a *advGen) oid() uint64 { a.nextOp++; return a.nextOp }

func (a *advGen) value(dt dtypes.DataType, dims []int64, lo, hi float64) advVal {
	n := advNum(dims)
	v := advVal{dims: append([]int64{}, dims...), v: make([]float64, n)}
	for i := range v.v {
		x := lo + (hi-lo)*a.r.Float64()
		if dt.IsInt() || dt == dtypes.S8 || dt == dtypes.U8 {
			if !a.prod {
				x *= 10
			}
			x = math.Round(x)
			if dt == dtypes.U8 {
				x = math.Abs(x)
			}
		}
		if a.special && a.r.IntN(40) == 0 {
			sp := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e15, -1e15}
			if dt.IsFloat() {
				x = sp[a.r.IntN(len(sp))]
			}
		}
		v.v[i] = advRound(dt, x)
	}
	return v
}

func (a *advGen) input(dt dtypes.DataType, dims []int64, lo, hi float64) graph.LogicalTensor {
	id := a.tid()
	a.inputs[id] = a.value(dt, dims, lo, hi)
	return graph.NewLogicalTensor(id, dt, dims)
}

func (a *advGen) add(op *graph.Op) error {
	a.log = append(a.log, advOpString(op))
	return a.g.AddOp(op)
}

func advOpString(op *graph.Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s#%d(", op.Kind, op.ID)
	for i, t := range op.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "t%d:%s:%s", t.ID, t.DataType, graph.DimsString(t.Dims))
	}
	b.WriteString(") -> ")
	for _, t := range op.Outputs {
		fmt.Fprintf(&b, "t%d:%s ", t.ID, t.DataType)
	}
	for _, n := range op.AttrNames() {
		at, _ := op.Attr(n)
		fmt.Fprintf(&b, "%s=%s ", n, at)
	}
	return b.String()
}

var advEltKinds = []graph.OpKind{graph.Abs, graph.Clamp, graph.Elu, graph.Exp, graph.GELU, graph.HardSigmoid,
	graph.HardSwish, graph.LeakyReLU, graph.Log, graph.Mish, graph.Pow, graph.Sigmoid, graph.SoftPlus,
	graph.ReLU, graph.Round, graph.Sqrt, graph.Square, graph.Tanh}
var advBinKinds = []graph.OpKind{graph.Add, graph.Multiply, graph.Maximum, graph.Minimum, graph.Divide, graph.Subtract}
var advRedKinds = []graph.OpKind{graph.ReduceSum, graph.ReduceMean, graph.ReduceMax, graph.ReduceMin,
	graph.ReduceProd, graph.ReduceL1, graph.ReduceL2}

func (a *advGen) eltAttrs(op *graph.Op) {
	r := a.r
	switch op.Kind {
	case graph.Clamp:
		lo := float32(r.Float64()*2 - 1.5)
		op.SetAttr("min", lo).SetAttr("max", lo+float32(r.Float64()*2))
	case graph.Elu, graph.LeakyReLU:
		op.SetAttr("alpha", float32(r.Float64()*2-0.5))
	case graph.HardSigmoid:
		op.SetAttr("alpha", float32(r.Float64())).SetAttr("beta", float32(r.Float64()))
	case graph.Pow:
		betas := []float32{0, 1, 2, 3, -1, -2, 0.5, -0.5, 1.5}
		op.SetAttr("beta", betas[r.IntN(len(betas))])
	case graph.SoftPlus:
		if r.IntN(2) == 0 {
			op.SetAttr("beta", float32(r.Float64()*3-1.5+0.01))
		}
	case graph.GELU:
		if r.IntN(2) == 0 {
			op.SetAttr("mode", "gelu_tanh")
		}
	}
}

// broadcastDims returns dims for a binary operand that broadcasts onto
// out (sometimes, with p small, one that enlarges it).
func (a *advGen) broadcastDims(out []int64) []int64 {
	r := a.r
	k := r.IntN(len(out) + 1)
	d := append([]int64{}, out[len(out)-k:]...)
	for i := range d {
		if r.IntN(3) == 0 {
			d[i] = 1
		}
	}
	if r.IntN(12) == 0 {
		// enlarge: prepend a dim, or set a 1 dim to 3
		if r.IntN(2) == 0 {
			d = append([]int64{2}, d...)
		} else {
			for i := range d {
				if d[i] == 1 {
					d[i] = 3
					break
				}
			}
		}
	}
	return d
}

// build builds one random graph and returns the graph-output ids.
func (a *advGen) build() error {
	r := a.r
	srcDTs := []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8}
	srcDT := srcDTs[r.IntN(len(srcDTs))]
	rank := r.IntN(5)
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = int64(1 + r.IntN(5))
		if r.IntN(30) == 0 {
			dims[i] = 0
		}
	}
	if a.highRank {
		rank = r.IntN(13)
		dims = make([]int64, rank)
		for i := range dims {
			dims[i] = int64(1 + r.IntN(3))
		}
		for advNum(dims) > 20000 {
			dims[r.IntN(rank)] = 1
		}
	}
	if a.big {
		rank = 1 + r.IntN(3)
		dims = make([]int64, rank)
		for i := range dims {
			dims[i] = int64(1 + r.IntN(4))
		}
		for advNum(dims) < 1<<17 {
			dims[r.IntN(rank)] *= int64(2 + r.IntN(5))
		}
	}
	kind := advRedKinds[r.IntN(len(advRedKinds))]
	pre := graph.OpKind(0)
	if srcDT.IsFloat() {
		switch r.IntN(6) {
		case 0:
			pre = graph.Abs
		case 1:
			pre = graph.Square
		case 2:
			pre, kind = graph.Exp, graph.ReduceSum
		}
	}
	lo, hi := -2.0, 2.0
	if kind == graph.ReduceProd {
		lo, hi = -1.3, 1.3
		a.prod = true
	}
	src := a.input(srcDT, dims, lo, hi)
	if r.IntN(8) == 0 && rank > 0 {
		// a second consumer of the src: another reduction, a separate partition
	}
	redIn := src
	if pre != 0 {
		t := graph.NewLogicalTensorAny(a.tid(), srcDT, nil)
		if r.IntN(2) == 0 {
			t = graph.NewLogicalTensor(t.ID, srcDT, dims)
		}
		if r.IntN(4) == 0 {
			t.DataType = dtypes.F32
			if srcDT != dtypes.F32 {
				t.DataType = srcDT
			}
		}
		if err := a.add(graph.NewOp(a.oid(), pre, "pre").AddInput(src).AddOutput(t)); err != nil {
			return err
		}
		redIn = t
	}
	// axes
	axes := advRandomAxes(r, rank)
	r.Shuffle(len(axes), func(i, j int) { axes[i], axes[j] = axes[j], axes[i] })
	keep := r.IntN(2) == 0
	redDT := srcDT
	if srcDT.IsInt8() || r.IntN(3) == 0 {
		redDT = dtypes.F32
	}
	if srcDT.IsFloat() && r.IntN(15) == 0 {
		redDT = []dtypes.DataType{dtypes.S32, dtypes.S8, dtypes.U8}[r.IntN(3)]
	}
	if srcDT.IsInt8() && r.IntN(3) == 0 {
		redDT = []dtypes.DataType{dtypes.S32, dtypes.S8, dtypes.U8, dtypes.BF16, dtypes.F16}[r.IntN(5)]
	}
	var side *graph.LogicalTensor
	if r.IntN(5) == 0 && srcDT.IsFloat() {
		// another partition's output, ready before the main reduction
		st := graph.NewLogicalTensorAny(a.tid(), dtypes.F32, nil)
		sk := []graph.OpKind{graph.ReduceMax, graph.ReduceMean, graph.ReduceL2}[r.IntN(3)]
		if err := a.add(graph.NewOp(a.oid(), sk, "side").AddInput(src).AddOutput(st).SetAttr("axes", axes).SetAttr("keep_dims", keep)); err != nil {
			return err
		}
		side = &st
	}
	red := graph.NewOp(a.oid(), kind, "red").AddInput(redIn)
	if keep || r.IntN(2) == 0 {
		red.SetAttr("keep_dims", keep)
	}
	runtimeAxes := r.IntN(4) == 0
	if runtimeAxes {
		adt := dtypes.S32
		if r.IntN(2) == 0 {
			adt = dtypes.S64
		}
		at := graph.NewLogicalTensor(a.tid(), adt, []int64{int64(len(axes))})
		if r.IntN(3) == 0 {
			at.Dims = []int64{-1}
			at.Strides = []int64{1}
		}
		a.axes[at.ID] = axes
		red.AddInput(at)
	} else if len(axes) > 0 || r.IntN(2) == 0 {
		red.SetAttr("axes", axes)
	}
	cur := graph.NewLogicalTensorAny(a.tid(), redDT, nil)
	red.AddOutput(cur)
	if err := a.add(red); err != nil {
		return err
	}
	// out dims, for operand shapes
	reduce := advReduceMask(rank, axes)
	outDims := advKeptDims(dims, reduce, keep)
	if pre == graph.Exp {
		t := graph.NewLogicalTensorAny(a.tid(), redDT, nil)
		if err := a.add(graph.NewOp(a.oid(), graph.Log, "log").AddInput(cur).AddOutput(t)); err != nil {
			return err
		}
		cur = t
	}
	if redDT.IsInt() {
		return nil
	}
	nPost := r.IntN(7)
	for i := 0; i < nPost; i++ {
		last := i == nPost-1
		odt := dtypes.F32
		if r.IntN(3) == 0 && cur.DataType == srcDT {
			odt = srcDT
		}
		if !srcDT.IsFloat() {
			odt = cur.DataType
		}
		if last && r.IntN(6) == 0 && cur.DataType == dtypes.F32 {
			odt = []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32}[r.IntN(3)]
		}
		out := graph.NewLogicalTensorAny(a.tid(), odt, nil)
		var op *graph.Op
		if r.IntN(2) == 0 {
			k := advEltKinds[r.IntN(len(advEltKinds))]
			if odt.IsInt() || odt != cur.DataType {
				if cur.DataType != dtypes.F32 && !odt.IsInt() {
					out.DataType = cur.DataType
				}
				if odt.IsInt() && cur.DataType != dtypes.F32 {
					out.DataType = cur.DataType
				}
			}
			op = graph.NewOp(a.oid(), k, "elt").AddInput(cur).AddOutput(out)
			a.eltAttrs(op)
		} else {
			k := advBinKinds[r.IntN(len(advBinKinds))]
			odims := a.broadcastDims(outDims)
			bdts := []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S32, dtypes.S8, dtypes.U8}
			bdt := bdts[r.IntN(len(bdts))]
			lo, hi := -2.0, 2.0
			if k == graph.Divide {
				lo, hi = 0.5, 2
			}
			var other graph.LogicalTensor
			switch {
			case side != nil && r.IntN(2) == 0:
				other = *side
				side = nil
			case r.IntN(6) == 0 && broadcastsOK(dims, outDims):
				other = src // the reduction's own src as the operand
			default:
				other = a.input(bdt, odims, lo, hi)
			}
			if other.DataType.IsInt() && !cur.DataType.IsFloat() {
				other = a.input(dtypes.F32, odims, lo, hi)
			}
			op = graph.NewOp(a.oid(), k, "bin")
			if r.IntN(3) == 0 {
				op.AddInput(other).AddInput(cur)
			} else {
				op.AddInput(cur).AddInput(other)
			}
			if r.IntN(8) == 0 {
				op.SetAttr("auto_broadcast", "none")
			}
			op.AddOutput(out)
		}
		if err := a.add(op); err != nil {
			return err
		}
		// sometimes read an intermediate a second time
		if r.IntN(10) == 0 {
			t2 := graph.NewLogicalTensorAny(a.tid(), op.Outputs[0].DataType, nil)
			if op.Outputs[0].DataType.IsFloat() {
				if err := a.add(graph.NewOp(a.oid(), graph.ReLU, "second").AddInput(op.Outputs[0]).AddOutput(t2)); err != nil {
					return err
				}
			}
		} else if r.IntN(10) == 0 && !last {
			if err := a.add(graph.NewOp(a.oid(), graph.End, "").AddInput(op.Outputs[0])); err != nil {
				return err
			}
		}
		cur = op.Outputs[0]
		if b, _ := advBroadcast(outDims, advOperandDims(op, cur.ID)); b != nil {
			outDims = b
		}
		if cur.DataType.IsInt() {
			break
		}
	}
	return nil
}

func advFusedIntermediates(parts []*partition.Partition) map[uint64]bool {
	m := map[uint64]bool{}
	for _, p := range parts {
		if !p.IsSupported() {
			continue
		}
		ops := p.Ops()
		for _, op := range ops[:len(ops)-1] {
			m[op.Outputs[0].ID] = true
		}
	}
	return m
}

func advOperandDims(op *graph.Op, curID uint64) []int64 {
	if !op.Kind.IsBinary() {
		return nil
	}
	o := op.Inputs[1]
	if o.ID == curID {
		o = op.Inputs[0]
	}
	return o.Dims
}

func broadcastsOK(b, out []int64) bool {
	d, err := advBroadcast(out, b)
	return err == nil && len(d) == len(out)
}

// advRanks are the partition's graph outputs: tensors nobody consumes, or
// consumed by End.
func advOutputs(g *graph.Graph) []uint64 {
	var ids []uint64
	for _, op := range g.Ops() {
		for _, t := range op.Outputs {
			cons := g.Consumers(t.ID)
			if len(cons) == 0 {
				ids = append(ids, t.ID)
				continue
			}
			for _, c := range cons {
				if c.Kind == graph.End {
					ids = append(ids, t.ID)
					break
				}
			}
		}
	}
	return ids
}

func advTol(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.BF16:
		return 1.0 / 64
	case dtypes.F16:
		return 4e-3
	}
	return 1e-4
}

func TestAdvRandomGraphs(t *testing.T) {
	n := 3000
	if s := os.Getenv("ADV_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	seed0 := uint64(1)
	if s := os.Getenv("ADV_SEED"); s != "" {
		seed0, _ = strconv.ParseUint(s, 10, 64)
	}
	special := os.Getenv("ADV_SPECIAL") != ""
	if os.Getenv("ADV_LAYOUTS") != "" {
		advLayoutRand = rand.New(rand.NewPCG(1, 2))
		defer func() { advLayoutRand = nil }()
	}
	if os.Getenv("ADV_EXACT_INT") != "" {
		defer func(v float64) { advIntSlack = v }(advIntSlack)
		advIntSlack = 0
	}
	if s := os.Getenv("ADV_ISA"); s != "" {
		isa, _ := jit.ParseISA(s)
		defer jit.SetMaxISA(jit.SetMaxISA(isa))
	}
	advCacheCapacity(t, 0)
	fails, built, ran, k1 := 0, 0, 0, 0
	verbose := os.Getenv("ADV_V") != ""
	for seed := seed0; seed < seed0+uint64(n) && fails < 15; seed++ {
		a := &advGen{r: rand.New(rand.NewPCG(seed, 99)), g: graph.New(), inputs: map[uint64]advVal{}, axes: map[uint64][]int64{}, special: special, big: os.Getenv("ADV_BIG") != "", highRank: os.Getenv("ADV_HIGH_RANK") != ""}
		if err := a.build(); err != nil {
			continue
		}
		if err := a.g.Finalize(); err != nil {
			continue
		}
		built++
		_, err := advEvalGraph(a.g, a.inputs, a.axes, nil)
		if err != nil {
			continue // the graph has no meaning (a broadcast error op by op)
		}
		policy := partition.Fusion
		if os.Getenv("ADV_DEBUG_POLICY") != "" {
			policy = partition.Debug
		}
		got, parts, err := advRunGDNN(a.g, policy, a.inputs, a.axes)
		want, _ := advEvalGraph(a.g, a.inputs, a.axes, advFusedIntermediates(parts))
		if err != nil && os.Getenv("ADV_K1") == "" && advEnlargeRefusal(err) {
			k1++
			continue
		}
		if err != nil {
			fails++
			t.Errorf("seed %d: gdnn failed on a graph the op-by-op evaluation computes: %v\n%s\nparts %v", seed, err, strings.Join(a.log, "\n"), parts)
			continue
		}
		ran++
		for _, id := range advOutputs(a.g) {
			lt, _ := a.g.Tensor(id)
			w, g := want[id], got[id]
			if fmt.Sprint(w.dims) != fmt.Sprint(g.dims) {
				fails++
				t.Errorf("seed %d: tensor %d dims %v, want %v\n%s\nparts %v", seed, id, g.dims, w.dims, strings.Join(a.log, "\n"), parts)
				continue
			}
			scale := 1.0
			for _, x := range w.v {
				if !math.IsInf(x, 0) && x == x {
					scale = math.Max(scale, math.Abs(x))
				}
			}
			tol := advTol(lt.DataType)
			for _, op := range a.g.Ops() {
				for _, x := range append(op.Inputs, op.Outputs...) {
					tol = max(tol, advTol(x.DataType))
				}
			}
			for i := range w.v {
				if !advClose(lt.DataType, g.v[i], w.v[i], tol, tol*scale) {
					fails++
					t.Errorf("seed %d: tensor %d (%s) elem %d = %v, want %v\n%s\nparts %v\ninputs %v", seed, id, lt.DataType, i, g.v[i], w.v[i], strings.Join(a.log, "\n"), parts, advShort(a.inputs))
					if verbose {
						for tid := range want {
							t.Logf("t%d want %v got %v", tid, want[tid].v, got[tid].v)
						}
					}
					break
				}
			}
		}
	}
	t.Logf("built %d graphs, ran %d, %d failures, %d execute-time shape refusals", built, ran, fails, k1)
}

func advShort(in map[uint64]advVal) string {
	var b strings.Builder
	for id, v := range in {
		s := fmt.Sprint(v.v)
		if len(s) > 300 {
			s = s[:300] + "..."
		}
		fmt.Fprintf(&b, "t%d %v: %s\n", id, v.dims, s)
	}
	return b.String()
}

// TestAdvJSONRoundTrip writes random graphs as JSON, reads them back, and
// checks that the partitions and every result are the same.
func TestAdvJSONRoundTrip(t *testing.T) {
	n := 3000
	if s := os.Getenv("ADV_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	advCacheCapacity(t, 0)
	fails := 0
	for seed := uint64(1); seed <= uint64(n) && fails < 10; seed++ {
		a := &advGen{r: rand.New(rand.NewPCG(seed, 7)), g: graph.New(), inputs: map[uint64]advVal{}, axes: map[uint64][]int64{}}
		if a.build() != nil || a.g.Finalize() != nil {
			continue
		}
		var buf strings.Builder
		if err := a.g.WriteJSON(&buf); err != nil {
			fails++
			t.Errorf("seed %d: WriteJSON: %v\n%s", seed, err, strings.Join(a.log, "\n"))
			continue
		}
		g2, err := graph.ReadJSON(strings.NewReader(buf.String()))
		if err == nil {
			err = g2.Finalize()
		}
		if err != nil {
			fails++
			t.Errorf("seed %d: ReadJSON of WriteJSON: %v\n%s\n%s", seed, err, strings.Join(a.log, "\n"), buf.String())
			continue
		}
		got1, p1, err1 := advRunGDNN(a.g, partition.Fusion, a.inputs, a.axes)
		got2, p2, err2 := advRunGDNN(g2, partition.Fusion, a.inputs, a.axes)
		if fmt.Sprint(p1) != fmt.Sprint(p2) || (err1 == nil) != (err2 == nil) {
			fails++
			t.Errorf("seed %d: partitions differ after a JSON round trip:\n%v (%v)\n%v (%v)\n%s", seed, p1, err1, p2, err2, strings.Join(a.log, "\n"))
			continue
		}
		if err1 != nil {
			continue
		}
		for _, id := range advOutputs(a.g) {
			if fmt.Sprint(got1[id]) != fmt.Sprint(got2[id]) {
				fails++
				t.Errorf("seed %d: tensor %d differs after a JSON round trip: %v vs %v", seed, id, got1[id], got2[id])
			}
		}
	}
}
