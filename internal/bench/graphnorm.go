package bench

import (
	"fmt"
	"math"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// The graph driver's normalization partitions: a SoftMax, LogSoftmax,
// LayerNorm, RMSNorm or GroupNorm op, then the ops fused after it
// (eltwise, binary, TypeCast, Quantize). gdnnbench fills src as the
// softmax, lnorm and gnorm drivers do (so that a layer norm's mean and
// variance are exact), computes the normalization with those drivers'
// float64 references, applies the fused ops in float64, and compares with
// the drivers' thresholds, widened for the fused ops. A normalization
// written out in ops (graphdecomposed.go) is checked the same way, its
// ops evaluated one by one in float64 in place of the driver's reference.

// graphNorm is a supported normalization partition of a graph case,
// compiled, with its buffers.
type graphNorm struct {
	cp    *partition.CompiledPartition
	op    *graph.Op   // the normalization (a decomposed one's stand-in)
	chain []*graph.Op // the ops fused after it
	dec   *decomposition
	// res is the residual sum fused before the normalization (nil:
	// none); src is then its x.
	res *normResidual
	// dq is the Dequantize fused before the normalization (nil: none),
	// whose per-tensor parameters q are; src is then its 8-bit input.
	dq      *graph.Op
	q       graph.QuantParams
	ins     []graph.LogicalTensor
	inBufs  []buffer
	outs    []graph.LogicalTensor
	outBufs [2][]buffer // the second set for bitwise mode
	// Indexes into ins (src, gamma, beta, a decomposed normalization's
	// eps; -1: absent) and outs (dst, mean, variance; -1: absent). mean
	// is SoftMax's stats, its second output.
	src, gamma, beta, eps int
	dst, mean, vari       int
	ctimeMs               float64
	inTs, outTs           [2][]partition.Tensor
}

// buildGraphNorm compiles partition p of g (its first op a
// normalization, or its first ops a decomposed one: dec) with the graph's input shapes and allocates its
// buffers, or says why gdnnbench does not check it.
func buildGraphNorm(g *graph.Graph, p *partition.Partition, dec *decomposition) (*graphNorm, *result) {
	fail := func(err error) (*graphNorm, *result) {
		return nil, &result{state: stateOf(err), reason: reasonOf(err)}
	}
	unimpl := func(format string, args ...any) (*graphNorm, *result) {
		return nil, &result{state: "UNIMPLEMENTED", reason: fmt.Sprintf(format, args...)}
	}
	ops := normOps(p)
	n := &graphNorm{op: ops[0], chain: ops[1:], src: -1, gamma: -1, beta: -1, eps: -1, dst: -1, mean: -1, vari: -1}
	epsID := uint64(math.MaxUint64)
	if dec != nil {
		n.op, n.chain, n.dec = dec.standIn(), ops[len(dec.ops):], dec
		if t, ok := dec.eps(); ok {
			epsID = t.ID
		}
	}
	srcID := n.op.Inputs[0].ID
	if k := residualOps(p); k > 0 {
		n.res = newNormResidual(p.Ops()[:k])
		srcID = n.res.add.Inputs[0].ID
	} else if all := p.Ops(); len(all) > len(ops) {
		n.dq, srcID = all[0], all[0].Inputs[0].ID
		var err error
		if n.q, err = graph.QuantParamsOf(n.dq, max(len(n.dq.Inputs[0].Dims), 1)); err != nil {
			return fail(err)
		}
		// The statistics fills keep a row's mean exact, which a mean of
		// x - mean then needs: x = (q - zp) * scale is exact for a power
		// of two only (of either sign: Frexp's fraction is then ±0.5).
		if frac, _ := math.Frexp(float64(n.q.Scales[0])); math.Abs(frac) != 0.5 && (n.op.Kind == graph.LayerNorm || n.op.Kind == graph.GroupNorm) {
			return unimpl("gdnnbench checks a %s after a fused Dequantize of a power-of-two scale (its fill's exact mean), not %v",
				n.op.Kind, n.q.Scales[0])
		}
	}
	if n.op.Kind == graph.GroupNorm {
		if f, _ := n.op.Str("data_format"); f == "NXC" {
			return unimpl("gdnnbench's GroupNorm reference takes data_format NCX (channels in dim 1)")
		}
	}
	val := n.op.Outputs[0].ID
	for _, op := range n.chain {
		if len(op.Outputs) != 1 || !readsValue(op, val) {
			return unimpl("gdnnbench has no reference for %s after %s", op, n.op)
		}
		switch {
		case op.Kind == graph.TypeCast, op.Kind == graph.Quantize:
		default:
			if _, _, err := refOpOf(op, val, nil); err != nil {
				return fail(err)
			}
		}
		val = op.Outputs[0].ID
	}
	for _, t := range p.Inputs() {
		ct, ok := g.Tensor(t.ID)
		if !ok {
			return fail(status.Errorf(status.InvalidGraph, "partition input %d is not in the graph", t.ID))
		}
		n.ins = append(n.ins, ct)
	}
	var outs []graph.LogicalTensor
	for _, t := range p.Outputs() {
		outs = append(outs, compileOutput(t))
	}
	t0 := time.Now()
	cp, err := p.Compile(n.ins, outs)
	n.ctimeMs = float64(time.Since(t0)) / float64(time.Millisecond)
	if err != nil {
		return fail(err)
	}
	n.cp = cp
	need := int64(0)
	for i := range n.ins {
		if n.ins[i], err = cp.QueryLogicalTensor(n.ins[i].ID); err != nil {
			return fail(err)
		}
		switch n.ins[i].ID {
		case srcID:
			n.src = i
		case inputID(n.op, 1):
			n.gamma = i
		case inputID(n.op, 2):
			n.beta = i
		case epsID:
			n.eps = i
		}
		if n.res != nil {
			n.res.port(n.ins[i].ID, i)
		}
	}
	for _, o := range outs {
		lt, err := cp.QueryLogicalTensor(o.ID)
		if err != nil {
			return fail(err)
		}
		switch o.ID {
		case val:
			n.dst = len(n.outs)
		case outputID(n.op, 1):
			n.mean = len(n.outs)
		case outputID(n.op, 2):
			n.vari = len(n.outs)
		case n.res.sumID():
			n.res.sum = len(n.outs)
		default:
			return unimpl("partition output %d is neither the chain's result nor a statistic; gdnnbench checks those", o.ID)
		}
		n.outs = append(n.outs, lt)
	}
	if n.src < 0 || n.dst < 0 || epsID != math.MaxUint64 && n.eps < 0 {
		return unimpl("the partition does not read the normalization's src or write the chain's result")
	}
	if why := n.res.check(n.src); why != "" {
		return unimpl("%s", why)
	}
	if !sameDims(n.outs[n.dst].Dims, n.ins[n.src].Dims) {
		return unimpl("the fused ops broadcast the result from %v to %v; gdnnbench's reference covers same-shape chains",
			n.ins[n.src].Dims, n.outs[n.dst].Dims)
	}
	for _, lt := range append(append([]graph.LogicalTensor(nil), n.ins...), append(n.outs, n.outs...)...) {
		s, err := spanOf(lt.Dims, lt.Strides)
		if err != nil {
			return fail(err)
		}
		need += s * int64(max(lt.DataType.Size(), 1))
	}
	if err := checkMemory(need + 8*4*max(n.ins[n.src].NumElements(), 0)); err != nil {
		return fail(err)
	}
	mk := func(lt graph.LogicalTensor) (buffer, error) {
		s, err := spanOf(lt.Dims, lt.Strides)
		if err != nil {
			return buffer{}, err
		}
		return newBuffer(lt.DataType, s)
	}
	for _, lt := range n.ins {
		b, err := mk(lt)
		if err != nil {
			return fail(err)
		}
		n.inBufs = append(n.inBufs, b)
	}
	for i := range n.outBufs {
		for _, lt := range n.outs {
			b, err := mk(lt)
			if err != nil {
				return fail(err)
			}
			n.outBufs[i] = append(n.outBufs[i], b)
		}
	}
	return n, nil
}

// readsValue reports whether op reads tensor id.
func readsValue(op *graph.Op, id uint64) bool {
	for _, t := range op.Inputs {
		if t.ID == id {
			return true
		}
	}
	return false
}

// inputID and outputID are the id of op's i-th input or output, or an
// id no tensor has.
func inputID(op *graph.Op, i int) uint64 {
	if i < len(op.Inputs) {
		return op.Inputs[i].ID
	}
	return math.MaxUint64
}

func outputID(op *graph.Op, i int) uint64 {
	if i < len(op.Outputs) {
		return op.Outputs[i].ID
	}
	return math.MaxUint64
}

// exec runs the partition on the inputs into output set i.
func (n *graphNorm) exec(i int) error {
	if n.inTs[i] == nil {
		for j, lt := range n.ins {
			t, err := partition.NewTensor(lt, n.inBufs[j].data())
			if err != nil {
				return err
			}
			n.inTs[i] = append(n.inTs[i], t)
		}
		for j, lt := range n.outs {
			t, err := partition.NewTensor(lt, n.outBufs[i][j].data())
			if err != nil {
				return err
			}
			n.outTs[i] = append(n.outTs[i], t)
		}
	}
	return n.cp.Execute(n.inTs[i], n.outTs[i])
}

// isSoftmax reports whether the partition's op is SoftMax or LogSoftmax.
func (n *graphNorm) isSoftmax() bool {
	return n.op.Kind == graph.SoftMax || n.op.Kind == graph.LogSoftmax
}

// decomposedEps is the epsilon gdnnbench gives a decomposed
// normalization's eps tensor: benchdnn's lnorm default, exact in every
// float type.
const decomposedEps = 1.0 / 16

// axisOf is the op's axis attribute attr (def where absent, which the
// schema's default makes rare), counted from the front.
func (n *graphNorm) axisOf(attr string, def int64) int {
	rank := len(n.ins[n.src].Dims)
	a, ok := n.op.Int(attr)
	if !ok {
		a = def
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a)
}

// fill fills the inputs for a check: src as the drivers fill it (negative
// chooses softmax's negative mode), gamma and beta with benchdnn's
// scale and shift, the fused ops' operands at random.
func (n *graphNorm) fill(negative bool, seed uint64) {
	src := n.ins[n.src]
	dims := src.Dims
	var vals []float64
	switch {
	case n.isSoftmax():
		lowest := math.Max(lowestOf(src.DataType), lowestOf(n.op.Outputs[0].DataType))
		if n.dq != nil {
			lowest = -128 // the s8 fill, shifted into u8's range below
		}
		vals = softmaxFill(dims, n.axisOf("axis", 1), negative, lowest, seed)
		if n.dq != nil && src.DataType == dtypes.U8 {
			for i := range vals {
				vals[i] += 128
			}
		}
	case n.op.Kind == graph.GroupNorm:
		groups, _ := n.op.Int("groups")
		vals = n.statsFill(dims[0]*groups, rows(dims[1:])/max(groups, 1), seed)
	case n.dec != nil:
		vals = n.dec.fillStats(func(rows, l int64) []float64 { return n.statsFill(rows, l, seed) })
	default:
		b := n.axisOf("begin_norm_axis", -1)
		vals = n.statsFill(rows(dims[:b]), rows(dims[b:]), seed)
	}
	if n.res != nil {
		n.res.split(n, vals, seed)
	} else {
		storeLogical(n.inBufs[n.src], dims, src.Strides, vals)
	}
	for i, lt := range n.ins {
		if n.res.fills(i) {
			continue
		}
		switch i {
		case n.src:
		case n.gamma:
			storeLogical(n.inBufs[i], lt.Dims, lt.Strides, scaleFill(rows(lt.Dims)))
		case n.beta:
			storeLogical(n.inBufs[i], lt.Dims, lt.Strides, shiftFill(rows(lt.Dims)))
		case n.eps:
			storeLogical(n.inBufs[i], lt.Dims, lt.Strides, []float64{decomposedEps})
		default:
			fillOperand(n.inBufs[i], lt.Dims, lt.Strides, seed+uint64(i)+1)
		}
	}
}

// statsFill is the fill of rows of l elements of src whose statistics
// are exact: statsFill, or int8Fill for the 8-bit src of a fused
// Dequantize (exact after a power-of-two scale, which buildGraphNorm
// asks for where the mean is subtracted).
func (n *graphNorm) statsFill(rows, l int64, seed uint64) []float64 {
	src := n.ins[n.src].DataType
	if n.dq != nil {
		return int8Fill(rows, l, src, seed)
	}
	if n.res != nil {
		src = n.res.narrowest(n)
	}
	return statsFill(rows, l, src, seed)
}

// srcValues are the normalization's src values: src's, after a fused
// Dequantize (x - zp) * scale, computed in f32 as the op computes them,
// or a fused residual sum's, as its Adds compute it.
func (n *graphNorm) srcValues() []float64 {
	if n.res != nil {
		return n.res.sumValues(n)
	}
	src := n.ins[n.src]
	x := loadLogical(n.inBufs[n.src], src.Dims, src.Strides)
	if n.dq != nil {
		for i, v := range x {
			x[i] = float64(float32(v-float64(n.q.Zps[0])) * n.q.Scales[0])
		}
	}
	return x
}

// check fills, runs and compares every output with the reference (twice
// for the softmaxes, once per fill mode).
func (r *runner) checkGraphNorm(n *graphNorm, seed uint64) *result {
	for _, negative := range map[bool][]bool{true: {true, false}, false: {false}}[n.isSoftmax()] {
		n.fill(negative, seed)
		if err := n.exec(0); err != nil {
			return &result{state: stateOf(err), reason: reasonOf(err)}
		}
		if fail := r.compareGraphNorm(n, negative); fail != nil {
			return fail
		}
	}
	return nil
}

// compareGraphNorm computes the reference of the filled inputs and
// compares output set 0 with it.
func (r *runner) compareGraphNorm(n *graphNorm, negative bool) *result {
	dims := n.ins[n.src].Dims
	x := n.srcValues()
	var gamma, beta []float64
	if n.gamma >= 0 {
		gamma = loadLogical(n.inBufs[n.gamma], n.ins[n.gamma].Dims, n.ins[n.gamma].Strides)
	}
	if n.beta >= 0 {
		beta = loadLogical(n.inBufs[n.beta], n.ins[n.beta].Dims, n.ins[n.beta].Strides)
	}
	e, _ := n.op.Float("epsilon") // the schema's default where absent
	eps := float64(e)
	dst := n.outs[n.dst]
	var vals, mean, vari []float64
	var rule normRule
	base := 5e-7
	switch {
	case n.dec != nil:
		ins := map[uint64]f64Tensor{n.op.Inputs[0].ID: {dims: dims, v: x}}
		if n.eps >= 0 {
			lt := n.ins[n.eps]
			ins[lt.ID] = f64Tensor{dims: lt.Dims, v: loadLogical(n.inBufs[n.eps], lt.Dims, lt.Strides)}
		}
		out, err := n.dec.eval(ins)
		if err != nil {
			return &result{state: stateOf(err), reason: reasonOf(err)}
		}
		vals = out.v
		rule = statsRule(dst.DataType, base)
		if n.dec.softmax {
			rule = softmaxRule(dst.DataType, false, "")
		}
		if n.dec.has16BitStep() {
			rule.slack = math.Max(rule.slack, epsilon(dst.DataType))
		}
	case n.op.Kind == graph.SoftMax, n.op.Kind == graph.LogSoftmax:
		mode, _ := n.op.Str("mode")
		log := n.op.Kind == graph.LogSoftmax
		vals = refSoftmax(x, dims, n.axisOf("axis", 1), log, mode == "inf_as_zero")
		rule = softmaxRule(dst.DataType, log, "")
		if n.mean >= 0 {
			mean = refSoftmaxStats(x, dims, n.axisOf("axis", 1), mode == "inf_as_zero")
		}
	case n.op.Kind == graph.GroupNorm:
		groups, _ := n.op.Int("groups")
		spatial := rows(dims) / max(dims[0]*dims[1], 1)
		vals, mean, vari = refGroupNorm(x, dims[0], dims[1], spatial, groups, eps, gamma, beta)
		base = 6e-7
		rule = statsRule(dst.DataType, base)
		if beta != nil {
			rule.shift = make([]float64, len(x))
			for i := range rule.shift {
				rule.shift[i] = beta[(int64(i)/max(spatial, 1))%dims[1]]
			}
		}
	default:
		b := n.axisOf("begin_norm_axis", -1)
		l := rows(dims[b:])
		vals, mean, vari = refLayerNorm(x, rows(dims[:b]), l, eps, gamma, beta, n.op.Kind == graph.RMSNorm)
		rule = statsRule(dst.DataType, base)
		if beta != nil {
			rule.shift = broadcastLast(beta, int64(len(x)))
		}
	}
	if err := n.applyChain(vals, &rule); err != nil {
		return &result{state: stateOf(err), reason: reasonOf(err)}
	}
	checks := []struct {
		what string
		out  int
		ref  []float64
		rule normRule
	}{{"DST", n.dst, vals, rule}, {"MEAN", n.mean, mean, statsRule(dtypes.F32, base)}, {"VAR", n.vari, vari, statsRule(dtypes.F32, base)}}
	if n.op.Kind == graph.SoftMax {
		// Its stats, with benchdnn's graph threshold for them: its
		// eltwise log's.
		checks[1].what, checks[1].rule = "STATS", normRule{trh: softmaxStatsTrh}
	}
	prefix := ""
	if n.isSoftmax() {
		prefix = map[bool]string{true: "negative fill: ", false: "overflow fill: "}[negative]
	}
	// A wrong residual sum makes every output after it wrong: it is
	// reported first.
	if fail := r.compareResidualSum(n, x); fail != nil {
		return fail
	}
	for _, c := range checks {
		if c.out < 0 {
			continue
		}
		lt := n.outs[c.out]
		res := compareNorm(n.outBufs[0][c.out], lt.Dims, lt.Strides, c.ref, c.rule, c.what)
		if r.g.verbose >= 1 {
			fmt.Fprintf(r.out, "[%s%s] outputs:%d max_rdiff/trh:%.3g\n", prefix, c.what, res.total, res.worst)
		}
		if res.errors > 0 {
			return &result{state: "FAILED", reason: fmt.Sprintf("%s%s errors:%d total:%d", prefix, c.what, res.errors, res.total), detail: res.lines}
		}
	}
	return nil
}

// applyChain applies the fused ops to vals (logical order over src's
// dims) in float64, and widens rule for them: the post-ops' thresholds
// (as the reduction chains have them), a 16-bit tensor between ops (which
// gdnn may or may not round to, fused), and one step of a quantized
// result.
func (n *graphNorm) applyChain(vals []float64, rule *normRule) error {
	dims := n.ins[n.src].Dims
	val := n.op.Outputs[0].ID
	var post []refPostOp
	if dt := n.op.Outputs[0].DataType; len(n.chain) > 0 && dt.Size() == 2 {
		rule.slack = math.Max(rule.slack, epsilon(dt))
	}
	// beta's check for cancellation (rule.shift) judges the op's own
	// dst. After fused ops its allowance, the threshold of |v - beta| +
	// |beta|, goes through them as an error bound, as the lnorm and gnorm
	// drivers' fusedRule does: a value that nearly cancels beta (which
	// the 8-bit fill's values do now and then) is not judged against its
	// own small magnitude.
	// Without a beta of its own (shift 0), the op's dst still carries
	// its threshold's error into the chain: a fused Add of a shift (the
	// beta a decomposed layer norm's exporter writes as a post-op) may
	// cancel it as the op's own beta would.
	var errs []float64
	if len(n.chain) > 0 {
		errs = make([]float64, len(vals))
		for i, v := range vals {
			sh := 0.0
			if rule.shift != nil {
				sh = rule.shift[i]
			}
			errs[i] = rule.trh * (math.Abs(v-sh) + math.Abs(sh))
		}
		rule.shift = nil
	}
	for _, op := range n.chain {
		switch op.Kind {
		case graph.TypeCast:
			if dt := op.Outputs[0].DataType; dt.Size() == 2 && op != n.chain[len(n.chain)-1] {
				rule.slack = math.Max(rule.slack, epsilon(dt))
			}
		case graph.Quantize:
			q, err := graph.QuantParamsOf(op, len(dims))
			if err != nil {
				return err
			}
			inner := int64(1)
			if q.PerChannel {
				inner = rows(dims[q.Axis+1:])
			}
			for i := range vals {
				c := 0
				if q.PerChannel {
					c = int((int64(i) / inner) % dims[q.Axis])
				}
				vals[i] = vals[i]/float64(q.Scales[c]) + float64(q.Zps[c])
				if errs != nil {
					errs[i] /= math.Abs(float64(q.Scales[c]))
				}
			}
			rule.step = true
		default:
			rp, operand, err := refOpOf(op, val, dims)
			if err != nil {
				return err
			}
			if operand != nil {
				i := n.inputIndex(operand.ID)
				if i < 0 {
					return status.Errorf(status.Unimplemented, "%s: operand %d is not a partition input", op, operand.ID)
				}
				lt := n.ins[i]
				rp.operand, rp.view = n.inBufs[i], alignedView(lt.Dims, lt.Strides, dims)
			}
			chainOutput(vals, dims, []refPostOp{rp}, false, errs)
			post = append(post, rp)
		}
		val = op.Outputs[0].ID
	}
	rule.errs = errs
	if len(post) > 0 {
		trh, floor := threshold(n.outs[n.dst].DataType, post)
		rule.trh = math.Max(rule.trh, trh)
		rule.floor = math.Max(rule.floor, floor)
	}
	return nil
}

// inputIndex is the index in n.ins of tensor id, or -1.
func (n *graphNorm) inputIndex(id uint64) int {
	for i, lt := range n.ins {
		if lt.ID == id {
			return i
		}
	}
	return -1
}

// bitwiseGraphNorm runs the partition twice on the same inputs and
// compares every output bit for bit.
func bitwiseGraphNorm(n *graphNorm) *result {
	n.fill(false, 7)
	for i := range 2 {
		if err := n.exec(i); err != nil {
			return &result{state: stateOf(err), reason: reasonOf(err)}
		}
	}
	bad := 0
	for j, lt := range n.outs {
		forEachIndex(lt.Dims, [][]int64{lt.Strides}, func(_ int64, offs []int64) {
			if n.outBufs[0][j].bits(offs[0]) != n.outBufs[1][j].bits(offs[0]) {
				bad++
			}
		})
	}
	if bad > 0 {
		return &result{state: "FAILED", reason: fmt.Sprintf("bitwise: %d outputs differ between two runs", bad)}
	}
	return nil
}

// perfGraphNorm is a timed normalization partition's perf data: its
// inputs read and outputs written once each.
func (r *runner) perfGraphNorm(n *graphNorm, c graphCase, idx int, impl string, t Timing) *PerfData {
	bytes := func(lts []graph.LogicalTensor) int64 {
		s := int64(0)
		for _, lt := range lts {
			s += int64(lt.DataType.Size()) * max(lt.NumElements(), 0)
		}
		return s
	}
	src := n.ins[n.src]
	d := &PerfData{
		Driver: "graph", Engine: "cpu", Impl: impl, Desc: c.caseArg, DT: c.dt, Idx: idx,
		Sdt: src.DataType.String(), Ddt: n.outs[n.dst].DataType.String(), Alg: n.op.Kind.String(),
		IBytes: bytes(n.ins), OBytes: bytes(n.outs), Ops: float64(2 * max(src.NumElements(), 0)),
		Time: t, CTimeMs: n.ctimeMs, Threads: threads(),
	}
	if n.dec != nil {
		d.Alg = n.dec.name
	}
	d.ProbeBytes = int64(src.DataType.Size()) * max(src.NumElements(), 0)
	d.ReadBW = r.readBW(d.ProbeBytes)
	return d
}

// doGraphNorm runs normalization partition pi of np of a graph case in
// the current modes, as doGraph runs a reduction partition; res.impl
// gets its implementation. It returns the perf data of a timed run (a
// case of one partition) or the result that ends the case.
func (r *runner) doGraphNorm(g *graph.Graph, p *partition.Partition, dec *decomposition, c graphCase, idx, pi, np int, res *result) (*PerfData, *result) {
	seed := seedOf(r.reproGraph(c))
	n, fail := buildGraphNorm(g, p, dec)
	if fail != nil {
		return nil, fail
	}
	res.impl = n.cp.Impl()
	with := func(f *result) *result {
		f.impl = res.impl
		return f
	}
	if why := r.implFilter(res.impl, r.gr.impl, r.gr.skip); why != "" {
		return nil, &result{state: "SKIPPED", reason: why, impl: res.impl}
	}
	note := partitionNote(pi, np)
	if r.g.mode.Init {
		r.implNote(n.cp, note)
		return nil, nil
	}
	if r.g.mode.Bitwise {
		if f := bitwiseGraphNorm(n); f != nil {
			return nil, with(f)
		}
	}
	if r.g.mode.Exec {
		n.fill(false, uint64(idx))
		if err := n.exec(0); err != nil {
			return nil, with(&result{state: stateOf(err), reason: reasonOf(err)})
		}
	}
	if r.g.mode.Corr {
		if f := r.checkGraphNorm(n, seed); f != nil {
			f.reason = fmt.Sprintf("partition %d: %s", pi, f.reason)
			return nil, with(f)
		}
	}
	var perf *PerfData
	if r.g.mode.Perf && np == 1 {
		if !r.g.mode.Corr {
			n.fill(false, seed)
		}
		t, err := measure(func() error { return n.exec(0) }, r.g.maxMs, r.g.fixTimes)
		if err != nil {
			return nil, with(&result{state: stateOf(err), reason: reasonOf(err)})
		}
		perf = r.perfGraphNorm(n, c, idx, res.impl, t)
	}
	r.implNote(n.cp, note)
	return perf, nil
}
