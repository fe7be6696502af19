package plan

import (
	"strconv"
	"strings"
)

// Key returns a compact string that determines the computation of pl:
// data types, every loop's size and strides (in nesting order), Div, the
// alg with the parameters it reads, the stage and the post-ops with the parameters they use (the runtime's
// hints to an emitter, kernelconf.Hints, key apart with Hints.Key). Plans with
// equal keys and hints run the same code; canonical plans of equivalent problems
// have equal keys.
// Strides a loop does not use (dst and operand strides of reduced loops)
// and parameters a post-op ignores are left out.
func (pl *Plan) Key() string {
	if pl == nil {
		return "nil"
	}
	b := make([]byte, 0, 64)
	b = append(b, pl.SrcDT.String()...)
	b = append(b, '>')
	b = append(b, pl.DstDT.String()...)
	for i := range pl.Outer {
		b = appendLoop(append(b, ";o"...), &pl.Outer[i], true)
	}
	if pl.HasInner {
		b = appendLoop(append(b, ";i"...), &pl.Inner, true)
	}
	for i := range pl.Reduced {
		b = appendLoop(append(b, ";r"...), &pl.Reduced[i], false)
	}
	b = strconv.AppendInt(append(b, ";d"...), pl.Div, 10)
	if !pl.IsMean() {
		b = append(append(b, ";a"...), pl.Reduction.String()...)
	}
	if pl.Stage != 0 {
		b = strconv.AppendInt(append(b, ";s"...), int64(pl.Stage), 10)
	}
	for _, op := range pl.PostOps {
		b = appendPostOp(append(b, ';'), &op)
	}
	return string(b)
}

// appendLoop writes size,src[,dst[,bin...]].
func appendLoop(b []byte, l *Loop, kept bool) []byte {
	b = strconv.AppendInt(b, l.Size, 10)
	b = strconv.AppendInt(append(b, ','), l.SrcStride, 10)
	if !kept {
		return b
	}
	b = strconv.AppendInt(append(b, ','), l.DstStride, 10)
	for _, s := range l.BinStrides {
		b = strconv.AppendInt(append(b, ','), s, 10)
	}
	return b
}

// appendPostOp writes Name[(alpha,beta)][:bindt]. Floats are written
// with the fewest digits that read back to the same float32 ("-0" stays
// distinct from "0"); all NaNs look alike, as they compute alike.
func appendPostOp(b []byte, op *PostOp) []byte {
	b = append(b, op.Kind.String()...)
	a, be := op.Kind.UsesAlpha(), op.Kind.UsesBeta()
	if a || be {
		b = append(b, '(')
		if a {
			b = strconv.AppendFloat(b, float64(op.Alpha), 'g', -1, 32)
		}
		if be {
			b = strconv.AppendFloat(append(b, ','), float64(op.Beta), 'g', -1, 32)
		}
		b = append(b, ')')
	}
	if op.Kind.IsBinary() {
		b = append(append(b, ':'), op.BinDT.String()...)
	}
	return b
}

// String describes pl for people, e.g.
// "f32:f32 outer[72:240:1] red[240:1] N=240 Outputs=72 Div=240 post[ReLU]",
// each loop as size:srcStride (kept loops add :dstStride and the operand
// strides).
func (pl *Plan) String() string {
	if pl == nil {
		return "<nil plan>"
	}
	var sb strings.Builder
	sb.WriteString(pl.SrcDT.String() + ":" + pl.DstDT.String())
	writeLoops(&sb, "outer", pl.Outer, true)
	if pl.HasInner {
		writeLoops(&sb, "inner", []Loop{pl.Inner}, true)
	}
	writeLoops(&sb, "red", pl.Reduced, false)
	sb.WriteString(" N=" + strconv.FormatInt(pl.N, 10))
	sb.WriteString(" Outputs=" + strconv.FormatInt(pl.Outputs, 10))
	sb.WriteString(" Div=" + strconv.FormatInt(pl.Div, 10))
	if !pl.IsMean() {
		sb.WriteString(" alg=" + pl.Reduction.String())
	}
	if pl.Stage&SkipTransform != 0 {
		sb.WriteString(" partials-in")
	}
	if pl.Stage&SkipFinalize != 0 {
		sb.WriteString(" partials-out")
	}
	if pl.Stage&Unshifted != 0 {
		sb.WriteString(" unshifted")
	}
	if len(pl.PostOps) > 0 {
		sb.WriteString(" post[")
		for i := range pl.PostOps {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.Write(appendPostOp(nil, &pl.PostOps[i]))
		}
		sb.WriteByte(']')
	}
	return sb.String()
}

// writeLoops writes " name[size:srcStride...]..." for String's loops.
func writeLoops(sb *strings.Builder, name string, loops []Loop, kept bool) {
	if len(loops) == 0 {
		return
	}
	sb.WriteString(" " + name)
	for i := range loops {
		sb.WriteString("[" + strings.ReplaceAll(string(appendLoop(nil, &loops[i], kept)), ",", ":") + "]")
	}
}

// String describes pl for people in Plan.String's terms, e.g.
// "f32:s64 outer[6:4:1] red[4:1] Outputs=6 alg=argmax", the reduced
// axis as red[R:RStride].
func (pl *ArgPlan) String() string {
	if pl == nil {
		return "<nil plan>"
	}
	var sb strings.Builder
	sb.WriteString(pl.SrcDT.String() + ":" + pl.IdxDT.String())
	writeLoops(&sb, "outer", pl.Outer, true)
	if pl.HasInner {
		writeLoops(&sb, "inner", []Loop{pl.Inner}, true)
	}
	writeLoops(&sb, "red", []Loop{{Size: pl.R, SrcStride: pl.RStride}}, false)
	sb.WriteString(" Outputs=" + strconv.FormatInt(pl.Outputs, 10))
	alg := " alg=argmax"
	if pl.Min {
		alg = " alg=argmin"
	}
	sb.WriteString(alg)
	if pl.Last {
		sb.WriteString(" last")
	}
	if pl.Abs {
		sb.WriteString(" abs")
	}
	return sb.String()
}

// Clone returns a deep copy of pl that shares no slices with it, so the
// runtime can derive plans (a block of the outermost loop, another Div)
// without touching the cached one.
func (pl *Plan) Clone() *Plan {
	if pl == nil {
		return nil
	}
	c := *pl
	c.Outer = cloneLoops(pl.Outer)
	c.Reduced = cloneLoops(pl.Reduced)
	c.Inner.BinStrides = cloneInts(pl.Inner.BinStrides)
	if pl.PostOps != nil {
		c.PostOps = make([]PostOp, len(pl.PostOps))
		for i, op := range pl.PostOps {
			op.BinStrides = cloneInts(op.BinStrides)
			c.PostOps[i] = op
		}
	}
	return &c
}

// Clone is a copy of p that shares no memory with it, made field by
// field: a copy of *p whose slices were then replaced would, to the
// compiler's escape analysis, keep p's.
func (p *Problem) Clone() *Problem {
	var post []PostOp
	if p.PostOps != nil {
		post = make([]PostOp, len(p.PostOps))
		for i, op := range p.PostOps {
			post[i] = PostOp{Kind: op.Kind, Alpha: op.Alpha, Beta: op.Beta, BinDT: op.BinDT, BinStrides: cloneInts(op.BinStrides)}
		}
	}
	var reduce []bool
	if p.Reduce != nil {
		reduce = append(make([]bool, 0, len(p.Reduce)), p.Reduce...)
	}
	return &Problem{Reduction: p.Reduction, SrcDT: p.SrcDT, DstDT: p.DstDT, Dims: cloneInts(p.Dims), SrcStrides: cloneInts(p.SrcStrides),
		Reduce: reduce, DstStrides: cloneInts(p.DstStrides), PostOps: post}
}

func cloneLoops(ls []Loop) []Loop {
	if ls == nil {
		return nil
	}
	out := make([]Loop, len(ls))
	for i, l := range ls {
		l.BinStrides = cloneInts(l.BinStrides)
		out[i] = l
	}
	return out
}

func cloneInts(s []int64) []int64 {
	if s == nil {
		return nil
	}
	return append(make([]int64, 0, len(s)), s...)
}
