package bench

import (
	"math"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
)

// A normalization driver's attributes and an int8 dst run as the gdnn
// graph oneDNN Graph's normalization patterns are: the normalization
// writes f32, then the ops fused after it, in the order of oneDNN's
// primitive (softmax, lnorm and gnorm's compute_ref_fwd):
//
//	y = norm(src) * src_scale      a Multiply by a one-element tensor
//	y = post-ops(y)                eltwise and binary ops; linear is a
//	                               Multiply and an Add of scalars
//	dst = y / dst_scale            a Quantize (scale dst_scale, zero
//	                               point 0) into an s8 or u8 dst, else a
//	                               Divide, then a TypeCast into a 16-bit
//	                               dst
//
// The src scale multiplies the normalized values, not src: the
// normalizations are not linear in src, and oneDNN's primitive scales
// after them. So an s8 or u8 src is normalized as its integers: a
// Dequantize of scale 1 and zero point 0, fused before the normalization
// (graphNormBackend), converts them to f32 as the kernel loads them.

// normScales are a problem's --attr-scales: common (per-tensor) src and
// dst scales, 1 where not given.
type normScales struct {
	src, dst       float32
	hasSrc, hasDst bool
}

// parseNormScales reads an --attr-scales value (ARG:POLICY[:SCALE[:DT[:
// GROUPS]]] joined by '+'); the error says what gdnn does not build.
func parseNormScales(v string) (normScales, error) {
	s := normScales{src: 1, dst: 1}
	if v == "" {
		return s, nil
	}
	for _, e := range strings.Split(v, "+") {
		f := strings.Split(e, ":")
		if len(f) < 2 {
			return s, status.Errorf(status.InvalidArguments, "--attr-scales entry %q: want ARG:POLICY[:SCALE]", e)
		}
		arg, policy := f[0], f[1]
		if arg != "src" && arg != "dst" {
			return s, status.Errorf(status.Unimplemented, "--attr-scales entry %q: a normalization takes src and dst scales, not %s", e, arg)
		}
		if policy != "common" {
			return s, status.Errorf(status.Unimplemented, "--attr-scales entry %q: %s scales per %s; gdnn fuses per-tensor (common) scales after a normalization", e, arg, policy)
		}
		val := float32(1)
		if len(f) > 2 {
			x, err := strconv.ParseFloat(f[2], 32)
			if err != nil {
				return s, status.Errorf(status.InvalidArguments, "--attr-scales entry %q: scale %q is not a number", e, f[2])
			}
			val = float32(x)
		}
		if len(f) > 3 && f[3] != "f32" {
			return s, status.Errorf(status.Unimplemented, "--attr-scales entry %q: scales of type %s; gdnn's fused scales are f32", e, f[3])
		}
		if len(f) > 4 {
			return s, status.Errorf(status.Unimplemented, "--attr-scales entry %q: grouped scales; gdnn fuses per-tensor scales after a normalization", e)
		}
		if math.IsNaN(float64(val)) || math.IsInf(float64(val), 0) || arg == "dst" && val == 0 {
			return s, status.Errorf(status.InvalidArguments, "--attr-scales entry %q: a %s scale must be finite%s", e, arg,
				map[bool]string{true: " and not 0 (dst is divided by it)", false: ""}[arg == "dst"])
		}
		if arg == "src" {
			s.src, s.hasSrc = val, true
		} else {
			s.dst, s.hasDst = val, true
		}
	}
	return s, nil
}

// normStep is one op fused after the normalization: its graph op, and
// for a binary op its second operand (a scalar constant or a tensor
// filled as benchdnn fills post-op operands).
type normStep struct {
	gp      graphPostOp
	operand *PostOp // a binary op's operand: dims by its mask, type, tag
	konst   bool    // the operand is a scalar holding value
	value   float64
}

// normChainOf returns the ops c's attributes and dst type fuse after
// the normalization (nil: none), or an error that says what gdnn does
// not build. rank is the data's.
func normChainOf(c *normCase, rank int) ([]normStep, error) {
	sc, err := parseNormScales(c.attrs["attr-scales"])
	if err != nil {
		return nil, err
	}
	ops, err := ParsePostOps(c.attrs["attr-post-ops"])
	if err != nil {
		return nil, err
	}
	scalar := func(bin string, k graph.OpKind, v float32) normStep {
		return normStep{gp: graphPostOp{kind: k, bin: bin, attrs: map[string]any{"auto_broadcast": "numpy"}},
			operand: &PostOp{Kind: bin, BinDT: dtypes.F32, Tag: "abx"}, konst: true, value: float64(v)}
	}
	var steps []normStep
	if sc.hasSrc {
		steps = append(steps, scalar("mul", graph.Multiply, sc.src))
	}
	for i := range ops {
		p := ops[i]
		switch {
		case p.Kind == "linear":
			// alpha*x + beta, as benchdnn's reference computes it
			// (oneDNN Graph has no linear op).
			steps = append(steps, scalar("mul", graph.Multiply, p.Alpha), scalar("add", graph.Add, p.Beta))
			continue
		case p.IsSum():
			return nil, status.Errorf(status.Unimplemented, "post-op %q: a sum reads dst as it was before the run; gdnn's normalization partitions take no such input", p.Raw)
		case p.IsBinary():
			if c.driver == "lnorm" && p.Policy == "per_oc" && rank > 0 {
				// benchdnn's layer normalization takes per_oc as the
				// last dim, its channels (get_po_masks).
				p.Mask = 1 << (rank - 1)
			}
			if p.Tag != "any" {
				l, err := ResolveTag(p.Tag, rank)
				if err != nil {
					return nil, err
				}
				if err := plainOnly(l, "post-op "+p.Raw+" operand"); err != nil {
					return nil, err
				}
			}
		}
		gp, err := p.toGraph()
		if err != nil {
			return nil, err
		}
		st := normStep{gp: gp}
		if p.IsBinary() {
			st.operand = &p
		}
		steps = append(steps, st)
	}
	if sc.hasDst && !isInt8Name(c.ddt) {
		steps = append(steps, scalar("div", graph.Divide, sc.dst))
	}
	return steps, nil
}

// dstScaleOf is c's dst scale (1 where not given).
func dstScaleOf(c *normCase) float32 {
	sc, _ := parseNormScales(c.attrs["attr-scales"])
	return sc.dst
}

// isInt8Name reports whether a benchdnn data type name is s8 or u8.
func isInt8Name(dt string) bool { return dt == "s8" || dt == "u8" }

// normChainProblem says why c's scales, post-ops or int8 dst do not run
// (UNIMPLEMENTED or INVALID_ARGUMENTS), or "".
func normChainProblem(c *normCase) result {
	if _, err := normChainOf(c, len(c.dataDims())); err != nil {
		return result{state: stateOf(err), reason: reasonOf(err)}
	}
	return result{}
}

// normOperandFill fills a binary post-op's operand as benchdnn's
// normalization drivers do: integers from lo to 16 (softmax 0, lnorm
// and gnorm 4, which keeps a sum clear of cancellation), never 0 for a
// divisor.
func normOperandFill(b buffer, dims, strides []int64, lo int64, seed uint64) {
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
		b.set(offs[0], float64(lo+int64(unit(seed, pos)*float64(17-lo))))
	})
}

// buildChain sets b's fused ops from its case: the steps, their
// operands' logical tensors (ids from 100) and whether a Quantize ends
// the chain.
func (b *normBuilt) buildChain() error {
	dims := b.srcLT.Dims
	steps, err := normChainOf(b.c, len(dims))
	if err != nil {
		return err
	}
	b.steps, b.quantize, b.dstScale = steps, b.ddt.IsInt8(), dstScaleOf(b.c)
	b.stepLT = make([]int, len(steps))
	for i, st := range steps {
		b.stepLT[i] = -1
		if st.operand == nil {
			continue
		}
		odims := st.operand.operandDims(dims)
		tag := st.operand.Tag
		if tag == "any" {
			tag = "abx"
		}
		l, err := ResolveTag(tag, len(dims))
		if err != nil {
			return err
		}
		b.stepLT[i] = len(b.opLTs)
		b.opLTs = append(b.opLTs, graph.NewLogicalTensorStrided(uint64(100+i), st.operand.BinDT, odims, l.Strides(odims)))
	}
	return nil
}

// fused reports whether ops follow the normalization in b's graph.
func (b *normBuilt) fused() bool { return len(b.steps) > 0 || b.quantize }

// chainOps returns the ops after the normalization, the first reading
// cur (the normalization's f32 output), the last writing b.dstLT:
// the steps in f32, then a Quantize into an int8 dst or a TypeCast into
// a 16-bit one.
func (b *normBuilt) chainOps(cur graph.LogicalTensor) []*graph.Op {
	dims := b.srcLT.Dims
	var ops []*graph.Op
	next := uint64(20)
	last := len(b.steps) - 1
	if b.quantize || b.ddt != dtypes.F32 {
		last = len(b.steps) // a final Quantize or TypeCast writes dst
	}
	out := func(i int) graph.LogicalTensor {
		if i == last {
			return b.dstLT
		}
		next++
		return graph.NewLogicalTensorAny(next, dtypes.F32, dims)
	}
	for i, st := range b.steps {
		name := st.gp.elt + st.gp.bin
		op := graph.NewOp(uint64(1+i), st.gp.kind, name).AddInput(cur)
		if j := b.stepLT[i]; j >= 0 {
			op.AddInput(b.opLTs[j])
		}
		for k, v := range st.gp.attrs {
			op.SetAttr(k, v)
		}
		o := out(i)
		op.AddOutput(o)
		ops = append(ops, op)
		cur = o
	}
	id := uint64(1 + len(b.steps))
	switch {
	case b.quantize:
		ops = append(ops, graph.NewOp(id, graph.Quantize, "quantize").AddInput(cur).AddOutput(b.dstLT).
			SetAttr("qtype", "per_tensor").SetAttr("scales", []float32{b.dstScale}).SetAttr("zps", []int64{0}))
	case b.ddt != dtypes.F32:
		ops = append(ops, graph.NewOp(id, graph.TypeCast, "typecast").AddInput(cur).AddOutput(b.dstLT))
	}
	return ops
}

// allocOperands allocates the steps' operands, the scalars holding
// their constants.
func (b *normBuilt) allocOperands() error {
	b.operands = make([]buffer, len(b.opLTs))
	for i, st := range b.steps {
		j := b.stepLT[i]
		if j < 0 {
			continue
		}
		lt := b.opLTs[j]
		s, err := spanOf(lt.Dims, lt.Strides)
		if err != nil {
			return err
		}
		if b.operands[j], err = newBuffer(lt.DataType, s); err != nil {
			return err
		}
		if st.konst {
			b.operands[j].set(0, st.value)
		}
	}
	return nil
}

// fillOperands fills the tensor operands (not the constants): at random
// (bitwise, exec and perf modes) or, for a check, as benchdnn does.
func (b *normBuilt) fillOperands(check bool, seed uint64) {
	for i, st := range b.steps {
		j := b.stepLT[i]
		if j < 0 || st.konst {
			continue
		}
		lt := b.opLTs[j]
		if !check {
			fillOperand(b.operands[j], lt.Dims, lt.Strides, seed+uint64(i))
			continue
		}
		lo := int64(4)
		if b.c.driver == "softmax" {
			lo = 0
		}
		if st.gp.bin == "div" {
			lo = max(lo, 1)
		}
		normOperandFill(b.operands[j], lt.Dims, lt.Strides, lo, seed+uint64(i))
	}
}

// applyChain applies the fused ops to the normalization's reference
// vals (logical order) in float64, as benchdnn's reference does, and
// returns a bound on the error of gdnn's f32 computation per value: err0
// of the normalization's own result, carried through every op with one
// f32 rounding each; and the other outcomes where the ops may or may
// not overflow f32 (chainOutput).
func (b *normBuilt) applyChain(vals, err0 []float64) ([]float64, map[int64][]outcome, error) {
	dims := b.srcLT.Dims
	var chain []refPostOp
	for i, st := range b.steps {
		rp := refPostOp{g: st.gp}
		if j := b.stepLT[i]; j >= 0 {
			rp.operand, rp.view = b.operands[j], broadcastView(b.opLTs[j].Dims, b.opLTs[j].Strides)
		}
		chain = append(chain, rp)
	}
	if b.quantize {
		// The Quantize divides by its scale before it rounds.
		s, err := newBuffer(dtypes.F32, 1)
		if err != nil {
			return nil, nil, err
		}
		s.set(0, float64(b.dstScale))
		chain = append(chain, refPostOp{g: graphPostOp{kind: graph.Divide, bin: "div"}, operand: s, view: make([]int64, len(dims))})
	}
	errs := append([]float64(nil), err0...)
	alts := chainOutput(vals, dims, chain, false, errs)
	return errs, alts, nil
}

// fusedRule applies the fused ops to dst, the normalization's reference
// (in place), and returns the rule its output is compared with:
// benchdnn's for the dst type (an s8 or u8 dst: softmax exact, lnorm
// and gnorm their f32 threshold times 2^(24 - digits), 7 for s8 and 8
// for u8, as setup_cmp's digits_dt gives), the shift check dropped (the
// ops after it scale and move the result), and any value within the
// error gdnn's f32 computation may make passes.
func (b *normBuilt) fusedRule(dst []float64, rule normRule) (normRule, error) {
	err0 := make([]float64, len(dst))
	for i, v := range dst {
		if b.c.driver == "softmax" {
			// The f32 threshold and softmax's absolute check.
			err0[i] = softmaxRule(dtypes.F32, b.op == "LogSoftmax", "").trh*math.Abs(v) + epsF32
			continue
		}
		sh := 0.0
		if rule.shift != nil {
			sh = rule.shift[i]
		}
		err0[i] = statsRule(dtypes.F32, b.statsBase()).trh * (math.Abs(v-sh) + math.Abs(sh))
	}
	errs, alts, err := b.applyChain(dst, err0)
	if err != nil {
		return rule, err
	}
	rule.shift, rule.errs, rule.alts = nil, errs, alts
	if b.quantize {
		rule = normRule{absF32: rule.absF32, errs: errs, alts: alts}
		if b.c.driver != "softmax" {
			digits := map[dtypes.DataType]int64{dtypes.S8: 7, dtypes.U8: 8}[b.ddt]
			rule.trh = b.statsBase() * float64(int64(1)<<(24-digits))
		}
	}
	return rule, nil
}

// statsBase is lnorm's and gnorm's f32 threshold (benchdnn's setup_cmp).
func (b *normBuilt) statsBase() float64 {
	if b.c.driver == "gnorm" {
		return 6e-7
	}
	return 5e-7
}
