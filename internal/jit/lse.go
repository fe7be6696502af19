package jit

import (
	"encoding/binary"
	"math"
	"sync/atomic"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The log-sum-exp program. plan.LogSumExp shifts each output's elements
// by their largest before exp, which no single pass over src knows. But
// the shift is needed only where exp would overflow or the sum underflow,
// which typical data (logits) never reach. So the runtime computes every
// result unshifted, in one pass, and shifts only where that fails:
//
//	U (unshifted): the plan as an Unshifted plan.LogSumExp, log(sum(exp(x)))
//	  of src as it is, decomposed like a sum (blocks, tiles, two stages),
//	  into R: dense f32 scratch, one result per output (dst itself, for
//	  a plan with an f32 dst and no post-ops: it has no P); skipped when
//	  the first element of some output's reduction is out of bounds;
//	then, only when U was skipped or some result in R is not exact
//	  (plan.UnshiftedExact: +-Inf, or a sum too small), the shifted
//	  phases compute all of R:
//	  M (max): the plan as a max, clamped to the finite f32 range
//	    (plan.LSEShift), into dense f32 scratch;
//	  Y (exp): a copy of every src element minus its output's M (a
//	    binary operand that is broadcast along the reduced loops), through
//	    Exp, into dense f32 scratch the size of src;
//	  S (sum): Y summed over the reduced loops, then Log, then Add M (the
//	    operand again), into R;
//	P (post-ops): R copied into dst with the plan's post-ops and operands
//	  (postPassPlan).
//
// The two decisions (lseGuard) are taken on the thread that runs the
// program (the Run's own, for a plan that is not chunked). All of it is
// machine code: Y's Exp and S's Log and U's log are the emitters' vector
// exp and log (packages internal/vexp and internal/vlog: each within one f32 ulp of
// the interpreter's), and U's exp is their cheaper exp for sums (vexp's
// sum.go: within vexp.SumError, up to about |x| ulps per term, for half
// the instructions). Every term of S is at most 1 and the largest
// is 1, so a row of 1000s gives 1000 + log(n), not Inf. U reads src once,
// with the exp's arithmetic beside the loads; the shifted phases read it
// twice.
//
// Run over the whole of a large src, the shifted phases would read src
// twice from memory and write and read a Y as large as src. So a plan
// runs in chunks of its outermost loop (of Inner, when it has no Outer
// loop), of about one call budget of src each, and each chunk is a
// program of its own (its phases, on scratch buffers of its own) that one
// thread runs whole: a chunk's second read of src and its Y (as large,
// or twice) are then served by that core's caches, no phase waits for
// the others' threads, a chunk shifts only when its own data need it,
// and threads share the chunks, as many as there are. Chunks and the
// guards' choices depend on the plan and the chunk's data alone, so
// results stay the same for every thread count. A plan with neither loop
// (one output) runs as one program over all of src, its U in two stages
// across the threads.

// lseGuard marks a phase where the runtime decides which of a
// log-sum-exp's phases run. Two kinds:
//
//   - a sample guard, on the first phase of the unshifted pass U: it
//     reads the first element of each output's reduction in src; if any
//     is an infinity or outside [sampleLo, sampleHi], U would most likely
//     not be exact (an exp past 88.7 overflows, a row near -66 sums below
//     plan.UnshiftedFloor), so U is skipped and the shifted phases run
//     without being asked;
//   - a results guard, on the first of the shifted phases M, Y and S: they
//     run only when U was skipped or some result of U is not exact
//     (plan.UnshiftedExact), and then recompute all of them.
//
// Both read only the chunk's own data, so the choice never depends on the
// thread count.
type lseGuard struct {
	sample bool
	buf    int             // where it reads: src (sample), R or dst itself (results)
	off    int64           // the first element's byte offset in buf
	dt     dtypes.DataType // the elements' type
	loops  []rtLoop        // the kept loops over the elements (size, byte stride), outermost first
	floor  float32         // plan.UnshiftedFloor of the plan's N (results)
	phases int             // the phases it may skip, its own first
}

// sampleLo and sampleHi bound the sampled elements that let a chunk run
// its unshifted pass: below about log(n) - 66 a row's sum falls under
// plan.UnshiftedFloor, above about 88.7 its exp overflows.
const sampleLo, sampleHi = -66, 80

// lseShifts counts the shifted phases' runs, lseSampled those that a
// sample guard sent there (skipping U), for tests.
var lseShifts, lseSampled atomic.Int64

// runPhases runs phases in order with run, skipping those that their
// guards skip.
func (x *execution) runPhases(phases []phase, run func(ph *phase) error) error {
	shift := false // U was skipped: the shifted phases must run
	for i := 0; i < len(phases); i++ {
		ph := &phases[i]
		switch g := ph.guard; {
		case g == nil:
		case g.sample:
			if !g.walk(x.buf(g.buf), g.off, g.loops) {
				shift = true // U skipped
				lseSampled.Add(1)
				i += g.phases - 1
				continue
			}
		case !shift && g.walk(x.buf(g.buf), g.off, g.loops):
			i += g.phases - 1 // every result of U exact: no shift
			continue
		default:
			lseShifts.Add(1)
		}
		if err := run(ph); err != nil {
			return err
		}
	}
	return nil
}

// walk reports whether every element g reads at off in b, over loops,
// holds: each sampled element is a NaN or within [sampleLo, sampleHi];
// each result is exact (plan.UnshiftedExact).
func (g *lseGuard) walk(b []byte, off int64, loops []rtLoop) bool {
	if len(loops) > 1 {
		l := loops[0]
		for i := int64(0); i < l.size; i++ {
			if !g.walk(b, off+i*l.dst, loops[1:]) {
				return false
			}
		}
		return true
	}
	n, step := int64(1), int64(0)
	if len(loops) == 1 {
		n, step = loops[0].size, loops[0].dst
	}
	for i := int64(0); i < n; i++ {
		if g.sample {
			if v := elemF32(g.dt, b, off+i*step); v == v && (v < sampleLo || v > sampleHi) {
				return false
			}
		} else if !plan.UnshiftedExact(math.Float32frombits(binary.LittleEndian.Uint32(b[off+i*step:])), g.floor) {
			return false
		}
	}
	return true
}

// elemF32 is the element of type dt at byte offset off in b, as f32.
func elemF32(dt dtypes.DataType, b []byte, off int64) float32 {
	switch dt {
	case dtypes.F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
	case dtypes.BF16:
		return dtypes.BF16ToF32(binary.LittleEndian.Uint16(b[off:]))
	case dtypes.F16:
		return dtypes.F16ToF32(binary.LittleEndian.Uint16(b[off:]))
	case dtypes.S8:
		return float32(int8(b[off]))
	case dtypes.U8:
		return float32(b[off])
	case dtypes.S32:
		return float32(int32(binary.LittleEndian.Uint32(b[off:])))
	}
	return float32(math.NaN()) // no other src type: leave U to decide
}

// maxLSEChunks bounds the chunks (programs) of one log-sum-exp (see
// logSumExp): srcs up to 64 call budgets (the anchor shapes) keep chunks
// of one budget.
const maxLSEChunks = 64

// program is a sequence of phases on scratch buffers of its own
// (bufScratch + i is its buffer i, of scratch[i] bytes), which a call of
// its segment runs whole on one thread: a chunk of a log-sum-exp.
type program struct {
	phases  []phase
	scratch []int64
}

// logSumExp adds the phases of pl (a LogSumExp plan) from srcBuf into
// dstBuf: its program's phases, or one phase of chunks that run them.
func (dc *decomposer) logSumExp(pl *plan.Plan, srcBuf, dstBuf, depth int) error {
	// The chunked loop: the outermost, or Inner where there is no Outer
	// loop, in tiles of at least minTile (whole lines of contiguous rows).
	chunked := func(p *plan.Plan) *plan.Loop {
		if len(p.Outer) > 0 {
			return &p.Outer[0]
		}
		return &p.Inner
	}
	if len(pl.Outer) == 0 && !pl.HasInner {
		return dc.lseProgram(pl, srcBuf, dstBuf, depth, 0)
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
	// Each chunk is a program of its own, a few KiB of phases: at most
	// maxLSEChunks of them, so that a described src of any size compiles
	// in bounded memory and time. Past maxLSEChunks call budgets of src the
	// chunks grow, and with them the shifted pass's Y scratch.
	chunk = max(chunk, ceilDiv(size, maxLSEChunks))
	if chunk >= size {
		return dc.lseProgram(pl, srcBuf, dstBuf, depth, 0)
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
		dc.inProgram = true
		err := dc.lseProgram(sub, srcBuf, dstBuf, depth, plan.MulSat(plan.MulSat(max(pl.N, 1), pl.Outputs), srcSz))
		dc.inProgram = false
		if err != nil {
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
			if g := p.phases[i].guard; g != nil {
				switch g.buf {
				case srcBuf:
					g.off += start * o.SrcStride * srcSz
				case dstBuf:
					g.off += start * o.DstStride * dstSz
				}
				g.buf = local(g.buf)
			}
			seg.srcBytes = addSat(seg.srcBytes, p.phases[i].srcBytes)
		}
		seg.progs = append(seg.progs, p)
	}
	seg.tasks = int64(len(seg.progs))
	dc.d.phases = append(dc.d.phases, phase{segs: []segment{seg}, tasks: seg.tasks, srcBytes: seg.srcBytes})
	return nil
}

// lseProgram adds the phases of pl (a LogSumExp plan) from srcBuf into
// dstBuf: U, the guarded M, Y and S, and P. A plan with no post-ops and
// an f32 dst has no P: U and S write dst itself. wholeSrcBytes is the src
// bytes of the plan that pl is a chunk of (0: pl is whole), which U is
// scheduled by (see unshiftedSrcBytes).
func (dc *decomposer) lseProgram(pl *plan.Plan, srcBuf, dstBuf, depth int, wholeSrcBytes int64) error {
	r, outputs, ok := meansPlan(pl)
	yBytes := plan.MulSat(plan.MulSat(outputs, max(pl.N, 1)), 4)
	if !ok || yBytes > maxScratchBytes {
		return status.Errorf(status.OutOfMemory, "jit: log-sum-exp of %v needs %d bytes of scratch, more than %d", pl, yBytes, int64(maxScratchBytes))
	}
	dc.d.lse = true
	rBuf := dstBuf
	if len(pl.PostOps) > 0 || pl.DstDT != dtypes.F32 {
		rBuf = bufScratch + len(dc.d.scratch)
		dc.d.scratch = append(dc.d.scratch, outputs*4)
	} else {
		r = pl.Clone()
	}
	kept, _, _ := keptLoops(r)
	first, guarded := len(dc.d.phases), len(dc.d.phases)
	if pl.N > 0 { // an empty reduction is -Inf, which U cannot tell from an underflow
		u := r.Clone()
		u.Stage = plan.Unshifted
		dc.unshiftedSrcBytes = wholeSrcBytes
		err := dc.addSplit(u, srcBuf, rBuf, depth)
		dc.unshiftedSrcBytes = 0
		if err != nil {
			return err
		}
		guarded = len(dc.d.phases)
		g := &lseGuard{sample: true, buf: srcBuf, dt: pl.SrcDT, phases: guarded - first}
		for i := range kept {
			g.loops = append(g.loops, rtLoop{size: kept[i].Size, dst: kept[i].SrcStride * esz(pl.SrcDT)})
		}
		dc.d.phases[first].guard = g
	}
	if err := dc.lseShifted(r, srcBuf, rBuf, yBytes, depth); err != nil {
		return err
	}
	if pl.N > 0 {
		g := &lseGuard{buf: rBuf, dt: dtypes.F32, floor: plan.UnshiftedFloor(pl.N), phases: len(dc.d.phases) - guarded}
		for i := range kept {
			g.loops = append(g.loops, rtLoop{size: kept[i].Size, dst: kept[i].DstStride * 4})
		}
		dc.d.phases[guarded].guard = g
	}
	if rBuf == dstBuf {
		return nil
	}
	return dc.addPostOps(pl, rBuf, dstBuf, depth)
}

// lseShifted adds the shifted phases M, Y and S of r (a LogSumExp plan
// with f32 dst and no post-ops) from srcBuf into rBuf; Y takes yBytes.
func (dc *decomposer) lseShifted(r *plan.Plan, srcBuf, rBuf int, yBytes int64, depth int) error {
	mx, _, _ := meansPlan(r) // M is dense, whatever r's dst strides
	_, dense, _ := keptLoops(r)
	mBuf := bufScratch + len(dc.d.scratch)
	yBuf := mBuf + 1
	dc.d.scratch = append(dc.d.scratch, r.Outputs*4, yBytes)

	mx.Reduction = plan.AlgMax.Reduction(0, 0)
	mx.PostOps = []plan.PostOp{{Kind: ops.Clamp, Alpha: -math.MaxFloat32, Beta: math.MaxFloat32}}
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
	for i, l := range r.Outer {
		ys = append(ys, yl{l, dense[i]})
	}
	for _, l := range r.Reduced {
		ys = append(ys, yl{l, 0})
	}
	if r.HasInner {
		ys = append(ys, yl{r.Inner, dense[len(dense)-1]})
	}
	yStride := make([]int64, len(ys))
	n := int64(1)
	for i := len(ys) - 1; i >= 0; i-- {
		yStride[i] = n
		n = plan.MulSat(n, ys[i].l.Size)
	}
	y := &plan.Plan{Reduction: plan.Copy, SrcDT: r.SrcDT, DstDT: dtypes.F32,
		PostOps: []plan.PostOp{{Kind: ops.Subtract, BinDT: dtypes.F32}, {Kind: ops.Exp}}}
	for i, e := range ys {
		l := plan.Loop{Size: e.l.Size, SrcStride: e.l.SrcStride, DstStride: yStride[i], BinStrides: []int64{e.mStr}}
		if i == len(ys)-1 {
			y.Inner, y.HasInner = l, true
			break
		}
		y.Outer = append(y.Outer, l)
	}
	counts(y)
	if r.N > 0 { // an empty reduction has no Y: S sums nothing
		dc.binBufs = []int{mBuf}
		err := dc.withMem(false, func() error { return dc.addSplit(y, srcBuf, yBuf, depth) })
		dc.binBufs = nil
		if err != nil {
			return err
		}
	}

	// S: r's loops over Y, with M as its operand.
	s := r.Clone()
	s.Reduction, s.SrcDT = plan.AlgSum.Reduction(0, 0), dtypes.F32
	s.PostOps = []plan.PostOp{{Kind: ops.Log}, {Kind: ops.Add, BinDT: dtypes.F32}}
	k := 0
	for i := range s.Outer {
		s.Outer[i].SrcStride, s.Outer[i].BinStrides = yStride[k], []int64{dense[i]}
		k++
	}
	for i := range s.Reduced {
		s.Reduced[i].SrcStride, s.Reduced[i].BinStrides = yStride[k], []int64{0}
		k++
	}
	if s.HasInner {
		s.Inner.SrcStride, s.Inner.BinStrides = yStride[k], []int64{dense[len(dense)-1]}
	}
	counts(s)
	// S reads Y, which the Y phase has just written: it comes from
	// memory only when Y itself is too large for the caches, not
	// whenever the src is.
	dc.binBufs = []int{mBuf}
	err := dc.withMem(fromMemory(s), func() error { return dc.add(s, yBuf, rBuf, depth) })
	dc.binBufs = nil
	return err
}
