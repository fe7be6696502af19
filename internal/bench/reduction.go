package bench

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// redCase is one fully specified reduction problem.
type redCase struct {
	prb        Problem
	sdt, ddt   dtypes.DataType
	stag, dtag string
	alg        string
	p, eps     float32
	postOps    string
	knobs      map[string]string // one item of each attribute or context knob set ("": the default)
}

// runReductionDesc parses a descriptor and runs it for every combination
// of the current knobs (benchdnn's order of nested loops).
func (r *runner) runReductionDesc(a Arg) error {
	prb, err := ParseProblem(a.Text)
	if err != nil {
		return wrapInput(a, err)
	}
	s := r.red
	for _, sdt := range s.sdt {
		for _, ddt := range s.ddt {
			for _, stag := range s.stag {
				for _, dtag := range s.dtag {
					for _, po := range s.postOps {
						for _, alg := range s.alg {
							for _, p := range s.p {
								for _, eps := range s.eps {
									for _, knobs := range knobItems(s.knobs) {
										c := redCase{prb: prb, sdt: sdt, ddt: ddt, stag: stag, dtag: dtag, alg: alg, p: p, eps: eps, postOps: po, knobs: knobs}
										for rep := 0; rep < r.g.repeats; rep++ {
											r.runReduction(c)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return nil
}

// knobItems is every combination of one item of each knob's
// comma-separated list, as benchdnn runs a problem for each: in the
// knobs' name order, the first varying slowest; an empty item is the
// knob's default, left out.
func knobItems(knobs map[string]string) []map[string]string {
	out := []map[string]string{{}}
	for _, name := range slices.Sorted(maps.Keys(knobs)) {
		var next []map[string]string
		for _, m := range out {
			for _, it := range strings.Split(knobs[name], ",") {
				c := maps.Clone(m)
				if it != "" {
					c[name] = it
				}
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// repro is the command line that reproduces c.
func (r *runner) reproRed(c redCase) string {
	var b strings.Builder
	b.WriteString(r.globalRepro())
	b.WriteString("--reduction ")
	def := defaultRed("")
	// As benchdnn's set_repro_line: only what differs from the defaults,
	// everything with --canonical.
	if r.g.canonical || c.sdt != def.sdt[0] {
		fmt.Fprintf(&b, "--sdt=%s ", c.sdt)
	}
	if r.g.canonical || c.ddt != def.ddt[0] {
		fmt.Fprintf(&b, "--ddt=%s ", c.ddt)
	}
	if r.g.canonical || c.stag != def.stag[0] {
		fmt.Fprintf(&b, "--stag=%s ", c.stag)
	}
	if r.g.canonical || c.dtag != def.dtag[0] {
		fmt.Fprintf(&b, "--dtag=%s ", c.dtag)
	}
	if r.g.canonical || c.alg != def.alg[0] {
		fmt.Fprintf(&b, "--alg=%s ", c.alg)
	}
	if r.g.canonical || c.p != def.p[0] {
		fmt.Fprintf(&b, "--p=%s ", fmtFloat(c.p))
	}
	if r.g.canonical || c.eps != def.eps[0] {
		fmt.Fprintf(&b, "--eps=%s ", fmtFloat(c.eps))
	}
	if c.postOps != "" {
		ops, _ := ParsePostOps(c.postOps)
		fmt.Fprintf(&b, "--attr-post-ops=%s ", FormatPostOps(ops))
	}
	for _, name := range slices.Sorted(maps.Keys(c.knobs)) {
		fmt.Fprintf(&b, "--%s=%s ", name, c.knobs[name])
	}
	if len(r.red.impl) > 0 {
		fmt.Fprintf(&b, "--impl=%s ", strings.Join(r.red.impl, ","))
	}
	if len(r.red.skip) > 0 {
		fmt.Fprintf(&b, "--skip-impl=%s ", strings.Join(r.red.skip, ","))
	}
	b.WriteString(c.prb.String())
	return b.String()
}

func (r *runner) runReduction(c redCase) {
	repro := r.reproRed(c)
	if dropped(r.red.match, "reduction", repro) {
		return
	}
	idx := r.stats.Tests
	r.stats.Tests++
	if r.counting {
		return
	}
	res := r.doReduction(idx, repro, c)
	if res.perf != nil {
		res.perf.Prb = repro
	}
	r.report(idx, repro, res, r.red.perfTpl)
	if r.g.table && !res.quiet {
		r.rows = append(r.rows, tableRowOf(c, res))
	}
}

// built is a reduction problem turned into a compiled partition with its
// buffers.
type built struct {
	cp       *partition.CompiledPartition
	srcLT    graph.LogicalTensor
	src      buffer
	opLTs    []graph.LogicalTensor
	operands []buffer
	outLT    graph.LogicalTensor
	outs     [2]buffer // the second one for bitwise mode
	// A src or dst in a blocked layout: srcLT, src, outLT and outs are
	// then the plain copies the harness fills and checks, and these
	// hold the blocked tensors the partition runs on.
	srcBlk, outBlk *blockedMem
	// The execute tensors over src, the operands and outs[i], made on
	// first use so that a timed execute is the partition's Execute alone.
	// The inputs are per run when a sum post-op reads outs[i].
	inTs  [2][]partition.Tensor
	outTs [2][]partition.Tensor
	// fixed[i]: operand i holds a constant (an eps, a linear's alpha or
	// beta) that the fill leaves.
	fixed []bool
	// With hasSum, sums are the chain's sum post-ops: each reads the dst
	// buffer, filled before each run (as benchdnn fills dst for a sum
	// post-op), and prev keeps what the run read there, for the reference.
	hasSum bool
	sums   []sumOp
	prev   buffer
	prevLT graph.LogicalTensor // dst as the first sum reads it

	// masked: operands[0] is a fused Multiply's mask, by which each src
	// element is multiplied before it is reduced (masked pooling).
	masked bool

	chain   []refPostOp
	reduced []bool
	ctimeMs float64
	fill    srcFill // the kind reduced, and what the src data must suit
}

// sumOp is one sum post-op of a built problem. In place (scale 1, zero
// point 0) its operand is the dst buffer itself. Otherwise prep, a
// partition of its own, computes scale*(dst_before - zero_point) in f32
// into scaled, the operand of the sum's Add (see prepare).
type sumOp struct {
	operand  int // the index of its operand in opLTs
	prep     *partition.CompiledPartition
	prepIns  []graph.LogicalTensor // its inputs: dst_before, constants
	prepBufs []buffer              // the constants' buffers (dst_before's unused)
	prepOut  graph.LogicalTensor
	scaled   buffer
}

// inPlaceSum reports whether operand j is a sum's in-place operand.
func (b *built) inPlaceSum(j int) bool {
	for _, s := range b.sums {
		if s.operand == j && s.prep == nil {
			return true
		}
	}
	return false
}

func (r *runner) doReduction(idx int, repro string, c redCase) result {
	if idx < r.g.start {
		return result{state: "SKIPPED", reason: "before --start", quiet: true}
	}
	if r.g.mode.List {
		return result{state: "LISTED"}
	}
	if err := c.prb.Check(); err != nil {
		return result{state: stateOf(err), reason: reasonOf(err)}
	}
	ap, res := planAlg(c.alg, c.p, c.eps)
	if res.state != "" {
		return res
	}
	if ap.kind.norm && !c.sdt.IsFloat() && !plan.IsWide(c.sdt) {
		// As benchdnn (skip_invalid_prb): the norms make no sense for
		// integer src; a float src into an integer dst runs.
		return result{state: "SKIPPED", reason: fmt.Sprintf("invalid case: --alg=%s of %s src", c.alg, c.sdt)}
	}
	if why := unimplementedKnobs(c.knobs); why != "" {
		return result{state: "UNIMPLEMENTED", reason: why}
	}
	b, res := r.build(c, ap)
	if res.state != "" {
		return res
	}
	res.impl = b.cp.Impl()
	if why := r.implFilter(res.impl, r.red.impl, r.red.skip); why != "" {
		return result{state: "SKIPPED", reason: why, impl: res.impl}
	}
	if r.g.mode.Init {
		r.implNote(b.cp, "")
		return result{state: "INITIALIZED", impl: res.impl}
	}
	exec := func(i int) error { return r.execute(b, i) }
	switch {
	case r.g.mode.Bitwise:
		if fail := r.bitwise(b, c, exec); fail != nil {
			fail.impl = res.impl
			return *fail
		}
	case r.g.mode.Exec:
		fillInputs(b, c.sdt, fillRandom, uint64(idx))
		if err := exec(0); err != nil {
			return result{state: stateOf(err), reason: reasonOf(err), impl: res.impl}
		}
		res.state = "EXECUTED"
	}
	if r.g.mode.Corr {
		for _, mode := range []fillMode{fillExact, fillRandom} {
			check := r.checkOnce
			if red, ok := exactCase(c); ok {
				check = func(b *built, c redCase, mode fillMode, seed uint64, exec func(int) error) *result {
					return r.checkExact(b, c, red, mode, seed, exec)
				}
			}
			if fail := check(b, c, mode, seedOf(repro), exec); fail != nil {
				fail.impl = res.impl
				return *fail
			}
		}
	}
	if r.g.mode.Perf {
		if !r.g.mode.Corr {
			fillInputs(b, c.sdt, fillRandom, seedOf(repro))
		}
		t, err := measure(func() error { return exec(0) }, r.g.maxMs, r.g.fixTimes)
		if err != nil {
			return result{state: stateOf(err), reason: reasonOf(err), impl: res.impl}
		}
		res.perf = r.perfData(b, c, idx, res.impl, t)
	}
	r.implNote(b.cp, "")
	if res.state == "" {
		res.state = "PASSED"
	}
	return res
}

// implNote prints, at --verbose=1 and above, why the interpreter ran (part
// of) a compiled partition (CompiledPartition.Reason), so that an interp in
// the impl column or the perf line comes with its cause. It is called
// after the problem's executes: with run-time axes the kernel, and so the
// reason, is chosen there. what names the partition in a multi-partition
// graph ("" for none).
func (r *runner) implNote(cp *partition.CompiledPartition, what string) {
	if r.g.verbose < 1 {
		return
	}
	if why := cp.Reason(); why != "" {
		fmt.Fprintf(r.out, "[impl%s] %s\n", what, why)
	}
}

// build resolves layouts and post-ops, builds the graph (ap's ops, then
// the user's post-ops), partitions it, compiles the one partition and
// allocates the buffers. A non-empty result state means the problem
// stops there.
func (r *runner) build(c redCase, ap algPlan) (*built, result) {
	b := &built{reduced: c.prb.Reduced()}
	b.fill = srcFill{kind: ap.kind, narrow: c.sdt == dtypes.F16 || c.ddt == dtypes.F16, dst: c.ddt}
	rank := len(c.prb.Src)
	fail := func(err error) (*built, result) { return nil, result{state: stateOf(err), reason: reasonOf(err)} }
	if why := unimplementedTypes(c.sdt, c.ddt, ap); why != "" {
		return nil, result{state: "UNIMPLEMENTED", reason: why}
	}
	stag := c.stag
	if stag == "any" {
		stag = "abx" // an input needs a layout; any means the plain one
	}
	sl, err := ResolveTag(stag, rank)
	if err != nil {
		return fail(err)
	}
	dl, err := ResolveTag(c.dtag, rank)
	if err != nil {
		return fail(err)
	}
	ops, err := ParsePostOps(c.postOps)
	if err != nil {
		return fail(err)
	}
	// The ops after the reduction: ap's eps op and root, then the user's.
	type after struct {
		gp      graphPostOp
		operand *PostOp // a binary op's operand (dims by mask, type, tag)
		eps     bool    // the operand is a scalar constant: the eps, a linear's alpha or beta
		konst   float64 // with eps: the scalar's value
		sum     bool    // the operand is the dst itself, read as operand.SumDT
	}
	var chain []after
	for _, gp := range ap.finalOps() {
		a := after{gp: gp}
		if gp.bin != "" {
			// The scalar eps: all dims 1 (mask 0), f32.
			a.operand, a.eps, a.konst = &PostOp{Kind: gp.bin, BinDT: dtypes.F32, Tag: "abx"}, true, float64(c.eps)
		}
		chain = append(chain, a)
	}
	for i := range ops {
		if ops[i].Kind == "linear" {
			// alpha*x + beta, as benchdnn's reference computes it: a
			// Multiply and an Add of scalars (oneDNN Graph has no linear).
			for _, k := range []struct {
				bin string
				op  graph.OpKind
				v   float32
			}{{"mul", graph.Multiply, ops[i].Alpha}, {"add", graph.Add, ops[i].Beta}} {
				gp := graphPostOp{kind: k.op, bin: k.bin, attrs: map[string]any{"auto_broadcast": "numpy"}}
				chain = append(chain, after{gp: gp, operand: &PostOp{Kind: k.bin, BinDT: dtypes.F32, Tag: "abx"}, eps: true, konst: float64(k.v)})
			}
			continue
		}
		gp, err := ops[i].toGraph()
		if err != nil {
			return fail(err)
		}
		if gp.elt == "log" || gp.elt == "sqrt" {
			b.fill.posOnly = true
		}
		a := after{gp: gp}
		if ops[i].IsBinary() {
			a.operand = &ops[i]
		}
		if ops[i].IsSum() {
			// Each sum reads the dst as it was before the run, as
			// oneDNN's do.
			if _, err := ops[i].sumDT(c.ddt); err != nil {
				return fail(err)
			}
			a.operand, a.sum = &ops[i], true
			b.hasSum = true // its operand index is set below
		}
		chain = append(chain, a)
	}
	// A sum reads dst as an operand of the dst's own layout: a dst tag of
	// any means the plain layout then.
	dstStrides := func() []int64 { return dl.Strides(c.prb.Dst) }
	if b.hasSum && dl.Any {
		dstStrides = func() []int64 { return graph.DenseStrides(c.prb.Dst) }
	}
	g := graph.New()
	b.srcLT = graph.NewLogicalTensorStrided(0, c.sdt, c.prb.Src, sl.Strides(c.prb.Src))
	partSrc := b.srcLT
	if sl.Blocked() {
		partSrc = graph.NewLogicalTensorBlocked(0, c.sdt, c.prb.Src, stag)
		if b.srcBlk, err = newBlockedMem(partSrc); err != nil {
			return fail(err)
		}
	}
	finalLT := func(id uint64) graph.LogicalTensor {
		switch {
		case dl.Any && !b.hasSum:
			return graph.NewLogicalTensorAny(id, c.ddt, c.prb.Dst)
		case dl.Blocked():
			return graph.NewLogicalTensorBlocked(id, c.ddt, c.prb.Dst, c.dtag)
		}
		return graph.NewLogicalTensorStrided(id, c.ddt, c.prb.Dst, dstStrides())
	}
	nextT, nextOp := uint64(1), uint64(0)
	redIn := partSrc
	if ap.pre != 0 {
		// The pre-op keeps the src type and shape; fused into the
		// reduction it is computed in f32, as benchdnn's reference does.
		out := graph.NewLogicalTensorAny(nextT, c.sdt, c.prb.Src)
		op := graph.NewOp(nextOp, ap.pre, "pre").AddInput(partSrc).AddOutput(out)
		if err := g.AddOp(op); err != nil {
			return fail(err)
		}
		redIn = out
		nextT++
		nextOp++
	}
	// The chain's tensors have the dst type, except that a chain ending in
	// an integer dst computes in f32 and only its last op stores to the
	// integer type (gdnn's graph keeps integers at the end of a chain).
	midDT := c.ddt
	if c.ddt.IsInt() {
		midDT = dtypes.F32
	}
	cur := graph.NewLogicalTensorAny(nextT, midDT, c.prb.Dst)
	if len(chain) == 0 {
		cur = finalLT(nextT)
	}
	nextT++
	red := graph.NewOp(nextOp, ap.op, "reduce").AddInput(redIn).AddOutput(cur).
		SetAttr("axes", c.prb.Axes()).SetAttr("keep_dims", true)
	nextOp++
	if err := g.AddOp(red); err != nil {
		return fail(err)
	}
	for i, a := range chain {
		out := graph.NewLogicalTensorAny(nextT, midDT, c.prb.Dst)
		if i == len(chain)-1 {
			out = finalLT(nextT)
		}
		nextT++
		name := a.gp.elt + a.gp.bin
		if a.eps {
			name = "const"
		}
		if a.sum {
			name = "sum"
		}
		op := graph.NewOp(nextOp, a.gp.kind, name).AddInput(cur)
		nextOp++
		rp := refPostOp{g: a.gp}
		if a.sum {
			dt, _ := a.operand.sumDT(c.ddt)
			st := dstStrides()
			lt := graph.NewLogicalTensorStrided(uint64(1000+i), dt, c.prb.Dst, st)
			span, err := spanOf(c.prb.Dst, st)
			if err != nil {
				return fail(err)
			}
			if len(b.sums) == 0 {
				if b.prev, err = newBuffer(dt, span); err != nil {
					return fail(err)
				}
				b.prevLT = lt
			}
			so := sumOp{operand: len(b.opLTs)}
			operand := b.prev // never passed in place: the run's dst is
			if a.operand.Scale != 1 || a.operand.ZeroPoint != 0 {
				if res := so.prepare(a.operand, lt); res.state != "" {
					return nil, res
				}
				lt = so.prepOut
				lt.ID = uint64(1000 + i)
				operand = so.scaled
			}
			b.sums = append(b.sums, so)
			b.opLTs = append(b.opLTs, lt)
			b.operands = append(b.operands, operand)
			b.fixed = append(b.fixed, true)
			rp.operand, rp.view = b.prev.as(dt), st
			rp.sum, rp.scale, rp.zp = true, a.operand.Scale, float32(a.operand.ZeroPoint)
			op.AddInput(lt)
		} else if po := a.operand; po != nil {
			odims := po.operandDims(c.prb.Dst)
			tag := po.Tag
			if tag == "any" {
				tag = "abx"
			}
			ol, err := ResolveTag(tag, rank)
			if err != nil {
				return fail(err)
			}
			if err := plainOnly(ol, "binary post-op operand"); err != nil {
				return fail(err)
			}
			lt := graph.NewLogicalTensorStrided(uint64(1000+i), po.BinDT, odims, ol.Strides(odims))
			span, err := spanOf(odims, lt.Strides)
			if err != nil {
				return fail(err)
			}
			buf, err := newBuffer(po.BinDT, span)
			if err != nil {
				return fail(err)
			}
			if a.eps {
				buf.set(0, a.konst)
			}
			b.opLTs = append(b.opLTs, lt)
			b.operands = append(b.operands, buf)
			b.fixed = append(b.fixed, a.eps)
			rp.operand = buf
			rp.view = broadcastView(odims, lt.Strides)
			op.AddInput(lt)
		}
		for k, v := range a.gp.attrs {
			op.SetAttr(k, v)
		}
		op.AddOutput(out)
		if err := g.AddOp(op); err != nil {
			return fail(err)
		}
		b.chain = append(b.chain, rp)
		cur = out
	}
	if err := g.Finalize(); err != nil {
		return fail(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		return fail(err)
	}
	if len(parts) != 1 {
		var why []string
		for _, p := range parts {
			why = append(why, p.String())
		}
		return nil, result{state: "UNIMPLEMENTED", reason: "not fused into one partition: " + strings.Join(why, "; ")}
	}
	if !parts[0].IsSupported() {
		return nil, result{state: "UNIMPLEMENTED", reason: parts[0].Reason()}
	}
	t0 := time.Now()
	cp, err := parts[0].Compile(append([]graph.LogicalTensor{partSrc}, b.opLTs...), []graph.LogicalTensor{finalLT(cur.ID)})
	b.ctimeMs = float64(time.Since(t0)) / float64(time.Millisecond)
	if err != nil {
		return fail(err)
	}
	b.cp = cp
	if b.outLT, err = cp.QueryLogicalTensor(cur.ID); err != nil {
		return fail(err)
	}
	if b.outLT.Layout == graph.LayoutBlocked {
		if b.outBlk, err = newBlockedMem(b.outLT); err != nil {
			return fail(err)
		}
		b.outLT = graph.NewLogicalTensor(b.outLT.ID, b.outLT.DataType, b.outLT.Dims)
	}
	if err := r.allocIO(b, c); err != nil {
		return fail(err)
	}
	return b, result{}
}

// unimplementedTypes says why gdnn does not run a pair of data types for
// ap, or "": gdnn reduces f32, bf16 and f16 src into the src type or f32,
// f64 src into f64 or f32 (a gdnn extension),
// and s8 and u8 src into s8, u8, s32, f32, bf16 or f16, without a pre-op
// (benchdnn's amax of integers would need Abs of s8 data).
func unimplementedTypes(sdt, ddt dtypes.DataType, ap algPlan) string {
	if r, _ := exactReduction(ap.kind.name); sdt.IsExact() && ap.pre == 0 {
		// Integer and boolean data (gdnn extensions), reduced exactly.
		if err := plan.CheckExact(sdt, ddt, r); err != nil {
			return fmt.Sprintf("--alg=%s of %s data into %s: %s", ap.kind.name, sdt, ddt, strings.TrimPrefix(reasonOf(err), "plan: "))
		}
		return ""
	}
	switch {
	case plan.IsWide(sdt) || plan.IsWide(ddt):
		if plan.WideDst(sdt, ddt) {
			return ""
		}
		return fmt.Sprintf("data types %s:%s; gdnn reduces f64 data (a gdnn extension) into f64 or f32, and only f64 data into f64", sdt, ddt)
	case sdt.IsInt8() && ap.pre != 0:
		return fmt.Sprintf("--alg=%s of %s data: gdnn's %s pre-op takes f32, bf16 and f16", ap.kind.name, sdt, ap.pre)
	case (sdt.IsInt8() || sdt.IsFloat()) && (ddt.IsFloat() || ddt.IsInt()):
		return ""
	case !sdt.IsFloat() || !ddt.IsFloat():
		return fmt.Sprintf("data types %s:%s; gdnn's reductions read f32, bf16, f16, s8 and u8", sdt, ddt)
	}
	return ""
}

// exactReduction returns the reduction benchdnn's --alg name computes
// over exact data, as plan.CheckExact reads it: sum, mul, max, min and
// mean. The Lp norms, invalid for integer src, are skipped before.
func exactReduction(name string) (plan.Reduction, bool) {
	a, ok := plan.ParseAlg(name)
	if !ok || a.IsLp() {
		return plan.Reduction{}, false
	}
	return a.Reduction(0, 0), true
}

// broadcastView returns an operand's strides with 0 where it broadcasts.
func broadcastView(dims, strides []int64) []int64 {
	v := make([]int64, len(dims))
	for i := range dims {
		if dims[i] != 1 {
			v[i] = strides[i]
		}
	}
	return v
}

func (r *runner) allocIO(b *built, c redCase) error {
	span, err := spanOf(c.prb.Src, b.srcLT.Strides)
	if err != nil {
		return err
	}
	_, exact := exactCase(c)
	if err := checkMemory(ioBytes(b, span, c.sdt.Size(), exact)); err != nil {
		return err
	}
	if b.src, err = newBuffer(c.sdt, span); err != nil {
		return err
	}
	if !sameDims(b.outLT.Dims, c.prb.Dst) {
		return status.Errorf(status.RuntimeError, "compiled dst dims %v, want %v", b.outLT.Dims, c.prb.Dst)
	}
	ospan, err := spanOf(b.outLT.Dims, b.outLT.Strides)
	if err != nil {
		return err
	}
	n := 1
	if r.g.mode.Bitwise {
		n = 2
	}
	for i := 0; i < n; i++ {
		if b.outs[i], err = newBuffer(b.outLT.DataType, ospan); err != nil {
			return err
		}
		if b.outBlk != nil {
			if err := b.outBlk.alloc(i); err != nil {
				return err
			}
		}
	}
	if b.srcBlk != nil {
		return b.srcBlk.alloc(0)
	}
	return nil
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// execute runs the compiled partition into outs[i].
func (r *runner) execute(b *built, i int) error {
	if b.inTs[i] == nil {
		ins := make([]partition.Tensor, 0, 1+len(b.opLTs))
		srcLT, srcBuf := b.srcLT, b.src
		if b.srcBlk != nil {
			srcLT, srcBuf = b.srcBlk.lt, b.srcBlk.mem[0]
		}
		t, err := partition.NewTensor(srcLT, srcBuf.data())
		if err != nil {
			return err
		}
		ins = append(ins, t)
		for j, lt := range b.opLTs {
			data := b.operands[j].data()
			if b.inPlaceSum(j) {
				data = b.outs[i].as(lt.DataType).data() // in place: the sum reads dst
			}
			t, err := partition.NewTensor(lt, data)
			if err != nil {
				return err
			}
			ins = append(ins, t)
		}
		b.inTs[i] = ins
	}
	if b.outTs[i] == nil {
		outLT, outBuf := b.outLT, b.outs[i]
		if b.outBlk != nil {
			outLT, outBuf = b.outBlk.lt, b.outBlk.mem[i]
		}
		o, err := partition.NewTensor(outLT, outBuf.data())
		if err != nil {
			return err
		}
		b.outTs[i] = []partition.Tensor{o}
	}
	for k := range b.sums {
		if b.sums[k].prep == nil {
			continue
		}
		if err := b.sums[k].run(b.outs[i]); err != nil {
			return err
		}
	}
	return b.cp.Execute(b.inTs[i], b.outTs[i])
}

// fillInputs fills src and the binary operands (not the constant ones),
// and with a sum post-op the dst buffers, which the run reads.
func fillInputs(b *built, sdt dtypes.DataType, mode fillMode, seed uint64) {
	fillSrc(b.src, b.srcLT.Dims, b.srcLT.Strides, b.reduced, mode, b.fill, seed)
	if b.srcBlk != nil {
		b.srcBlk.scatter(b.src, b.srcLT.Strides)
	}
	for i, lt := range b.opLTs {
		if i < len(b.fixed) && b.fixed[i] {
			continue
		}
		if b.masked && i == 0 {
			fillMask(b.operands[i], lt.Dims, lt.Strides, seed+uint64(i)+101)
			continue
		}
		fillOperand(b.operands[i], lt.Dims, lt.Strides, seed+uint64(i)+101)
	}
	if b.hasSum {
		fillSumDst(b, seed+97)
	}
}

// fillSumDst fills every dst buffer with the same values for a sum
// post-op to read, as benchdnn fills dst before a run with one: multiples
// of 1/4 in [-2, 2] (exact in every type, of both signs, so that sums
// cancel and cross zero), then keeps a copy, which the reference reads.
// Elements between the addressed ones (padding) keep their NaN pattern.
func fillSumDst(b *built, seed uint64) {
	lt := b.prevLT
	for i := range b.outs {
		if b.outs[i].dt == dtypes.Undef {
			continue
		}
		// The values as the sum reads them (its type may differ from
		// dst's in name, never in size).
		view := b.outs[i].as(lt.DataType)
		forEachIndex(lt.Dims, [][]int64{lt.Strides}, func(pos int64, offs []int64) {
			view.set(offs[0], float64(int64(unit(seed, pos)*17)-8)/4)
		})
	}
	copy(b.prev.bytes(), b.outs[0].bytes())
}

// checkOnce fills with mode, executes, and compares with the reference.
func (r *runner) checkOnce(b *built, c redCase, mode fillMode, seed uint64, exec func(int) error) *result {
	fillInputs(b, c.sdt, mode, seed)
	if r.srcOverride != nil {
		r.srcOverride(b.src, b.srcLT.Dims, b.srcLT.Strides)
	}
	if err := exec(0); err != nil {
		return &result{state: stateOf(err), reason: reasonOf(err)}
	}
	if fail := b.gatherOutput(0); fail != nil {
		return fail
	}
	ref, allow, alts := reductionReference(b, c.ddt, mode)
	chk := compareOutput(b.outs[0], b.outLT.Dims, b.outLT.Strides, ref, allow, alts)
	if r.g.verbose >= 1 {
		fmt.Fprintf(r.out, "[%s fill] outputs:%d max_err/allowed:%.3g\n", fillName(mode), chk.total, chk.worst)
	}
	if chk.errors > 0 {
		res := &result{state: "FAILED", reason: fmt.Sprintf("%s fill: errors:%d total:%d", fillName(mode), chk.errors, chk.total)}
		res.detail = chk.lines
		return res
	}
	return nil
}

func fillName(m fillMode) string {
	if m == fillExact {
		return "exact"
	}
	return "random"
}

// reductionReference computes the float64 reference of a built reduction
// for the data currently in its buffers, the error allowed per output,
// and the other outcomes an output may hold with theirs (see
// chainOutput).
func reductionReference(b *built, ddt dtypes.DataType, mode fillMode) ([]float64, []float64, map[int64][]outcome) {
	if plan.IsWide(b.src.dt) {
		ref, allow := wideReference(b, ddt)
		return ref, allow, nil
	}
	k := b.fill.kind
	var ref, errs []float64
	exact := false // log-sum-exp never is
	if k.lse {
		ref, errs = refLogSumExp(b.src, b.srcLT.Dims, b.srcLT.Strides, b.reduced)
	} else {
		src, strides := b.src, b.srcLT.Strides
		if b.masked {
			src, strides = b.maskedSrc()
		}
		acc, mag, n := refReduce(src, b.srcLT.Dims, strides, b.reduced, k)
		// Integer data are exact wherever the fill kept every partial
		// result an integer below 2^24 (fillInt8), whatever the fill mode.
		exact = mode == fillExact || b.src.dt.IsInt8() && exactInts(k, acc, mag)
		ref, errs = reduceValues(k, acc, mag, n, exact)
	}
	dstDims := shape.ReduceDims(b.srcLT.Dims, b.reduced, true)
	alts := chainOutput(ref, dstDims, b.chain, exact, errs)
	trh, floor := threshold(ddt, b.chain)
	if k.norm {
		trh = max(trh, 5*epsilon(ddt))
	}
	// allowed turns a value and its error bound (errs's) into the
	// value the dst must hold and the allowance around it.
	allowed := func(v, e float64) (float64, float64) {
		a := trh * max(abs(v), floor)
		if ddt.IsInt() && exact && trh == epsilon(ddt) || math.IsInf(v, 0) {
			// The reference models gdnn's f32 pipeline exactly, or is
			// an infinity, which only itself matches: no slack.
			return allowedExactly(ddt, v)
		}
		if errs != nil {
			// Half a dst rounding step, which is absolute for subnormals.
			a += e + epsilon(ddt)/2*max(abs(v), minNormal(ddt))
		}
		if ddt.IsInt() {
			return quantizeRef(ddt, v, a)
		}
		return v, a
	}
	allow := make([]float64, len(ref))
	for i, v := range ref {
		e := 0.0
		if errs != nil {
			e = errs[i]
		}
		ref[i], allow[i] = allowed(v, e)
	}
	for pos, os := range alts {
		for j, o := range os {
			os[j].v, os[j].e = allowed(o.v, o.e)
		}
		alts[pos] = os
	}
	return ref, allow, alts
}

// allowedExactly is the value a dst of type ddt must hold for the
// reference v, allowed nothing.
func allowedExactly(ddt dtypes.DataType, v float64) (float64, float64) {
	if ddt.IsInt() {
		return quantizeRef(ddt, v, 0)
	}
	return v, 0
}

// exactInts reports whether refReduce's results over integer data are
// exact in gdnn's f32 pipeline: every output's sum of magnitudes (sums)
// or product (products) below 2^24; max and min always are.
func exactInts(k kind, acc, mag []float64) bool {
	for i := range acc {
		switch k.combine {
		case combineSum:
			if mag[i] > exactLimit {
				return false
			}
		case combineMul:
			if abs(acc[i]) > exactLimit {
				return false
			}
		}
	}
	return true
}

// quantizeRef turns the f32 reference value v of an integer dst, allowed
// to be off by a (in f32 terms), into what the dst must hold: v rounded to
// nearest even and saturated, allowed to be any integer the interval
// [v-a, v+a] rounds to. With a = 0 the result is exact: one unit off
// fails, as in benchdnn, whose integer results compare exactly.
func quantizeRef(ddt dtypes.DataType, v, a float64) (q, allow float64) {
	q = roundTo(ddt, v)
	if a == 0 || math.IsNaN(v) {
		return q, 0
	}
	lo, hi := roundTo(ddt, v-a), roundTo(ddt, v+a)
	return q, max(q-lo, hi-q)
}

// bitwise runs the problem twice on the same random data and requires
// bit-identical outputs (benchdnn's --mode=B: numerical determinism).
func (r *runner) bitwise(b *built, c redCase, exec func(int) error) *result {
	fillInputs(b, c.sdt, fillRandom, 7)
	for i := 0; i < 2; i++ {
		if err := exec(i); err != nil {
			return &result{state: stateOf(err), reason: reasonOf(err)}
		}
		if fail := b.gatherOutput(i); fail != nil {
			return fail
		}
	}
	bad := int64(0)
	var lines []string
	forEachIndex(b.outLT.Dims, [][]int64{b.outLT.Strides}, func(pos int64, offs []int64) {
		if b.outs[0].bits(offs[0]) != b.outs[1].bits(offs[0]) {
			if bad < 10 {
				lines = append(lines, fmt.Sprintf("[%d] run1:%v run2:%v", pos, b.outs[0].get(offs[0]), b.outs[1].get(offs[0])))
			}
			bad++
		}
	})
	if bad > 0 {
		return &result{state: "FAILED", reason: fmt.Sprintf("bitwise: %d outputs differ between two runs", bad), detail: lines}
	}
	return nil
}

func (r *runner) perfData(b *built, c redCase, idx int, impl string, t Timing) *PerfData {
	ib := int64(c.sdt.Size()) * b.srcLT.NumElements()
	for _, lt := range b.opLTs {
		ib += int64(lt.DataType.Size()) * lt.NumElements()
	}
	ob := int64(c.ddt.Size()) * b.outLT.NumElements()
	d := &PerfData{
		Driver: "reduction", Engine: "cpu", Impl: impl, Name: c.prb.Name, Desc: c.prb.String(),
		Sdt: c.sdt.String(), Ddt: c.ddt.String(), Stag: c.stag, Dtag: c.dtag, Alg: c.alg, Idx: idx,
		IBytes: ib, OBytes: ob, Ops: float64(b.srcLT.NumElements() + b.outLT.NumElements()),
		Time: t, CTimeMs: b.ctimeMs, Threads: threads(),
	}
	if c.postOps != "" {
		ops, _ := ParsePostOps(c.postOps)
		d.Attr = FormatPostOps(ops)
	}
	d.ProbeBytes = int64(c.sdt.Size()) * b.srcLT.NumElements()
	d.ReadBW = r.readBW(d.ProbeBytes)
	return d
}

const math32u = 1.0 / (1 << 24)

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// ioBytes estimates what a problem allocates: src (srcSpan elements of
// srcSize bytes), two dst buffers and the operands over the spans their
// strides address, and per output the reference's arrays and the
// garbage they leave, measured at about 7 float64 (10 for an f64 src,
// whose sums carry their compensations). The exact reference (exact)
// holds one output's elements at a time as big integers, about 128
// bytes each.
func ioBytes(b *built, srcSpan int64, srcSize int, exact bool) int64 {
	outs := max(b.outLT.NumElements(), 0)
	ospan, err := spanOf(b.outLT.Dims, b.outLT.Strides)
	if err != nil {
		ospan = outs // the allocation refuses it
	}
	ref := int64(7 * 8)
	if plan.IsWide(b.srcLT.DataType) {
		ref = 10 * 8
	}
	need := srcSpan*int64(srcSize) + 2*ospan*int64(max(b.outLT.DataType.Size(), 4)) + outs*ref
	if exact && outs > 0 {
		need += b.srcLT.NumElements() / outs * 128
	}
	if b.masked {
		need += max(b.srcLT.NumElements(), 0) * 8 // the reference's product
	}
	for _, lt := range b.opLTs {
		if n, err := spanOf(lt.Dims, lt.Strides); err == nil {
			need += n * int64(lt.DataType.Size())
		}
	}
	return need
}

// knobMet reports whether gdnn's reductions already satisfies a value of
// a benchdnn attribute or context knob: it computes in f32 and rounds to
// nearest even (any fpmath mode, and accumulation modes that allow f32),
// is deterministic whether asked to be or not, owns its scratch and runs
// out of place on its own threads.
func knobMet(name, val string) bool {
	switch name {
	case "attr-fpmath": // MODE[:APPLY_TO_INT]
		mode, _, _ := strings.Cut(val, ":")
		return slices.Contains([]string{"strict", "bf16", "f16", "tf32", "any"}, mode)
	case "attr-acc-mode":
		return slices.Contains([]string{"strict", "relaxed", "any", "f32"}, val)
	case "attr-deterministic":
		return val == "true" || val == "false"
	case "attr-scratchpad":
		return val == "library"
	case "attr-rounding-mode": // ARG:MODE[+ARG:MODE...]
		for _, e := range strings.Split(val, "+") {
			if _, mode, _ := strings.Cut(e, ":"); mode != "environment" {
				return false
			}
		}
		return true
	case "inplace":
		return val == "0" || strings.EqualFold(val, "false")
	case "ctx-init", "ctx-exe":
		return isDefaultCtx(val)
	}
	return false
}

// unimplementedKnobs says which knobs in effect ask for something gdnn
// does not implement (scales, zero points, dropout, a user scratchpad,
// stochastic rounding, in-place runs, thread contexts), or "".
func unimplementedKnobs(knobs map[string]string) string {
	var not []string
	for _, name := range slices.Sorted(maps.Keys(knobs)) {
		if !knobMet(name, knobs[name]) {
			not = append(not, "--"+name+"="+knobs[name])
		}
	}
	if not == nil {
		return ""
	}
	return "gdnn does not implement " + strings.Join(not, " ")
}

// gatherOutput copies a blocked output into the plain copy the harness
// checks, and fails the problem when its padding is not zero.
func (b *built) gatherOutput(i int) *result {
	if b.outBlk == nil {
		return nil
	}
	if bad := b.outBlk.gather(i, b.outs[i], b.outLT.Strides); bad > 0 {
		return &result{state: "FAILED", reason: fmt.Sprintf("dst padding: %d positions of %s are not zero", bad, b.outBlk.lt.Tag)}
	}
	return nil
}

// prepare builds the partition that turns the dst before a run (prev,
// read as the sum's data type) into the operand of a sum with a scale or
// a zero point: ReduceMax over no axes (a copy to f32 that keeps -0 and
// NaN) -> Subtract(zero point) -> Multiply(scale), each in f32 as
// oneDNN computes scale * (dst - zero_point), into an f32 tensor of the
// dst's layout. Reduce* reads no s32, so an s32 prev is copied as
// ReduceMax(a broadcast f32 zero) -> Add(prev), exact for integers. gdnn
// fuses the sum itself only in place (scale 1, zero point 0, see
// internal/jit/inplace.go), so this is a second Execute before the reduction's,
// timed with it.
func (so *sumOp) prepare(po *PostOp, prev graph.LogicalTensor) result {
	fail := func(err error) result { return result{state: stateOf(err), reason: reasonOf(err)} }
	rank := len(prev.Dims)
	one := make([]int64, rank)
	for i := range one {
		one[i] = 1
	}
	prev.ID = 0
	zp := graph.NewLogicalTensorStrided(1, dtypes.F32, one, graph.DenseStrides(one))
	scale := graph.NewLogicalTensorStrided(2, dtypes.F32, one, graph.DenseStrides(one))
	out := graph.NewLogicalTensorStrided(5, dtypes.F32, prev.Dims, prev.Strides)
	mid := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, dtypes.F32, prev.Dims) }
	copied := mid(3)
	ops := []*graph.Op{graph.NewOp(0, graph.ReduceMax, "copy").AddInput(prev).AddOutput(copied).
		SetAttr("axes", []int64{}).SetAttr("keep_dims", true)}
	ins := []graph.LogicalTensor{prev, zp, scale}
	consts := []float64{0, float64(po.ZeroPoint), float64(po.Scale)}
	if !plan.IsSrcType(prev.DataType) {
		zero := graph.NewLogicalTensorStrided(6, dtypes.F32, prev.Dims, make([]int64, rank))
		copied = mid(7)
		ops = []*graph.Op{
			graph.NewOp(0, graph.ReduceMax, "copy").AddInput(zero).AddOutput(mid(3)).
				SetAttr("axes", []int64{}).SetAttr("keep_dims", true),
			graph.NewOp(3, graph.Add, "prev").AddInput(mid(3)).AddInput(prev).AddOutput(copied).
				SetAttr("auto_broadcast", "numpy"),
		}
		ins = append([]graph.LogicalTensor{zero}, ins...)
		consts = append([]float64{0}, consts...)
	}
	ops = append(ops,
		graph.NewOp(1, graph.Subtract, "zero_point").AddInput(copied).AddInput(zp).
			AddOutput(mid(4)).SetAttr("auto_broadcast", "numpy"),
		graph.NewOp(2, graph.Multiply, "scale").AddInput(mid(4)).AddInput(scale).
			AddOutput(out).SetAttr("auto_broadcast", "numpy"))
	g := graph.New()
	for _, op := range ops {
		if err := g.AddOp(op); err != nil {
			return fail(err)
		}
	}
	if err := g.Finalize(); err != nil {
		return fail(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		return fail(err)
	}
	if len(parts) != 1 || !parts[0].IsSupported() {
		return result{state: "UNIMPLEMENTED", reason: fmt.Sprintf("post-op %q: the scaled previous dst is not one partition: %v", po.Raw, parts)}
	}
	if so.prep, err = parts[0].Compile(ins, []graph.LogicalTensor{out}); err != nil {
		return fail(err)
	}
	so.prepIns, so.prepOut = ins, out
	span, err := spanOf(out.Dims, out.Strides)
	if err != nil {
		return fail(err)
	}
	if so.scaled, err = newBuffer(dtypes.F32, span); err != nil {
		return fail(err)
	}
	so.prepBufs = make([]buffer, len(ins))
	for i, lt := range ins {
		if lt.ID == prev.ID {
			continue
		}
		if so.prepBufs[i], err = newBuffer(dtypes.F32, 1); err != nil {
			return fail(err)
		}
		so.prepBufs[i].set(0, consts[i])
	}
	return result{}
}

// run computes the scaled operand of the sum from dst before the run.
func (so *sumOp) run(dst buffer) error {
	ts := make([]partition.Tensor, len(so.prepIns))
	for j, lt := range so.prepIns {
		data := so.prepBufs[j].data()
		if lt.ID == 0 {
			data = dst.as(lt.DataType).data()
		}
		t, err := partition.NewTensor(lt, data)
		if err != nil {
			return err
		}
		ts[j] = t
	}
	o, err := partition.NewTensor(so.prepOut, so.scaled.data())
	if err != nil {
		return err
	}
	return so.prep.Execute(ts, []partition.Tensor{o})
}

// seedOf is the fill seed of the problem whose repro line is repro: a
// hash of that line, so that the line run alone fills its tensors with
// the data they had in its batch, wherever it stood there.
func seedOf(repro string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(repro))
	return h.Sum64() | 1
}
