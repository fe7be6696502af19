package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// normBuilt is a normalization problem ready to run: its op, the
// logical tensors (dst's layout resolved once built) and the buffers.
type normBuilt struct {
	c         *normCase
	op        string // the gdnn graph op: SoftMax, LogSoftmax, LayerNorm, RMSNorm, GroupNorm
	sdt, ddt  dtypes.DataType
	ssdt      dtypes.DataType
	axis      int     // softmax's axis; the normalized dim (lnorm: the last; gnorm: 1, channels)
	groups    int64   // gnorm
	eps       float32 // lnorm, gnorm
	scale     bool    // gamma is an input (the C flag; with H alone, gamma of ones)
	shift     bool    // beta is an input (the H flag; with C alone, beta of zeros)
	keepStats bool    // mean and variance are outputs (training, not RMS norm)
	rms       bool
	infAsZero bool

	srcLT, dstLT, gammaLT, betaLT, meanLT, varLT graph.LogicalTensor
	src, gamma, beta                             buffer
	dst, mean, vari                              [2]buffer // the second for bitwise mode
	ctimeMs                                      float64

	// The ops fused after the normalization (normattr.go): steps, each
	// one's operand (an index into opLTs and operands, or -1), and a
	// final Quantize by dstScale into an int8 dst.
	steps    []normStep
	stepLT   []int
	opLTs    []graph.LogicalTensor
	operands []buffer
	quantize bool
	dstScale float32
}

// normExec runs a built problem. The graph backend's compiles a one-op
// gdnn graph; tests put a fake here (runner.normBackend), so that the
// harness's fills, reference and comparison are checked without gdnn's
// ops.
type normExec interface {
	Impl() string
	Reason() string
	// Run reads b's inputs and writes b.dst[i] (and b.mean[i], b.vari[i]).
	Run(b *normBuilt, i int) error
}

// normBackendFunc builds what a problem runs on: it may resolve b's dst
// and stats layouts (an "any" tag).
type normBackendFunc func(b *normBuilt) (normExec, error)

// unimplementedNorm says why gdnn (or gdnnbench) does not run c, or ""
// (benchdnn's skip_unimplemented, then skip_invalid).
func unimplementedNorm(c *normCase) result {
	un := func(format string, args ...any) result {
		return result{state: "UNIMPLEMENTED", reason: fmt.Sprintf(format, args...)}
	}
	if c.inplace && (c.sdt != c.ddt || (c.dtag != "any" && c.stag != c.dtag)) {
		// benchdnn's skip_invalid_inplace: in place needs one type and layout.
		return result{state: "SKIPPED", reason: "invalid case: in place with different src and dst data types or layouts"}
	}
	switch c.dir {
	case "FWD_D", "FWD_B", "FWD_I":
		// FWD_B carries benchdnn's forward flag, and its normalization
		// drivers build it as FWD_D: forward training.
	default:
		what := map[string]string{"softmax": "SoftMaxBackward", "lnorm": "LayerNormBackward", "gnorm": "a GroupNorm backward op"}[c.driver]
		return un("--dir=%s: gdnn has no backward normalization (%s); it runs FWD_D (and FWD_B, as benchdnn does) and FWD_I", c.dir, what)
	}
	for _, d := range []struct{ what, dt string }{{"src", c.sdt}, {"dst", c.ddt}, {"scale and shift", c.ssDT}} {
		if d.dt == "" || d.dt == "f32" || d.dt == "bf16" || d.dt == "f16" {
			continue
		}
		if d.what == "dst" && isInt8Name(d.dt) {
			continue // a Quantize fused after the normalization writes it
		}
		if d.what == "src" && isInt8Name(d.dt) {
			continue // a Dequantize fused before the normalization reads it
		}
		return un("%s data type %s: gdnn's normalization ops take f32, bf16 and f16", d.what, d.dt)
	}
	if c.has('G') {
		return un("--flags=G: global statistics are inputs to oneDNN's primitive; oneDNN Graph's %s computes them and takes no mean and variance", map[string]string{"lnorm": "LayerNorm", "gnorm": "GroupNorm"}[c.driver])
	}
	if c.has('M') && c.has('H') {
		return un("--flags=%s: RMS normalization with a shift; oneDNN Graph's RMSNorm has gamma only", c.flags)
	}
	for _, t := range []struct{ what, tag string }{{"src", c.stag}, {"dst", c.dtag}} {
		if l, err := ResolveTag(t.tag, len(c.dataDims())); err == nil && l.Blocked() {
			return un("%s tag %s: blocked layouts; gdnn's normalization ops take strided tensors", t.what, t.tag)
		}
	}
	var not []string
	for _, n := range normAttrOrder {
		v := c.attrs[n]
		if v == "" || v == normAttrDefault[n] || knobMet(n, v) || n == "attr-scales" || n == "attr-post-ops" {
			continue // scales and post-ops: normChainProblem
		}
		not = append(not, "--"+n+"="+v)
	}
	if c.ctxInit != "" && !isDefaultCtx(c.ctxInit) {
		not = append(not, "--ctx-init="+c.ctxInit)
	}
	if c.ctxExe != "" && !isDefaultCtx(c.ctxExe) {
		not = append(not, "--ctx-exe="+c.ctxExe)
	}
	if not != nil {
		return un("gdnn does not implement %s with normalization ops (no fused zero points or dropout; threads by --threads)", strings.Join(not, " "))
	}
	if res := normChainProblem(c); res.state != "" {
		return res
	}
	return result{}
}

// invalidNorm says what makes a well-formed descriptor a problem the
// library refuses (INVALID_ARGUMENTS, as benchdnn reports oneDNN's
// refusal) or that is too large to run (SKIPPED), or "".
func invalidNorm(c *normCase) result {
	bad := func(format string, args ...any) result {
		return result{state: "INVALID_ARGUMENTS", reason: fmt.Sprintf(format, args...)}
	}
	dims := c.dataDims()
	if n, ok := numElements(dims); !ok || n > maxElements {
		return result{state: "SKIPPED", reason: fmt.Sprintf("src has more than %d elements", int64(maxElements))}
	}
	switch c.driver {
	case "softmax":
		if c.axis >= int64(len(dims)) {
			return bad("--axis=%d is out of range for %d dims", c.axis, len(dims))
		}
	case "gnorm":
		if c.g.IC%c.g.G != 0 {
			return bad("ic %d is not a multiple of g %d", c.g.IC, c.g.G)
		}
		if err := checkEps(c.g.Eps); err != nil {
			return bad("%s", reasonOf(err))
		}
	}
	return result{}
}

// buildNorm turns c into a normBuilt with its logical tensors (dst and
// stats possibly of layout any), without buffers.
func buildNorm(c *normCase) (*normBuilt, error) {
	dims := c.dataDims()
	rank := len(dims)
	b := &normBuilt{c: c}
	var err error
	if b.sdt, err = dtypes.Parse(c.sdt); err != nil {
		return nil, status.Errorf(status.Unimplemented, "src data type %s", c.sdt)
	}
	if b.ddt, err = dtypes.Parse(c.ddt); err != nil {
		return nil, status.Errorf(status.Unimplemented, "dst data type %s", c.ddt)
	}
	b.ssdt = dtypes.F32
	if c.ssDT != "" {
		if b.ssdt, err = dtypes.Parse(c.ssDT); err != nil {
			return nil, status.Errorf(status.Unimplemented, "scale and shift data type %s", c.ssDT)
		}
	}
	var paramDims, statDims []int64
	switch c.driver {
	case "softmax":
		b.op, b.axis = "SoftMax", int(c.axis)
		if c.alg == "LOGSOFTMAX" {
			b.op = "LogSoftmax"
		}
		b.infAsZero = c.alg == "SOFTMAX_INF_AS_ZERO"
	case "lnorm":
		if rank == 0 {
			return nil, status.Errorf(status.InvalidShape, "a layer normalization needs at least one dim")
		}
		b.op, b.axis, b.eps = "LayerNorm", rank-1, 1.0/16 // benchdnn's lnorm epsilon
		b.rms = c.has('M')
		if b.rms {
			b.op = "RMSNorm"
		}
		paramDims, statDims = dims[rank-1:], dims[:rank-1]
		b.keepStats = c.dir != "FWD_I" && !b.rms
	case "gnorm":
		b.op, b.axis, b.groups, b.eps = "GroupNorm", 1, c.g.G, c.g.Eps
		paramDims, statDims = []int64{c.g.IC}, []int64{c.g.MB, c.g.G}
		b.keepStats = c.dir != "FWD_I"
	}
	// oneDNN Graph's LayerNorm and GroupNorm take gamma and beta together
	// (use_affine): a scale alone runs with a shift of zeros, a shift
	// alone with a scale of ones, which computes what oneDNN's primitive
	// does with the one flag. RMSNorm has gamma only.
	b.scale, b.shift = c.has('C'), c.has('H')
	if !b.rms && (b.scale || b.shift) {
		b.scale, b.shift = true, true
	}
	sl, err := ResolveTag(c.stag, rank)
	if err != nil {
		return nil, err
	}
	if sl.Any {
		sl, _ = ResolveTag("abx", rank) // an input needs a layout; any means the plain one
	}
	b.srcLT = graph.NewLogicalTensorStrided(0, b.sdt, dims, sl.Strides(dims))
	dl, err := ResolveTag(c.dtag, rank)
	if err != nil {
		return nil, err
	}
	b.dstLT = graph.NewLogicalTensorAny(10, b.ddt, dims)
	switch {
	case c.inplace:
		// benchdnn's in place: dst is src's memory, so src's layout
		// (unimplementedNorm has skipped other types and layouts).
		b.dstLT = graph.NewLogicalTensorStrided(10, b.ddt, dims, b.srcLT.Strides)
	case !dl.Any:
		b.dstLT = graph.NewLogicalTensorStrided(10, b.ddt, dims, dl.Strides(dims))
	}
	if b.scale {
		b.gammaLT = graph.NewLogicalTensorStrided(1, b.ssdt, paramDims, graph.DenseStrides(paramDims))
	}
	if b.shift {
		b.betaLT = graph.NewLogicalTensorStrided(2, b.ssdt, paramDims, graph.DenseStrides(paramDims))
	}
	if b.keepStats {
		st := "any"
		if c.driver == "lnorm" && c.statTag != "undef" {
			st = c.statTag
		}
		stl, err := ResolveTag(st, len(statDims))
		if err != nil {
			return nil, err
		}
		b.meanLT = graph.NewLogicalTensorAny(11, dtypes.F32, statDims)
		b.varLT = graph.NewLogicalTensorAny(12, dtypes.F32, statDims)
		if !stl.Any {
			b.meanLT = graph.NewLogicalTensorStrided(11, dtypes.F32, statDims, stl.Strides(statDims))
			b.varLT = graph.NewLogicalTensorStrided(12, dtypes.F32, statDims, stl.Strides(statDims))
		}
	}
	if err := b.buildChain(); err != nil {
		return nil, err
	}
	return b, nil
}

// inputs and outputs are b's ports: the normalization's inputs in the
// op's order, then the fused ops' operands; dst, then the statistics.
func (b *normBuilt) inputs() []graph.LogicalTensor {
	return append(b.normInputs(), b.opLTs...)
}

// normInputs are the normalization op's inputs.
func (b *normBuilt) normInputs() []graph.LogicalTensor {
	ins := []graph.LogicalTensor{b.srcLT}
	if b.scale {
		ins = append(ins, b.gammaLT)
	}
	if b.shift {
		ins = append(ins, b.betaLT)
	}
	return ins
}

func (b *normBuilt) outputs() []graph.LogicalTensor {
	outs := []graph.LogicalTensor{b.dstLT}
	if b.keepStats {
		outs = append(outs, b.meanLT, b.varLT)
	}
	return outs
}

// graphNormBackend builds b's op alone in a gdnn graph, with oneDNN
// Graph's attributes, partitions and compiles it, and takes the layouts
// gdnn chose for outputs given as any.
func graphNormBackend(b *normBuilt) (normExec, error) {
	kind, err := graph.ParseOpKind(b.op)
	if err != nil {
		return nil, status.Errorf(status.Unimplemented, "gdnn has no %s op: %v", b.op, reasonOf(err))
	}
	op := graph.NewOp(0, kind, strings.ToLower(b.op))
	var head []*graph.Op
	for i, lt := range b.normInputs() {
		if i == 0 && b.sdt.IsInt8() {
			// oneDNN's primitive normalizes the integers as they are
			// (its src scale multiplies the result, see normattr.go):
			// a Dequantize of scale 1 and zero point 0 converts them to
			// f32, fused before the normalization.
			x := graph.NewLogicalTensorAny(90, dtypes.F32, lt.Dims) // clear of the chain's tensors (20 on) and operands (100 on)
			head = append(head, graph.NewOp(90, graph.Dequantize, "dequantize").AddInput(lt).AddOutput(x).
				SetAttr("scales", []float32{1}).SetAttr("zps", []int64{0}))
			lt = x
		}
		op.AddInput(lt)
	}
	var chain []*graph.Op
	if b.fused() {
		// The normalization writes f32, which the fused ops read; its
		// statistics, where it keeps them, are outputs as they are.
		mid := graph.NewLogicalTensorAny(20, dtypes.F32, b.srcLT.Dims)
		op.AddOutput(mid)
		if b.keepStats {
			op.AddOutput(b.meanLT).AddOutput(b.varLT)
		}
		chain = b.chainOps(mid)
	} else {
		for _, lt := range b.outputs() {
			op.AddOutput(lt)
		}
	}
	switch b.op {
	case "SoftMax":
		mode := "none"
		if b.infAsZero {
			mode = "inf_as_zero"
		}
		op.SetAttr("axis", int64(b.axis)).SetAttr("mode", mode)
	case "LogSoftmax":
		op.SetAttr("axis", int64(b.axis))
	case "LayerNorm":
		op.SetAttr("begin_norm_axis", int64(-1)).SetAttr("use_affine", b.scale).
			SetAttr("keep_stats", b.keepStats).SetAttr("epsilon", b.eps)
	case "RMSNorm":
		op.SetAttr("begin_norm_axis", int64(-1)).SetAttr("use_affine", b.scale).SetAttr("epsilon", b.eps)
	case "GroupNorm":
		op.SetAttr("groups", b.groups).SetAttr("use_affine", b.scale).SetAttr("keep_stats", b.keepStats).
			SetAttr("epsilon", b.eps).SetAttr("data_format", "NCX")
	}
	g := graph.New()
	for _, o := range append(append(head, op), chain...) {
		if err := g.AddOp(o); err != nil {
			return nil, err
		}
	}
	if err := g.Finalize(); err != nil {
		return nil, err
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		return nil, err
	}
	if len(parts) != 1 {
		var why []string
		for _, p := range parts {
			why = append(why, p.String())
		}
		return nil, status.Errorf(status.Unimplemented, "%s and the ops after it are not one partition: %s", b.op, strings.Join(why, "; "))
	}
	if !parts[0].IsSupported() {
		return nil, status.Errorf(status.Unimplemented, "%s", parts[0].Reason())
	}
	t0 := time.Now()
	cp, err := parts[0].Compile(b.inputs(), b.outputs())
	b.ctimeMs = float64(time.Since(t0)) / float64(time.Millisecond)
	if err != nil {
		return nil, err
	}
	for _, lt := range []*graph.LogicalTensor{&b.dstLT, &b.meanLT, &b.varLT} {
		if lt.ID == 0 || (lt.Layout != graph.LayoutAny && lt.Strides != nil) {
			continue
		}
		q, err := cp.QueryLogicalTensor(lt.ID)
		if err != nil {
			return nil, err
		}
		if q.Layout == graph.LayoutBlocked {
			return nil, status.Errorf(status.Unimplemented, "%s chose a blocked layout %q for tensor %d; gdnnbench checks strided ones", b.op, q.Tag, q.ID)
		}
		*lt = q
	}
	return &graphNormExec{cp: cp}, nil
}

// graphNormExec runs a compiled partition, its tensors made on first use
// so that a timed run is the partition's Execute alone.
type graphNormExec struct {
	cp        *partition.CompiledPartition
	ins, outs [2][]partition.Tensor
}

func (e *graphNormExec) Impl() string   { return e.cp.Impl() }
func (e *graphNormExec) Reason() string { return e.cp.Reason() }

func (e *graphNormExec) Run(b *normBuilt, i int) error {
	if e.ins[i] == nil {
		bufs := []buffer{b.src}
		if b.scale {
			bufs = append(bufs, b.gamma)
		}
		if b.shift {
			bufs = append(bufs, b.beta)
		}
		bufs = append(bufs, b.operands...)
		for j, lt := range b.inputs() {
			t, err := partition.NewTensor(lt, bufs[j].data())
			if err != nil {
				return err
			}
			e.ins[i] = append(e.ins[i], t)
		}
		obufs := []buffer{b.dst[i], b.mean[i], b.vari[i]}
		for j, lt := range b.outputs() {
			t, err := partition.NewTensor(lt, obufs[j].data())
			if err != nil {
				return err
			}
			e.outs[i] = append(e.outs[i], t)
		}
	}
	return e.cp.Execute(e.ins[i], e.outs[i])
}

// alloc allocates b's buffers once the layouts are known (n dst sets).
func (b *normBuilt) alloc(n int) error {
	span := func(lt graph.LogicalTensor) (int64, error) { return spanOf(lt.Dims, lt.Strides) }
	need := int64(0)
	for _, lt := range append(b.inputs(), b.outputs()...) {
		s, err := span(lt)
		if err != nil {
			return err
		}
		need += s * int64(max(lt.DataType.Size(), 1)) * int64(n)
	}
	if n, _ := numElements(b.srcLT.Dims); n > 0 {
		need += n * 8 * 4 // the reference's float64 arrays
	}
	if err := checkMemory(need); err != nil {
		return err
	}
	mk := func(lt graph.LogicalTensor) (buffer, error) {
		s, err := span(lt)
		if err != nil {
			return buffer{}, err
		}
		return newBuffer(lt.DataType, s)
	}
	var err error
	if b.src, err = mk(b.srcLT); err != nil {
		return err
	}
	if b.scale {
		if b.gamma, err = mk(b.gammaLT); err != nil {
			return err
		}
	}
	if b.shift {
		if b.beta, err = mk(b.betaLT); err != nil {
			return err
		}
	}
	if err := b.allocOperands(); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if b.dst[i], err = mk(b.dstLT); err != nil {
			return err
		}
		if i == 0 && b.c.inplace {
			// In place, as benchdnn allocates it: dst is the src buffer.
			// (The second dst of bitwise mode keeps a copy of the first
			// run's results, see runTwiceInPlace.)
			b.dst[0] = b.src
		}
		if b.keepStats {
			if b.mean[i], err = mk(b.meanLT); err != nil {
				return err
			}
			if b.vari[i], err = mk(b.varLT); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillRandomNorm fills the inputs with uniform values in [-1, 1) (P, R
// and B modes, as benchdnn's fill_random_real there).
func (b *normBuilt) fillRandomNorm(seed uint64) {
	fillOperand(b.src, b.srcLT.Dims, b.srcLT.Strides, seed)
	if b.scale {
		fillOperand(b.gamma, b.gammaLT.Dims, b.gammaLT.Strides, seed+1)
	}
	if b.shift {
		fillOperand(b.beta, b.betaLT.Dims, b.betaLT.Strides, seed+2)
	}
	b.fillOperands(false, seed+3)
}

// params returns the per-channel (per normalized element) scale and
// shift benchdnn fills for C and H, with the neutral ones where only the
// other flag is set; nil where the op has none.
func (b *normBuilt) params() (gamma, beta []float64) {
	if !b.scale && !b.shift {
		return nil, nil
	}
	var c int64
	if b.scale {
		c = b.gammaLT.Dims[0]
	} else {
		c = b.betaLT.Dims[0]
	}
	if b.scale {
		gamma = scaleFill(c)
		if !b.c.has('C') {
			for i := range gamma {
				gamma[i] = 1
			}
		}
	}
	if b.shift {
		beta = shiftFill(c)
		if !b.c.has('H') {
			for i := range beta {
				beta[i] = 0
			}
		}
	}
	return gamma, beta
}

// checkNorm fills the inputs as benchdnn's correctness mode does, runs
// the problem and compares every output with the float64 reference. For
// softmax it does so twice, once per fill mode (negative, overflow).
func (r *runner) checkNorm(b *normBuilt, exec normExec, seed uint64) *result {
	passes := []bool{false}
	if b.c.driver == "softmax" {
		passes = []bool{true, false}
	}
	for _, negative := range passes {
		if fail := r.checkNormOnce(b, exec, negative, seed); fail != nil {
			return fail
		}
	}
	return nil
}

func (r *runner) checkNormOnce(b *normBuilt, exec normExec, negative bool, seed uint64) *result {
	dims := b.srcLT.Dims
	rank := len(dims)
	gamma, beta := b.params()
	if b.scale {
		storeLogical(b.gamma, b.gammaLT.Dims, b.gammaLT.Strides, gamma)
	}
	if b.shift {
		storeLogical(b.beta, b.betaLT.Dims, b.betaLT.Strides, beta)
	}
	var vals []float64
	switch b.c.driver {
	case "softmax":
		lowest := math.Max(lowestOf(b.sdt), lowestOf(b.ddt))
		tops := softmaxTops
		if b.ddt.IsInt8() {
			tops = softmaxTopsInt8
		}
		vals = softmaxFillTops(dims, b.axis, negative, lowest, seed, tops)
	case "lnorm":
		if b.sdt.IsInt8() {
			vals = int8Fill(rows(dims[:rank-1]), dims[rank-1], b.sdt, seed)
		} else {
			vals = statsFill(rows(dims[:rank-1]), dims[rank-1], b.sdt, seed)
		}
	case "gnorm":
		spatial := int64(1)
		for _, d := range dims[2:] {
			spatial *= d
		}
		if b.sdt.IsInt8() {
			vals = int8Fill(dims[0]*b.groups, dims[1]/b.groups*spatial, b.sdt, seed)
		} else {
			vals = statsFill(dims[0]*b.groups, dims[1]/b.groups*spatial, b.sdt, seed)
		}
	}
	storeLogical(b.src, dims, b.srcLT.Strides, vals)
	x := loadLogical(b.src, dims, b.srcLT.Strides) // as rounded to the src type
	b.fillOperands(true, seed+3)
	if err := exec.Run(b, 0); err != nil {
		return &result{state: stateOf(err), reason: reasonOf(err)}
	}
	var dst, mean, vari []float64
	var rule normRule
	switch b.c.driver {
	case "softmax":
		dst = refSoftmax(x, dims, b.axis, b.op == "LogSoftmax", b.infAsZero)
		rule = softmaxRule(b.ddt, b.op == "LogSoftmax", b.c.attrs["attr-acc-mode"])
	case "lnorm":
		dst, mean, vari = refLayerNorm(x, rows(dims[:rank-1]), dims[rank-1], float64(b.eps), gamma, beta, b.rms)
		rule = statsRule(b.ddt, 5e-7)
		if beta != nil {
			rule.shift = broadcastLast(beta, int64(len(x)))
		}
	case "gnorm":
		spatial := int64(len(x)) / max(dims[0]*dims[1], 1)
		dst, mean, vari = refGroupNorm(x, dims[0], dims[1], spatial, b.groups, float64(b.eps), gamma, beta)
		rule = statsRule(b.ddt, 6e-7)
		if beta != nil {
			rule.shift = make([]float64, len(x))
			for i := range rule.shift {
				rule.shift[i] = beta[(int64(i)/spatial)%dims[1]]
			}
		}
	}
	if b.fused() {
		var err error
		if rule, err = b.fusedRule(dst, rule); err != nil {
			return &result{state: stateOf(err), reason: reasonOf(err)}
		}
	}
	checks := []struct {
		what string
		got  buffer
		lt   graph.LogicalTensor
		ref  []float64
		rule normRule
	}{{"DST", b.dst[0], b.dstLT, dst, rule}}
	if b.keepStats {
		base := map[string]float64{"lnorm": 5e-7, "gnorm": 6e-7}[b.c.driver]
		checks = append(checks,
			struct {
				what string
				got  buffer
				lt   graph.LogicalTensor
				ref  []float64
				rule normRule
			}{"MEAN", b.mean[0], b.meanLT, mean, statsRule(dtypes.F32, base)},
			struct {
				what string
				got  buffer
				lt   graph.LogicalTensor
				ref  []float64
				rule normRule
			}{"VAR", b.vari[0], b.varLT, vari, statsRule(dtypes.F32, base)})
	}
	mode := ""
	if b.c.driver == "softmax" {
		mode = map[bool]string{true: "negative fill: ", false: "overflow fill: "}[negative]
	}
	for _, ch := range checks {
		res := compareNorm(ch.got, ch.lt.Dims, ch.lt.Strides, ch.ref, ch.rule, ch.what)
		if r.g.verbose >= 1 {
			fmt.Fprintf(r.out, "[%s%s] outputs:%d max_rdiff/trh:%.3g\n", mode, ch.what, res.total, res.worst)
		}
		if res.errors > 0 {
			return &result{state: "FAILED", reason: fmt.Sprintf("%s%s errors:%d total:%d", mode, ch.what, res.errors, res.total), detail: res.lines}
		}
	}
	return nil
}

// rows is the number of elements of dims (the rows of a layer
// normalization: every dim before the normalized one), 0 for an empty
// tensor.
func rows(dims []int64) int64 {
	n, _ := numElements(dims)
	return n
}

// broadcastLast repeats v (one value per element of the last dim) to n
// elements.
func broadcastLast(v []float64, n int64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v[i%len(v)]
	}
	return out
}

// doNorm runs one normalization problem in the current mode.
func (r *runner) doNorm(idx int, c normCase) result {
	if idx < r.g.start {
		return result{state: "SKIPPED", reason: "before --start", quiet: true}
	}
	if r.g.mode.List {
		return result{state: "LISTED"}
	}
	if res := invalidNorm(&c); res.state != "" {
		return res
	}
	if res := unimplementedNorm(&c); res.state != "" {
		return res
	}
	b, err := buildNorm(&c)
	if err != nil {
		return result{state: stateOf(err), reason: reasonOf(err)}
	}
	backend := r.normBackend
	if backend == nil {
		backend = graphNormBackend
	}
	exec, err := backend(b)
	if err != nil {
		return result{state: stateOf(err), reason: reasonOf(err)}
	}
	res := result{impl: exec.Impl()}
	s := r.normS()
	if why := r.implFilter(res.impl, s.impl, s.skip); why != "" {
		return result{state: "SKIPPED", reason: why, impl: res.impl}
	}
	if r.g.mode.Init {
		return result{state: "INITIALIZED", impl: res.impl}
	}
	n := 1
	if r.g.mode.Bitwise {
		n = 2
	}
	if err := b.alloc(n); err != nil {
		return result{state: stateOf(err), reason: reasonOf(err), impl: res.impl}
	}
	fail := func(err error) result { return result{state: stateOf(err), reason: reasonOf(err), impl: res.impl} }
	seed := seedOf(r.reproNorm(c))
	switch {
	case r.g.mode.Bitwise:
		b.fillRandomNorm(7)
		run := b.runTwice
		if c.inplace {
			run = b.runTwiceInPlace
		}
		if err := run(exec); err != nil {
			return fail(err)
		}
		pairs := [][2]buffer{{b.dst[0], b.dst[1]}}
		lts := []graph.LogicalTensor{b.dstLT}
		if b.keepStats {
			pairs = append(pairs, [2]buffer{b.mean[0], b.mean[1]}, [2]buffer{b.vari[0], b.vari[1]})
			lts = append(lts, b.meanLT, b.varLT)
		}
		for k, p := range pairs {
			bad := 0
			forEachIndex(lts[k].Dims, [][]int64{lts[k].Strides}, func(_ int64, offs []int64) {
				if p[0].bits(offs[0]) != p[1].bits(offs[0]) {
					bad++
				}
			})
			if bad > 0 {
				return result{state: "FAILED", reason: fmt.Sprintf("bitwise: %d outputs of tensor %d differ between two runs", bad, lts[k].ID), impl: res.impl}
			}
		}
	case r.g.mode.Exec:
		b.fillRandomNorm(seed)
		if err := exec.Run(b, 0); err != nil {
			return fail(err)
		}
		res.state = "EXECUTED"
	}
	if r.g.mode.Corr {
		if f := r.checkNorm(b, exec, seed); f != nil {
			f.impl = res.impl
			return *f
		}
	}
	if r.g.mode.Perf {
		b.fillRandomNorm(seed)
		t, err := measure(func() error { return exec.Run(b, 0) }, r.g.maxMs, r.g.fixTimes)
		if err != nil {
			return fail(err)
		}
		res.perf = r.normPerf(b, idx, res.impl, t)
	}
	if r.g.verbose >= 1 {
		if why := exec.Reason(); why != "" {
			fmt.Fprintf(r.out, "[impl] %s\n", why)
		}
	}
	if res.state == "" {
		res.state = "PASSED"
	}
	return res
}

// runTwice runs exec into each of b's two dst sets (bitwise mode).
func (b *normBuilt) runTwice(exec normExec) error {
	for i := 0; i < 2; i++ {
		if err := exec.Run(b, i); err != nil {
			return err
		}
	}
	return nil
}

// runTwiceInPlace is runTwice for a problem in place, whose dst is its
// src: the first run's results are copied to the second dst set, src is
// filled again, and the second run leaves its results in the first.
func (b *normBuilt) runTwiceInPlace(exec normExec) error {
	src := slices.Clone(b.src.bytes())
	if err := exec.Run(b, 0); err != nil {
		return err
	}
	copy(b.dst[1].bytes(), b.dst[0].bytes())
	if b.keepStats {
		copy(b.mean[1].bytes(), b.mean[0].bytes())
		copy(b.vari[1].bytes(), b.vari[0].bytes())
	}
	copy(b.src.bytes(), src)
	return exec.Run(b, 0)
}

// normPerf is a timed problem's perf data: bytes read (src, gamma,
// beta) and written (dst, mean, variance) once each, the least an
// implementation moves.
func (r *runner) normPerf(b *normBuilt, idx int, impl string, t Timing) *PerfData {
	bytes := func(lts ...graph.LogicalTensor) int64 {
		n := int64(0)
		for _, lt := range lts {
			n += int64(lt.DataType.Size()) * max(lt.NumElements(), 0)
		}
		return n
	}
	c := b.c
	d := &PerfData{
		Driver: c.driver, Engine: "cpu", Impl: impl, Desc: c.desc(r.g.canonical), Idx: idx,
		Sdt: c.sdt, Ddt: c.ddt, Stag: c.stag, Dtag: c.dtag, Alg: c.alg, Dir: c.dir, Flags: c.flags,
		IBytes: bytes(b.inputs()...), OBytes: bytes(b.outputs()...),
		Ops: float64(2 * max(b.srcLT.NumElements(), 0)), Time: t, CTimeMs: b.ctimeMs, Threads: threads(),
	}
	d.Name = c.name
	if c.driver == "gnorm" {
		d.Name = c.g.Name
	}
	if c.driver == "softmax" {
		d.Axis = fmt.Sprint(c.axis)
	} else {
		d.DT = c.sdt + ":" + c.ddt
		d.Tag = c.stag + ":" + c.dtag
		d.StatTag = c.statTag
	}
	var attrs []string
	for _, n := range normAttrRepro {
		if v := c.attrs[n]; v != "" && v != normAttrDefault[n] {
			attrs = append(attrs, "--"+n+"="+v)
		}
	}
	d.Attr = strings.Join(attrs, " ")
	d.ProbeBytes = bytes(b.srcLT)
	d.ReadBW = r.readBW(d.ProbeBytes)
	return d
}
