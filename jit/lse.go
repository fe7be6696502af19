package jit

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit/plan"
)

// The log-sum-exp program. plan.LogSumExp needs each output's largest
// element before its sum, which no single pass over src has, and which
// a split into stages would lose. So the runtime runs it as three plans,
// each decomposed like any other (blocks, tiles, two stages, post-op
// pass), one phase after the other:
//
//	M (max): the plan as a max, clamped to the finite f32 range
//	  (plan.LSEShift), into dense f32 scratch, one value per output;
//	Y (exp): a copy of every src element minus its output's M (a
//	  binary operand that is broadcast along the reduced loops), through
//	  Exp, into dense f32 scratch the size of src;
//	S (sum): Y summed over the reduced loops, then Log, then Add M (the
//	  operand again), then the plan's own post-ops, into dst.
//
// All three are machine code: Y's Exp is the emitters' vector exp
// (package jit/vexp: within one f32 ulp of the interpreter's), and only
// S's Log, applied once per output, goes to the post-op pass. Every term
// of S is at most 1 and the largest is 1, so a row of 1000s gives
// 1000 + log(n), not Inf.

// logSumExp adds the three phases of pl (a LogSumExp plan) from srcBuf
// into dstBuf.
func (dc *decomposer) logSumExp(pl *plan.Plan, srcBuf, dstBuf, depth int) error {
	nb := pl.BinaryCount()
	if nb >= plan.MaxBinary {
		return graph.Errorf(graph.Unimplemented, "jit: log-sum-exp with %d binary post-ops (it needs one operand of its own)", nb)
	}
	mx, outputs, ok := meansPlan(pl)
	yBytes := plan.MulSat(plan.MulSat(outputs, max(pl.N, 1)), 4)
	if !ok || yBytes > maxScratchBytes {
		return graph.Errorf(graph.OutOfMemory, "jit: log-sum-exp of %v needs %d bytes of scratch, more than %d", pl, yBytes, int64(maxScratchBytes))
	}
	_, dense, _ := keptLoops(pl)
	mBuf := bufScratch + len(dc.d.scratch)
	yBuf := mBuf + 1
	dc.d.scratch = append(dc.d.scratch, outputs*4, yBytes)
	dc.d.lse = true

	mx.Reduction = plan.AlgMax.Reduction(0, 0)
	mx.PostOps = []plan.PostOp{{Kind: plan.Clamp, Alpha: -math.MaxFloat32, Beta: math.MaxFloat32}}
	if err := dc.addSplit(mx, srcBuf, mBuf, depth); err != nil {
		return err
	}

	// Y's loops: the kept loops outside, the reduced loops, then Inner
	// (the order src is read in best), dense in that order. M is read
	// at each output's place, the same for every reduced index.
	type yl struct {
		l    plan.Loop
		mStr int64
	}
	var ys []yl
	for i, l := range pl.Outer {
		ys = append(ys, yl{l, dense[i]})
	}
	for _, l := range pl.Reduced {
		ys = append(ys, yl{l, 0})
	}
	if pl.HasInner {
		ys = append(ys, yl{pl.Inner, dense[len(dense)-1]})
	}
	yStride := make([]int64, len(ys))
	n := int64(1)
	for i := len(ys) - 1; i >= 0; i-- {
		yStride[i] = n
		n = plan.MulSat(n, ys[i].l.Size)
	}
	y := &plan.Plan{Reduction: plan.Copy, SrcDT: pl.SrcDT, DstDT: dtypes.F32,
		PostOps: []plan.PostOp{{Kind: plan.Subtract, BinDT: dtypes.F32}, {Kind: plan.Exp}}}
	for i, e := range ys {
		l := plan.Loop{Size: e.l.Size, SrcStride: e.l.SrcStride, DstStride: yStride[i], BinStrides: []int64{e.mStr}}
		if i == len(ys)-1 {
			y.Inner, y.HasInner = l, true
			break
		}
		y.Outer = append(y.Outer, l)
	}
	counts(y)
	if pl.N > 0 { // an empty reduction has no Y: S sums nothing
		dc.binBufs = []int{mBuf}
		err := dc.addSplit(y, srcBuf, yBuf, depth)
		dc.binBufs = nil
		if err != nil {
			return err
		}
	}

	// S: pl's loops over Y, with M as operand 0 ahead of pl's own.
	s := pl.Clone()
	s.Reduction, s.SrcDT = plan.AlgSum.Reduction(0, 0), dtypes.F32
	s.PostOps = append([]plan.PostOp{{Kind: plan.Log}, {Kind: plan.Add, BinDT: dtypes.F32}}, s.PostOps...)
	withM := func(l *plan.Loop, m int64) {
		l.BinStrides = append([]int64{m}, l.BinStrides...)
	}
	k := 0
	for i := range s.Outer {
		s.Outer[i].SrcStride = yStride[k]
		withM(&s.Outer[i], dense[i])
		k++
	}
	for i := range s.Reduced {
		s.Reduced[i].SrcStride = yStride[k]
		withM(&s.Reduced[i], 0)
		k++
	}
	if s.HasInner {
		s.Inner.SrcStride = yStride[k]
		withM(&s.Inner, dense[len(dense)-1])
	}
	counts(s)
	dc.binBufs = make([]int, 1+nb)
	dc.binBufs[0] = mBuf
	for i := range nb {
		dc.binBufs[1+i] = bufBins + i
	}
	err := dc.add(s, yBuf, dstBuf, depth)
	dc.binBufs = nil
	return err
}
