package kernelshape

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The fused normalization shape for a normalized dim that is not
// innermost (softmax over the channels of NCHW): the plan's Outer loops
// are kept loops (the first counted, Args.Count), its one Reduced loop
// the normalized dim (the channels, at any stride), and its Inner loop
// the innermost kept dim, contiguous in src and dst. Each lane of a
// vector runs along Inner and is a row of its own, so the statistics
// are vertical: no lane is ever combined with another.
//
// Inner is cut into tiles of a few vectors. Per tile, three sweeps go
// over the C channels:
//
//	max:  m = max over c of x[c]
//	sum:  s = sum over c of exp(x[c] - m)   (softmax keeps each exp,
//	      see below)
//	map:  softmax     dst[c] = exp(x[c] - m) * (1/s)   (or kept exp * (1/s))
//	      log-softmax dst[c] = (x[c] - m) - log(s)
//
// then the plan's post-ops. L2, L1 and RMS norm take two sweeps, layer
// norm three (normColumnNormTile): the sums (of squares, of magnitudes;
// the mean and then the squared distances from it), then the map. A tile's C rows of a few vectors stay in a core's cache between
// its sweeps, so src is read from memory once, whatever C and the stride
// between channels are.
//
// Where the tile's rows fit plan.NormStageBytes, an emitter that can
// (NormColumnStager) stages them: the max sweep copies each row, as
// f32, into a scratch of the call's own (plan.NormArgs.Stage), the sum
// sweep reads it from there and softmax writes its exps back over it,
// and the map reads the stage, not src. The channels are often a power
// of two bytes apart (the planes of NCHW), so a tile's rows fall in the
// same few sets of the L1 and L2 caches, more rows than those sets have
// ways: the sweeps after the first would read src from further out. The
// stage's rows are contiguous, so they stay in the L1. Else softmax with
// an f32 dst not streamed keeps its exps in dst.
//
// The channels of a tile are a page or more apart, where the hardware
// prefetchers do not run ahead, so an emitter that can (NormColumnPrefetcher)
// prefetches into its L2 the src rows of the tile normColumnAhead tiles
// on during the sum sweep, and the dst rows during the map sweep: those
// loads and stores then wait for the L2, not for memory, and the fetches
// overlap the exps. A dst the map stores past the caches (StreamDst)
// is not fetched: there softmax keeps no exps in dst (unless staged, its
// map computes them again from the tile's src), so that dst is written
// once, not written, read back and written again.
//
// The statistics of a lane are combined over the channels in order
// (a long sum of exps cut into runs, as the rows' sums are), the same
// instructions for every lane of every tile, so a result does not
// depend on which tile, call or thread computed it. The arithmetic is
// the row shape's (NormRows): ExpShifted, the reciprocal, inf_as_zero's
// clamps.

// NormShape emits the whole fused kernel for n through e: NormColumns
// where the plan has an Inner loop, else NormRows. It returns how many
// rows the kernel interleaves (1: a row, or a tile of columns, at a
// time) and whether the kernel stages its tiles (NormColumnStager): only
// then does a call need the scratch of plan.NormArgs.Stage.
func NormShape(e NormEmitter, n *Norm) (rows int, staged bool) {
	if n.Plan.HasInner {
		return 1, NormColumns(e, n)
	}
	return NormRows(e, n)
}

// CheckColumns reports why n is not a fused normalization NormColumns
// emits: a normalization over one Reduced loop,
// Inner contiguous in src and dst, every binary operand contiguous or
// broadcast along Inner, no residual sum (and for softmax no epsilon).
// Its every refusal is an InvalidArguments error (none is Unimplemented):
// what it does not refuse, NormColumns emits.
func (n *Norm) CheckColumns() error {
	pl := n.Plan
	if n.Kind < NormSoftmax || n.Kind > NormL1 {
		return status.Errorf(status.InvalidArguments, "fused normalization over columns: kind %d", n.Kind)
	}
	norm := !n.Kind.softmax()
	if n.Residual != 0 || n.EpsArg && !norm {
		return status.Errorf(status.InvalidArguments, "fused normalization over columns: no residual sum, and no run-time epsilon for softmax")
	}
	if pl == nil || len(pl.Reduced) != 1 || !pl.HasInner || pl.Inner.SrcStride != 1 || pl.Inner.DstStride != 1 {
		return status.Errorf(status.InvalidArguments, "fused normalization over columns: one normalized loop and an Inner loop contiguous in src and dst")
	}
	for i := range pl.BinaryCount() {
		if s := stride(pl.Inner.BinStrides, i); s != 0 && s != 1 {
			return status.Errorf(status.InvalidArguments, "fused normalization over columns: binary operand %d has stride %d along Inner", i, s)
		}
	}
	return nil
}

// stride is s[i], 0 past its end.
func stride(s []int64, i int) int64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// NormColumnPrefetcher is optional: an instruction set that prefetches
// the tiles ahead (see above).
type NormColumnPrefetcher interface {
	// PrefetchSrcL2 and PrefetchDstL2 prefetch the line off bytes past
	// the src or dst pointer into the core's L2 (never faulting).
	PrefetchSrcL2(off int64)
	PrefetchDstL2(off int64)
}

// normColumnAhead is how many tiles ahead NormColumnPrefetcher fetches.
const normColumnAhead = 3

// NormColumnStager is optional: an instruction set whose kernels keep a
// tile's rows in the scratch of plan.NormArgs.Stage (see above), or a
// softmax row's exps (NormRows).
type NormColumnStager interface {
	// TakeStage, called before the Prologue, keeps a register for the
	// stage's address, which the Prologue loads; false where too few
	// registers are left for it.
	TakeStage() bool
	// StoreStage and LoadStage move a whole vector r, as f32, to or
	// from the stage off bytes past its address; AdvanceStage moves the
	// address by d bytes.
	StoreStage(r int, off int64)
	LoadStage(r int, off int64)
	AdvanceStage(d int64)
}

// NormColumns emits the fused kernel of a normalized dim that is not
// innermost (see above); n passes CheckColumns. It reports whether the
// kernel stages its tiles.
func NormColumns(e NormEmitter, n *Norm) (staged bool) {
	pl := n.Plan
	var cnt int16
	if len(pl.Outer) > 0 {
		cnt = e.Counter()
	}
	in, ch := pl.Inner, pl.Reduced[0]
	c := normColumnsOf(e, n, ch.Size)
	if n.EpsArg {
		e.LoadEps(c.eps)
	}
	V := e.Lanes()
	softmax := n.Kind.softmax()
	st, _ := e.(NormColumnStager)
	if st != nil && !(softmax && ch.Size*int64(c.vecs*V*4) <= plan.NormStageBytes && st.TakeStage()) {
		st = nil
	}
	e.Prologue(cnt)
	k := Nest{Loops: pl.Outer, Counted: len(pl.Outer) > 0, Cnt: cnt}
	si := e.StepsOf(&in)
	k.Emit(e, func() {
		Chunks(e, e.Pointers(), in.Size, c.vecs*V, si, func(m int) {
			if softmax {
				normColumnTile(e, n, c, &ch, si, m, st)
			} else {
				normColumnNormTile(e, n, c, &ch, si, m)
			}
		})
	})
	e.Return()
	return st != nil
}

// normColumns is how a tile is laid out: vecs vectors, the statistic of
// vector k in register k, the shift (softmax's max, layer norm's mean)
// in vecs+k and, when the sum is cut into runs of chunk channels, its
// running total in 2*vecs+k (vecs+k for the norms with no shift);
// a run-time epsilon in register eps, the last of the shape's own.
type normColumns struct {
	vecs  int
	chunk int
	total int // the first running total's register
	eps   int
}

// normColumnMaxVecs bounds a tile: enough independent chains to hide
// the combines' latency, few enough rows of a tile to stay in L1 for
// C in the thousands.
const normColumnMaxVecs = 8

// normColumnsOf lays a tile of n out for C channels. A lane's sum is
// one chain of C adds with nothing added after it (no accumulators or
// lanes to combine), so the whole of the reference's tolerance for a
// sum of C elements is the chain's, uncut(C) + 8 adds (runs.go): only
// a longer one is cut into runs.
func normColumnsOf(e NormEmitter, n *Norm, C int64) normColumns {
	var c normColumns
	if C > uncut(C)+8 {
		c.chunk = RunsOf(C, nil, C, 1).SweepChunk(nil)
	}
	regs, per := e.NormRegs(), 1
	if n.Kind.softmax() || n.Kind == NormLayer {
		per = 2 // and the shift: the max, the mean
	}
	if n.EpsArg {
		regs--
		c.eps = regs
	}
	if c.chunk > 0 {
		per++
	}
	c.vecs = max(1, min(normColumnMaxVecs, regs/per))
	c.total = (per - 1) * c.vecs
	return c
}

// columnTile is one tile of m lanes of Inner over the channels ch: what
// the sweeps of softmax (normColumnTile) and of the norms
// (normColumnNormTile) share.
type columnTile struct {
	e      NormEmitter
	c      normColumns
	si, cs Steps // the steps along Inner and along the channels
	C      int64 // the channels
	V, m   int
	nv     int // the tile's vectors
	pf     NormColumnPrefetcher
}

func newColumnTile(e NormEmitter, c normColumns, ch *plan.Loop, si Steps, m int) *columnTile {
	V := e.Lanes()
	pf, _ := e.(NormColumnPrefetcher)
	return &columnTile{e: e, c: c, si: si, cs: e.StepsOf(ch), C: ch.Size, V: V, m: m, nv: (m + V - 1) / V, pf: pf}
}

// width is how many of vector k's lanes are the tile's.
func (tl *columnTile) width(k int) int { return min(tl.V, tl.m-k*tl.V) }

// shift is the register of vector k's shift (softmax's max, layer
// norm's mean).
func (tl *columnTile) shift(k int) int { return tl.c.vecs + k }

// total is the register of vector k's running total.
func (tl *columnTile) total(k int) int { return tl.c.total + k }

// srcOff is vector k's offset from a src row's start.
func (tl *columnTile) srcOff(k int) int64 { return int64(k*tl.V) * tl.si.Src }

// each emits f(k, t) for every vector of the tile, t a temporary.
func (tl *columnTile) each(f func(k, t int)) {
	e := tl.e
	for k := range tl.nv {
		mk := e.Mark()
		f(k, e.Tmp())
		e.Release(mk)
	}
}

// set sets every vector's statistic to v.
func (tl *columnTile) set(v float32) {
	tl.e.SetConst(0, v)
	for k := 1; k < tl.nv; k++ {
		tl.e.Copy(k, 0)
	}
}

// A sum over the channels is startSum, then RunLoop with endRun ending
// each run of c.chunk channels, then endSum: register k its sum.
//
// startSum clears the sums and their running totals.
func (tl *columnTile) startSum() {
	tl.set(0)
	if tl.c.chunk > 0 {
		for k := range tl.nv {
			tl.e.Copy(tl.total(k), 0)
		}
	}
}

// endRun adds a run's sums to the running totals and clears them.
func (tl *columnTile) endRun() {
	for k := range tl.nv {
		tl.e.Accumulate(NormSum, tl.total(k), k, tl.V)
	}
	tl.set(0)
}

// endSum adds the running totals into the sums.
func (tl *columnTile) endSum() {
	if tl.c.chunk > 0 {
		for k := range tl.nv {
			tl.e.Accumulate(NormSum, k, tl.total(k), tl.V)
		}
	}
}

// ahead calls f(off) for each line of a tile's row normColumnAhead
// tiles on, step bytes a lane.
func (tl *columnTile) ahead(step int64, f func(off int64)) {
	row := int64(tl.c.vecs*tl.V) * step
	for b := int64(0); b < row; b += 64 {
		f(normColumnAhead*row + b)
	}
}

// reciprocal sets register k to 1/k, a true division.
func reciprocal(e NormEmitter, k int) {
	mk := e.Mark()
	t := e.Tmp()
	e.SetConst(t, 1)
	e.Arith(ops.Divide, t, k)
	e.Copy(k, t)
	e.Release(mk)
}

// normColumnTile emits the three sweeps of one tile of m lanes of
// Inner, over the channels ch.
func normColumnTile(e NormEmitter, n *Norm, c normColumns, ch *plan.Loop, si Steps, m int, st NormColumnStager) {
	tl := newColumnTile(e, c, ch, si, m)
	V, cs := tl.V, tl.cs
	// A staged tile's row is c.vecs whole vectors of f32, the rows one
	// after another.
	stageOff := func(k int) int64 { return int64(k * V * 4) }
	stageRow := int64(c.vecs * V * 4)
	// next moves the stage to the next row, back reverses a sweep's.
	next := func() {
		if st != nil {
			st.AdvanceStage(stageRow)
		}
	}
	back := func() {
		if st != nil {
			st.AdvanceStage(-ch.Size * stageRow)
		}
	}
	// Lanes past m are loaded as 0 and combined with the rest (a vector
	// is combined whole, with no mask): their statistics are never
	// stored.
	tl.set(float32(math.Inf(-1)))
	Loop(e, tl.C, Steps{Src: cs.Src}, func() {
		tl.each(func(k, t int) {
			e.LoadSrc(t, tl.srcOff(k), tl.width(k))
			if st != nil {
				st.StoreStage(t, stageOff(k))
			}
			e.Accumulate(NormMaxAny, k, t, V)
		})
		next()
	})
	back()
	for k := range tl.nv {
		e.Copy(tl.shift(k), k)
		if n.InfAsZero {
			e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: -math.MaxFloat32, Beta: float32(math.Inf(1))}, tl.shift(k))
		}
	}
	// A softmax with an f32 dst keeps its exps there for the map to
	// scale, unless that dst is streamed (see above).
	keep := n.Kind == NormSoftmax && e.ElemTypes().DstDT == dtypes.F32 && !streams(e, n) && st == nil
	// A staged softmax keeps its exps in the stage instead.
	stageExps := n.Kind == NormSoftmax && st != nil
	expShifted := func(k, t int) {
		e.Arith(ops.Subtract, t, tl.shift(k))
		e.ExpShifted(t)
	}
	sum := Steps{Src: cs.Src}
	if keep {
		sum.Dst = cs.Dst
	}
	tl.startSum()
	RunLoop(e, e.Pointers(), tl.C, sum, c.chunk, func() {
		if tl.pf != nil {
			tl.ahead(si.Src, tl.pf.PrefetchSrcL2)
		}
		tl.each(func(k, t int) {
			if st != nil {
				st.LoadStage(t, stageOff(k))
			} else {
				e.LoadSrc(t, tl.srcOff(k), tl.width(k))
			}
			expShifted(k, t)
			switch {
			case keep:
				e.StoreDst(t, Block(k, V, tl.width(k), si).DstOff, tl.width(k))
			case stageExps:
				st.StoreStage(t, stageOff(k))
			}
			e.Accumulate(NormSum, k, t, V)
		})
		next()
	}, tl.endRun)
	back()
	tl.endSum()
	// Register k becomes what the map applies: 1/s, or log(s).
	for k := range tl.nv {
		switch {
		case n.Kind == NormLogSoftmax:
			e.LogSum(k)
		default:
			if n.InfAsZero {
				e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: 1, Beta: float32(math.Inf(1))}, k)
			}
			reciprocal(e, k)
		}
	}
	opnds := e.Operands()
	stream := streams(e, n)
	streamedMap(e, n, func() {
		Loop(e, tl.C, cs, func() {
			if tl.pf != nil && !stream {
				tl.ahead(si.Dst, tl.pf.PrefetchDstL2)
			}
			tl.each(func(k, t int) {
				l := Block(k, V, tl.width(k), si)
				switch {
				case keep:
					e.LoadDst(t, l.DstOff, l.N)
					e.Arith(ops.Multiply, t, k)
				case stageExps:
					st.LoadStage(t, stageOff(k))
					e.Arith(ops.Multiply, t, k)
				case n.Kind == NormSoftmax:
					e.LoadSrc(t, tl.srcOff(k), l.N)
					expShifted(k, t)
					e.Arith(ops.Multiply, t, k)
				default:
					if st != nil {
						st.LoadStage(t, stageOff(k))
					} else {
						e.LoadSrc(t, tl.srcOff(k), l.N)
					}
					e.Arith(ops.Subtract, t, tl.shift(k))
					e.Arith(ops.Subtract, t, k)
				}
				normFinish(e, opnds, t, l)
			})
			next()
		})
		back()
	})
}

// normColumnNormTile emits the sweeps of one tile of m lanes of Inner
// for an L2, L1, RMS or layer norm over the channels ch, as NormRows
// computes them (N the channels):
//
//	L2, L1: s = sum over c of x[c]^2 or |x[c]|
//	        r = 1/max(sqrt(s), eps) or 1/max(s, eps) (EpsAdded: + eps)
//	RMS:    r = 1/sqrt(sum(x^2)/N + eps)
//	layer:  mu = sum(x)/N; r = 1/sqrt(sum((x - mu)^2)/N + eps)
//	map:    dst[c] = x[c] * r, or (x[c] - mu) * r for layer norm
//
// then the plan's post-ops (gamma and beta among them). Each sum is cut
// into runs as softmax's sum of exps.
func normColumnNormTile(e NormEmitter, n *Norm, c normColumns, ch *plan.Loop, si Steps, m int) {
	tl := newColumnTile(e, c, ch, si, m)
	V, cs, C := tl.V, tl.cs, tl.C
	// sum sets register k to the sum over the channels of f(x) for
	// vector k; the first sweep of a tile prefetches the tiles ahead.
	// Lanes past m are loaded as 0 and summed with the rest: their
	// statistics are never stored.
	sum := func(first bool, f func(k, t int)) {
		tl.startSum()
		RunLoop(e, e.Pointers(), C, Steps{Src: cs.Src}, c.chunk, func() {
			if tl.pf != nil && first {
				tl.ahead(si.Src, tl.pf.PrefetchSrcL2)
			}
			tl.each(func(k, t int) {
				e.LoadSrc(t, tl.srcOff(k), tl.width(k))
				f(k, t)
				e.Accumulate(NormSum, k, t, V)
			})
		}, tl.endRun)
		tl.endSum()
	}
	// with sets register k to k op t, t set by f: a constant or the
	// run-time eps, or N.
	with := func(k int, op ops.Kind, f func(t int)) {
		mk := e.Mark()
		t := e.Tmp()
		f(t)
		e.Binary(op, k, t)
		e.Release(mk)
	}
	eps := func(t int) {
		if n.EpsArg {
			e.Copy(t, c.eps)
		} else {
			e.SetConst(t, n.Epsilon)
		}
	}
	// byN divides by N, a true division as the rows' mean does.
	byN := func(k int) {
		mk := e.Mark()
		t := e.Tmp()
		e.SetConst(t, float32(C))
		e.Arith(ops.Divide, k, t)
		e.Release(mk)
	}
	rootPlusEps := func(k int) {
		with(k, ops.Add, eps)
		e.Eltwise(plan.PostOp{Kind: ops.Sqrt}, k)
	}
	square := func(_, t int) { e.Arith(ops.Multiply, t, t) }
	switch n.Kind {
	case NormL2, NormL1:
		// The L2 norm of one element is |x| (normL2Squares).
		squares := normL2Squares(n, C)
		if squares {
			sum(true, square)
		} else {
			sum(true, func(_, t int) { e.Eltwise(plan.PostOp{Kind: ops.Abs}, t) })
		}
		// The eps as the row kernel applies it: a constant floor is a
		// Clamp, a run-time one a Maximum, an added eps an Add.
		for k := range tl.nv {
			if squares {
				e.Eltwise(plan.PostOp{Kind: ops.Sqrt}, k)
			}
			switch {
			case n.EpsAdded:
				with(k, ops.Add, eps)
			case n.EpsArg:
				with(k, ops.Maximum, eps)
			default:
				e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: n.Epsilon, Beta: float32(math.Inf(1))}, k)
			}
		}
	case NormRMS:
		sum(true, square)
		for k := range tl.nv {
			byN(k)
			rootPlusEps(k)
		}
	case NormLayer:
		sum(true, func(int, int) {})
		for k := range tl.nv {
			byN(k)
			e.Copy(tl.shift(k), k)
		}
		sub := func(k, t int) { e.Arith(ops.Subtract, t, tl.shift(k)) }
		squares := func() {
			sum(false, func(k, t int) {
				sub(k, t)
				e.Arith(ops.Multiply, t, t)
			})
			for k := range tl.nv {
				byN(k)
			}
		}
		squares()
		// Lanes whose variance the mean's rounding may make (the rows'
		// normStatSteps) take the tile's sweeps again around the mean
		// moved by the mean of x - mean.
		done := e.NewLabel()
		e.Flush()
		stats := make([][2]int, tl.nv)
		for k := range stats {
			stats[k] = [2]int{k, tl.shift(k)}
		}
		skipUnlessNearConstant(e, stats, done)
		sum(false, sub)
		for k := range tl.nv {
			byN(k)
			e.Arith(ops.Add, tl.shift(k), k)
		}
		squares()
		e.Flush()
		e.PlaceLabel(done)
		for k := range tl.nv {
			rootPlusEps(k)
		}
	}
	opnds := e.Operands()
	stream := streams(e, n)
	// mapAs emits the map: x times register k, made its reciprocal,
	// or with divide x divided by it (an Lp norm's subnormal divisor,
	// lpMap).
	mapAs := func(divide bool) {
		op := ops.Divide
		if !divide {
			op = ops.Multiply
			for k := range tl.nv {
				reciprocal(e, k)
			}
		}
		streamedMap(e, n, func() {
			Loop(e, C, cs, func() {
				if tl.pf != nil && !stream {
					tl.ahead(si.Dst, tl.pf.PrefetchDstL2)
				}
				tl.each(func(k, t int) {
					l := Block(k, V, tl.width(k), si)
					e.LoadSrc(t, tl.srcOff(k), l.N)
					if n.Kind == NormLayer {
						e.Arith(ops.Subtract, t, tl.shift(k))
					}
					e.Arith(op, t, k)
					normFinish(e, opnds, t, l)
				})
			})
		})
	}
	if n.Kind != NormL1 && n.Kind != NormL2 {
		mapAs(false)
		return
	}
	divs := make([]int, tl.nv)
	for k := range divs {
		divs[k] = k
	}
	lpMap(e, divs, mapAs)
}
