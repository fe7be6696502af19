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
// each decomposed like any other (blocks, tiles, two stages), one after
// the other:
//
//	M (max): the plan as a max, clamped to the finite f32 range
//	  (plan.LSEShift), into dense f32 scratch, one value per output;
//	Y (exp): a copy of every src element minus its output's M (a
//	  binary operand that is broadcast along the reduced loops), through
//	  Exp, into dense f32 scratch the size of src;
//	S (sum): Y summed over the reduced loops, then Log, then Add M (the
//	  operand again), then the plan's own post-ops, into dst.
//
// All three are machine code: Y's Exp and S's Log are the emitters'
// vector exp and log (packages jit/vexp and jit/vlog: each within one
// f32 ulp of the interpreter's). Every term of S is at most 1 and the
// largest is 1, so a row of 1000s gives 1000 + log(n), not Inf.
//
// Run over the whole of a large src, the three phases would read src
// twice from memory and write and read a Y as large as src. So a plan
// runs in chunks of its outermost loop (of Inner, when it has no Outer
// loop), of about one call budget of src each, and each chunk is a
// program of its own (its three phases, on scratch buffers of its own)
// that one thread runs whole: the second read of the chunk's src and its
// Y (as large, or twice) are then served by that core's caches, no phase
// waits for the others' threads, and threads share the chunks, as many
// as there are. Chunks depend on the plan alone, so results stay the
// same for every thread count. A plan with neither loop (one output)
// runs as one program over all of src.

// program is a sequence of phases on scratch buffers of its own
// (bufScratch + i is its buffer i, of scratch[i] bytes), which a call of
// its segment runs whole on one thread: a chunk of a log-sum-exp.
type program struct {
	phases  []phase
	scratch []int64
}

// logSumExp adds the phases of pl (a LogSumExp plan) from srcBuf into
// dstBuf: the three phases, or one phase of chunks that run them.
func (dc *decomposer) logSumExp(pl *plan.Plan, srcBuf, dstBuf, depth int) error {
	if nb := pl.BinaryCount(); nb >= plan.MaxBinary {
		return graph.Errorf(graph.Unimplemented, "jit: log-sum-exp with %d binary post-ops (it needs one operand of its own)", nb)
	}
	// The chunked loop: the outermost, or Inner where there is no Outer
	// loop, in tiles of at least minTile (whole lines of contiguous rows).
	chunked := func(p *plan.Plan) *plan.Loop {
		if len(p.Outer) > 0 {
			return &p.Outer[0]
		}
		return &p.Inner
	}
	if len(pl.Outer) == 0 && !pl.HasInner {
		return dc.lseProgram(pl, srcBuf, dstBuf, depth)
	}
	o := chunked(pl)
	it := plan.MulSat(max(pl.N, 1), esz(pl.SrcDT)) // src bytes of one iteration of o
	least := int64(minTile)
	if len(pl.Outer) > 0 {
		least = 1
		for _, l := range pl.Outer[1:] {
			it = plan.MulSat(it, l.Size)
		}
		if pl.HasInner {
			it = plan.MulSat(it, pl.Inner.Size)
		}
	}
	size := o.Size
	chunk := max(least, callBudget/max(it, 1))
	if chunk >= size {
		return dc.lseProgram(pl, srcBuf, dstBuf, depth)
	}
	srcSz, dstSz, binSz := esz(pl.SrcDT), esz(pl.DstDT), binSizes(pl)
	var seg segment
	base, first := len(dc.d.scratch), len(dc.d.phases)
	// local numbers a chunk's scratch buffers from its program's first.
	local := func(b int) int {
		if i := b - bufScratch - base; i >= 0 && b < bufBins {
			return bufScratch + i
		}
		return b
	}
	for start := int64(0); start < size; start += chunk {
		sub := pl.Clone()
		chunked(sub).Size = min(chunk, size-start)
		counts(sub)
		if err := dc.lseProgram(sub, srcBuf, dstBuf, depth); err != nil {
			return err
		}
		// The chunk's phases and scratch become its program's, its
		// calls moved to its outputs.
		p := &program{phases: append([]phase(nil), dc.d.phases[first:]...), scratch: append([]int64(nil), dc.d.scratch[base:]...)}
		dc.d.phases, dc.d.scratch = dc.d.phases[:first], dc.d.scratch[:base]
		for i := range p.phases {
			for j := range p.phases[i].segs {
				s := &p.phases[i].segs[j]
				if s.srcBuf == srcBuf {
					s.srcOff += start * o.SrcStride * srcSz
				}
				if s.dstBuf == dstBuf {
					s.dstOff += start * o.DstStride * dstSz
				}
				for k := range s.nbins {
					if b := s.bins[k] - bufBins; b >= 0 && b < len(o.BinStrides) {
						s.binOff[k] += start * o.BinStrides[b] * binSz[b]
					}
					s.bins[k] = local(s.bins[k])
				}
				s.srcBuf, s.dstBuf = local(s.srcBuf), local(s.dstBuf)
			}
			seg.srcBytes = addSat(seg.srcBytes, p.phases[i].srcBytes)
		}
		seg.progs = append(seg.progs, p)
	}
	seg.tasks = int64(len(seg.progs))
	dc.d.phases = append(dc.d.phases, phase{segs: []segment{seg}, tasks: seg.tasks, srcBytes: seg.srcBytes})
	return nil
}

// lseProgram adds the three phases of pl (a LogSumExp plan with fewer
// than plan.MaxBinary operands) from srcBuf into dstBuf.
func (dc *decomposer) lseProgram(pl *plan.Plan, srcBuf, dstBuf, depth int) error {
	nb := pl.BinaryCount()
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
