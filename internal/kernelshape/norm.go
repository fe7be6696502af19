package kernelshape

import (
	"math"
	"strconv"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The fused normalization shape: each row of a contiguous normalized
// extent is read by a statistics sweep (or two), and then by a map sweep
// that writes dst with the statistics broadcast back, so that where a
// row fits in a core's cache src is read from memory once. The plan is
// a map: its Outer loops are the rows (the first counted, Args.Count),
// its one Reduced loop the row of N elements, contiguous in src and dst;
// its post-ops (gamma, beta, then the caller's) follow the
// normalization, each binary operand either contiguous along the row
// (its Reduced loop stride 1) or broadcast along it (0).
//
// Per row, in registers:
//
//	softmax:     m = max(x); s = sum(exp(x - m)); dst = exp(x - m) * (1/s)
//	log-softmax: m = max(x); s = sum(exp(x - m)); dst = (x - m) - log(s)
//	layer norm:  mu = sum(x)/N; v = sum((x - mu)^2)/N; dst = (x - mu) * (1/sqrt(v + eps))
//	RMS norm:    dst = x * (1/sqrt(sum(x^2)/N + eps))
//	L2 norm:     dst = x * (1/max(sqrt(sum(x^2)), eps))
//	             (EpsAdded: dst = x * (1/(sqrt(sum(x^2)) + eps)))
//	L1 norm:     dst = x * (1/max(sum(|x|), eps))
//
// eps is the kernel's constant, or with EpsArg the f32 the call passes
// in plan.NormArgs.Eps (a graph's epsilon tensor), kept in a register.
//
// With a residual sum (a transformer's x + skip [+ bias] before its
// LayerNorm or RMSNorm), x is that sum: the first statistics sweep forms
// it from the plan's leading binary operands (f32 adds, as plan.Binary
// does them), stores it to src rounded to src's type, and sweeps it;
// the sweeps after it read it back from src, which the row has just
// filled, so that where a row fits a core's L1 the operands are read
// from memory once and the sum is written once.
//
// The variance sums squared distances from the mean, so there is no
// cancellation; softmax's max makes every exp at most 1, a -Inf element
// exp(-Inf) = 0 exactly, an all -Inf row NaN (inf_as_zero: the max
// clamped to the finite range and the sum to at least 1, so 0s). The
// exp is ExpShifted, the cheaper exp of sums of exps: x - m is at most
// 0, so its error is small beside 1 (see NormEmitter). The map
// multiplies by a reciprocal (one true division a row; its operand is a
// root or a sum of at least 1, so it is infinite only for a 0, where x/0
// would be no better). A softmax or log-softmax row that fits the spare
// registers is loaded once and kept there (softmax's exps, log-softmax's
// x - m); otherwise softmax's exps are kept, then scaled: in the call's
// scratch where the row fits it and dst is not an f32 one the exps can
// stay in (a 16-bit dst would round them; a streamed dst would be read
// back from memory; see normRowStage), else in an f32 dst, else the map
// computes them again. A row's instructions depend on where it falls
// in the rows a call takes (in a pair or a group, or left over; see
// below), which the caller fixes from the problem alone, never from the
// thread count, so a row's result does not depend on which thread runs
// it.
//
// A held row's work is one chain (the max and its horizontal
// reduction, then the exps, their sum and its reduction, then the
// division or the log, then the map), too short to keep the core busy.
// Where two held rows fit the registers, the kernel takes the rows of
// its innermost row loop two at a time and emits each step of the chain
// for the first row, then for the second: the two chains are
// independent and overlap. So it does with short rows not held (a
// sweep a step: normSweptPairs), whose reductions between sweeps wait
// as long. Each row takes the one-row kernel's
// instructions in its order (only the registers differ), so its result
// is the same bits; an odd last row runs alone.
//
// f32 log-softmax rows that fit the registers (and bf16 ones where bf16
// is stored in pairs) are taken normLogRows at a time where the emitter
// packs that many rows' statistics in a register (NormRowPacker), and
// not held: each sweep reads the row again, from the cache, and the
// rows' sums share one log, lane by lane, in place of a log each; the
// log of a whole vector for one value is a good share of a short row's
// instructions. Interleaved log-softmax rows not held share one log the
// same way (normSweptLogs).

// NormKind is the normalization a fused kernel computes.
type NormKind uint8

// The fused normalizations.
const (
	NormSoftmax NormKind = iota + 1
	NormLogSoftmax
	NormLayer
	NormRMS
	NormL2
	NormL1
)

var normKindNames = [...]string{NormSoftmax: "softmax", NormLogSoftmax: "logsoftmax", NormLayer: "layernorm",
	NormRMS: "rmsnorm", NormL2: "l2norm", NormL1: "l1norm"}

// String names k as the verbose lines do.
func (k NormKind) String() string {
	if k >= NormSoftmax && int(k) < len(normKindNames) {
		return normKindNames[k]
	}
	return "NormKind(" + strconv.Itoa(int(k)) + ")"
}

// softmax reports whether k is a softmax or log-softmax, whose rows
// take a max and a sum of exps; the other kinds take sums of x, of
// squares or of magnitudes.
func (k NormKind) softmax() bool { return k == NormSoftmax || k == NormLogSoftmax }

// Norm is a fused normalization kernel: the map plan Plan (see above)
// and what its statistics are.
type Norm struct {
	Kind      NormKind
	Plan      *plan.Plan
	Epsilon   float32
	InfAsZero bool // softmax: an all -Inf row gives 0s
	// EpsArg makes the kernel read its epsilon from the argument block
	// (plan.NormArgs.Eps) in place of Epsilon.
	EpsArg bool
	// EpsAdded makes L2 (or L1) norm divide by norm + eps, not
	// max(norm, eps).
	EpsAdded bool
	// Residual, when not 0, is how many of the plan's first post-ops
	// (all binary Adds: x, skip, then perhaps bias) are the operands of
	// a residual sum that src receives (LayerNorm and RMS norm); the map
	// applies the post-ops after them.
	Residual int
	// KeepMean and KeepVar make a layer norm's statistics sweeps store
	// each row's mean and variance (f32; oneDNN's keep_stats) to the
	// plan's last binary operands, the mean's first: post-ops that the
	// map does not apply, broadcast along the row (stride 0), whose
	// operands walk the rows. So a layer norm that keeps its statistics
	// reads its row once, as one that does not.
	KeepMean, KeepVar bool
	// KeepLogSumExp makes a softmax's sum step store each row's
	// log-sum-exp (f32; oneDNN Graph's SoftMax "stats") to the plan's
	// last binary operand, as KeepMean does a layer norm's mean: m +
	// log(s), or with InfAsZero, whose m is clamped to the finite range
	// and whose all -Inf row sums 0, min(s, 1) * m + log(max(s, 1)), so
	// that row's is 0 (as oneDNN's).
	KeepLogSumExp bool
	// OneRow makes the kernel normalize one row at a time where it
	// would interleave rows (see NormRows): the kernel an emitter falls
	// back to when the interleaved one needs more temporaries than
	// are left, and the reference the interleaved one is tested
	// against.
	OneRow bool
	// StreamDst makes the whole-vector stores to dst of the map sweep
	// of a row not held in registers (and of NormColumns' tiles)
	// non-temporal where the emitter can (DstStreamer): for a dst too
	// large to stay in the caches, whose lines would otherwise be read
	// for ownership before they are written and then evicted unread.
	// The caller guarantees what the emitter's stores need (amd64: dst
	// and every row's start aligned to amd64.StreamAlign).
	StreamDst bool
	// PrefetchRows makes the map sweep of a row not held in registers
	// fetch the next row's src into L2 where the emitter can
	// (NormColumnPrefetcher): for a src too large for the caches, whose
	// rows the statistics sweep would otherwise wait for, while the
	// map sweep, which reads the row from the cache, leaves memory's
	// read stream idle. The next row is the innermost row loop's stride
	// on (past the loop's end, a hint to the wrong line at worst). A
	// group of log-softmax rows (normLogRowsGroup) fetches the rows
	// normLogAhead groups on.
	PrefetchRows bool
	// Dequant, when not nil, is a Dequantize fused before the
	// normalization: src is s8 or u8, and the emitter's LoadSrc maps
	// each value to f32 (normdequant.go).
	Dequant *Dequant
}

// nextRowBytes is how far on from a row the next row's src starts
// where n's map sweeps prefetch it (PrefetchRows), else 0.
func nextRowBytes(e NormEmitter, n *Norm) int64 {
	out := n.Plan.Outer
	if !n.PrefetchRows || len(out) == 0 {
		return 0
	}
	return out[len(out)-1].SrcStride * e.ElemTypes().SrcSize
}

// DstStreamer is optional: an instruction set that can store dst past
// the caches. StreamDst(true) makes the whole-vector dst stores that
// follow non-temporal (f32's, and f16's and bf16's after their
// conversion), StreamDst(false) regular again; partial vectors stay
// regular. The emitter orders the non-temporal stores before the kernel
// returns.
type DstStreamer interface {
	StreamDst(on bool)
}

// streamedMap emits map, a map sweep, with its dst stores non-temporal
// where n streams its dst and e can. Only a map that reads src: a store
// that a later sweep reads back (softmax's kept exps in a row; NormColumns
// computes a streamed tile's exps again instead) stays in the cache, and
// the map that rewrites those lines (in the cache, read already) gains
// nothing from bypassing it. Nor a row held in registers, though its
// regular stores read each line of dst from memory before writing it
// too: measured, its few whole lines gained nothing from streaming
// (softmax) or lost (log-softmax), on Zen 4 and again on Zen 5; a group
// of log-softmax rows (normLogRowsGroup), which reads its rows from src
// again, gained (PERFORMANCE-log.md, "Zen 5: the log-softmax group's map
// streamed; bf16 log-softmax rows in groups").
func streamedMap(e NormEmitter, n *Norm, mapSweep func()) {
	if !streams(e, n) {
		mapSweep()
		return
	}
	s := e.(DstStreamer)
	s.StreamDst(true)
	mapSweep()
	s.StreamDst(false)
}

// streams reports whether n's map sweeps store dst non-temporally.
func streams(e NormEmitter, n *Norm) bool {
	_, ok := e.(DstStreamer)
	return n.StreamDst && ok
}

// Check reports why n is not a fused normalization NormRows can emit:
// a residual sum is LayerNorm's and RMS norm's only, and its operands
// are the plan's first post-ops, binary Adds (x, skip, perhaps a bias),
// which the map skips; anything else would drop post-ops silently.
func (n *Norm) Check() error {
	if err := n.checkDequant(); err != nil {
		return err
	}
	if n.Kind < NormSoftmax || n.Kind > NormL1 {
		return status.Errorf(status.InvalidArguments, "fused normalization: kind %d", n.Kind)
	}
	if err := n.checkStats(); err != nil {
		return err
	}
	if n.Residual == 0 {
		return nil
	}
	if n.Kind != NormLayer && n.Kind != NormRMS {
		return status.Errorf(status.InvalidArguments, "fused normalization: a residual sum comes before a layer or RMS norm only")
	}
	if n.Residual < 2 || n.Residual > 3 || n.Residual > len(n.Plan.PostOps) {
		return status.Errorf(status.InvalidArguments, "fused normalization: a residual sum has 2 or 3 operands, not %d (of %d post-ops)", n.Residual, len(n.Plan.PostOps))
	}
	for _, op := range n.Plan.PostOps[:n.Residual] {
		if op.Kind != ops.Add {
			return status.Errorf(status.InvalidArguments, "fused normalization: a residual sum's operands are binary Adds, not %v", op.Kind)
		}
	}
	return nil
}

// statOps is how many of the plan's last post-ops are kept statistics'
// operands (KeepMean, KeepVar, KeepLogSumExp), which the map does not
// apply.
func (n *Norm) statOps() int {
	k := 0
	for _, keep := range []bool{n.KeepMean, n.KeepVar, n.KeepLogSumExp} {
		if keep {
			k++
		}
	}
	return k
}

// checkStats reports why n's kept statistics are not what NormRows
// stores: a layer norm's mean and variance or a softmax's log-sum-exp,
// over rows (not columns), each operand the f32 Add placeholder of a
// binary post-op broadcast along the row, after the residual sum's
// operands.
func (n *Norm) checkStats() error {
	k := n.statOps()
	if k == 0 {
		return nil
	}
	pl := n.Plan
	if (n.KeepMean || n.KeepVar) && n.Kind != NormLayer || n.KeepLogSumExp && n.Kind != NormSoftmax || pl.HasInner {
		return status.Errorf(status.InvalidArguments, "fused normalization: only a layer norm over rows keeps its mean and variance, a softmax over rows its log-sum-exp")
	}
	if len(pl.PostOps) < n.Residual+k {
		return status.Errorf(status.InvalidArguments, "fused normalization: %d kept statistics and a residual sum of %d in %d post-ops",
			k, n.Residual, len(pl.PostOps))
	}
	along := pl.Reduced[0].BinStrides
	for i, op := range pl.PostOps[len(pl.PostOps)-k:] {
		bin := pl.BinaryCount() - k + i
		if op.Kind != ops.Add || op.BinDT != dtypes.F32 || bin >= len(along) || along[bin] != 0 {
			return status.Errorf(status.InvalidArguments, "fused normalization: a kept statistic's operand is an f32 Add broadcast along the row")
		}
	}
	return nil
}

// NormEmitter is what an instruction set supplies to NormRows. Vector
// registers 0..NormRegs()-1 are the shape's own; temporaries come from
// Tmp.
type NormEmitter interface {
	GroupCounter
	Finisher
	// Prologue loads the argument block (Args.Count into cnt when it
	// is not 0); Return leaves the kernel.
	Prologue(cnt int16)
	Return()
	// LoadEps sets every lane of r to plan.NormArgs.Eps; it comes
	// before Prologue, while the argument block is where the call put
	// it.
	LoadEps(r int)
	Lanes() int
	ElemTypes() *Types
	// NormRegs is how many vector registers (from 0) NormRows may use
	// as it likes: at least 8.
	NormRegs() int
	// WidenNorm asks, before any code, for registers 0..n-1 (n >
	// NormRegs()) as NormRows' own, taken from the temporaries; it
	// reports false, and changes nothing, where too few temporaries
	// would be left.
	WidenNorm(n int) bool
	// LoadSrc loads n lanes (0 < n <= V) of src, off bytes past its
	// pointer, into r as f32; lanes n and up are 0. LoadDst does so
	// from an f32 dst.
	LoadSrc(r int, off int64, n int)
	LoadDst(r int, off int64, n int)
	// ExpShifted sets every lane of r to e^r where r is a softmax's
	// x - m: at most 0, -Inf or a NaN. It is package vexp's exp for
	// sums, whose error, SumError(r) of e^r, is at most 4 units of 2^-24
	// absolute since e^r <= 1; it gives +0 for -Inf exactly, and e^r
	// or +0 below the exp for sums' range, and keeps a NaN a NaN.
	ExpShifted(r int)
	// LogSum sets every lane of r to log(r) where r is a softmax's sum
	// of exps: at least 1 (the max's exp is 1, exactly), or a NaN. It is
	// package vlog's log, whose bits it gives there, without the steps
	// that only other arguments need (lanes that hold neither, such as
	// a packed register's unused blocks, come out unspecified).
	LogSum(r int)
	// StoreSrc writes n lanes of r to src, off bytes past its pointer,
	// converted to src's type (a residual sum); r is unchanged.
	StoreSrc(r int, off int64, n int)
	// StoreStat writes lane 0 of r as f32 where binary operand i points
	// (a kept statistic, Norm.KeepMean); r is unchanged.
	StoreStat(i, r int)
	// SetConst sets every lane of r to v.
	SetConst(r int, v float32)
	// HeldConst returns a register whose lanes are all v, to read only:
	// one the kernel holds from its prologue on where the emitter has
	// one to spare (each use then costs no instruction), else a
	// temporary set here, which the caller's Release frees.
	HeldConst(v float32) int
	// Copy sets dst = src.
	Copy(dst, src int)
	// Arith sets r = r OP s for Add, Subtract, Multiply and Divide; s
	// is unchanged.
	Arith(k ops.Kind, r, s int)
	// Accumulate sets the first n lanes of acc to acc c t, the others
	// unchanged; t is left as it is where n is all the lanes, else it
	// may be clobbered.
	Accumulate(c NormCombine, acc, t, n int)
	// AccumulateSquare sets acc to acc + t*t, rounded once; t is
	// unchanged.
	AccumulateSquare(acc, t int)
	// DivideUniform sets r = r / s and SqrtUniform r = sqrt(r), as Arith
	// and Eltwise do, where every lane of r and s holds one value (a
	// row's statistic): the emitter may compute one lane and broadcast
	// it.
	DivideUniform(r, s int)
	SqrtUniform(r int)
	// HReduce sets every lane of r to the combine c of its lanes.
	HReduce(c NormCombine, r int)
	// SkipUnlessBelow branches to l unless a lane of r is below v; a
	// NaN lane is not below.
	SkipUnlessBelow(r int, v float32, l Label)
}

// NormCombine is how a statistics sweep combines.
type NormCombine uint8

const (
	// NormSum adds.
	NormSum NormCombine = iota
	// NormMaxAny takes the larger, and where either side is a NaN or
	// both are zeros, either side: softmax's max, whose NaN its sum of
	// exps takes in anyway (exp(NaN - m) is NaN) and whose zero's sign
	// no exp sees. One instruction where plan.Binary's Maximum is
	// three (amd64).
	NormMaxAny
)

// normAccs is how many accumulators a statistics sweep keeps, and
// normMapVecs how many vectors a map sweep step takes: enough
// independent chains to hide the adds' and the loads' latency.
const (
	normAccs    = 4
	normMapVecs = 2
)

// NormRows emits the whole fused kernel for n through e, and returns
// how many rows it interleaves (1: a row at a time) and whether it keeps
// softmax's exps in the scratch of plan.NormArgs.Stage (normRowStage).
func NormRows(e NormEmitter, n *Norm) (rows int, staged bool) {
	pl := n.Plan
	rows = normRowsAtOnce(e, n)
	var cnt int16
	if len(pl.Outer) > 0 {
		cnt = e.Counter()
	}
	if n.EpsArg {
		e.LoadEps(regEps)
	}
	st := normRowStage(e, n)
	e.Prologue(cnt)
	k := Nest{Loops: pl.Outer, Counted: len(pl.Outer) > 0, Cnt: cnt}
	row := pl.Reduced[0]
	one := func() { normRow(e, n, &row, st) }
	if rows == 1 {
		k.Emit(e, one)
		e.Return()
		return 1, st != nil
	}
	outer, L, counted := k.SplitInnermost()
	sL := e.StepsOf(&L)
	group := func() { normHeldRows(e, n, &row, rows, sL, st) }
	outer.Emit(e, func() {
		if counted {
			CountGroupsInOrder(e, rows, sL, cnt, group, one)
			return
		}
		Chunks(e, e.Pointers(), L.Size, rows, sL, func(m int) {
			if m == rows {
				group()
				return
			}
			for i := range int64(m) {
				e.Pointers().Advance(sL, i)
				one()
				e.Pointers().Advance(sL, -i)
			}
		})
	})
	e.Return()
	return rows, st != nil
}

// normRowStage takes the scratch of plan.NormArgs.Stage for n's softmax
// rows and returns the emitter that keeps them there, or nil: where the
// rows are not held in registers, a row's vectors fit the scratch, e can
// stage (NormColumnStager), and dst is not an f32 one that keeps the
// exps as well (not streamed: a streamed dst's lines are not in the
// cache for the map to read back). Its exps are then kept in the
// scratch, which stays in L1, in place of being computed again by the
// map: one exp an element, as an f32 dst's. Called before the Prologue.
func normRowStage(e NormEmitter, n *Norm) NormColumnStager {
	N := n.Plan.Reduced[0].Size
	V := int64(e.Lanes())
	st, ok := e.(NormColumnStager)
	if !ok || n.Kind != NormSoftmax || normHeldVecs(e, N) > 0 || (N+V-1)/V*V*4 > plan.NormStageBytes ||
		e.ElemTypes().DstDT == dtypes.F32 && !streams(e, n) || !st.TakeStage() {
		return nil
	}
	return st
}

// normPairRows is how many rows the kernel interleaves where it can.
const normPairRows = 2

// normRowsAtOnce is how many rows of its innermost row loop n's kernel
// interleaves: normLogRows where they are log-softmax rows in groups
// (normLogGroup), the loop has that many rows, and e gives the registers
// they take; else normPairRows where the loop has that many rows and
// they are held softmax or log-softmax rows (see normRow) for which e
// gives the registers, or rows not held that normSweptPairs takes (a
// layer, RMS or Lp norm's only where its eps is no run-time one, its
// rows do not share the place of their residual sum and are not read
// from memory); else 1. Called before any code.
func normRowsAtOnce(e NormEmitter, n *Norm) int {
	pl := n.Plan
	if n.OneRow || len(pl.Outer) == 0 || pl.Outer[len(pl.Outer)-1].Size < normPairRows {
		return 1
	}
	if !n.Kind.softmax() {
		// A run-time eps takes the register of the second row's scale;
		// residual sums into one row that every row reuses (src's
		// stride 0) would write over each other; rows from memory
		// (PrefetchRows) read no faster in pairs, some slower
		// (PERFORMANCE-log.md, "Zen 5: layer norm rows in pairs").
		shared := n.Residual > 0 && pl.Outer[len(pl.Outer)-1].SrcStride == 0
		if !n.EpsArg && !shared && !n.PrefetchRows && normSweptPairs(e, n) {
			return normPairRows
		}
		return 1
	}
	H := normHeldVecs(e, pl.Reduced[0].Size)
	if H == 0 {
		if normSweptPairs(e, n) {
			return normPairRows
		}
		return 1
	}
	if normLogGroup(e, n) && pl.Outer[len(pl.Outer)-1].Size >= normLogRows {
		need := normLogRegs(normLogRows-1).scale + 1
		if need <= e.NormRegs() || e.WidenNorm(need) {
			return normLogRows
		}
	}
	need := normGroupRegs(normPairRows-1, H).held + H
	if need > e.NormRegs() && !e.WidenNorm(need) {
		return 1
	}
	return normPairRows
}

// normSweptPairMaxVecs bounds the rows not held in registers that the
// kernel interleaves: a row's chain of sweeps and reductions is then
// short enough that the next row's work, independent of it, is what
// keeps the core busy while a reduction or the division waits.
const normSweptPairMaxVecs = 64

// normSweptPairs reports whether the kernel takes n's rows that are not
// held in registers normPairRows at a time (normSweptSteps,
// normStatSteps; each row's statistics in normSweptRegs): the rows are
// at most normSweptPairMaxVecs vectors, their sums are not cut into runs
// (whose running total would take a row's register), and the rows'
// statistics fit the registers. Where the rows keep their exps in the
// stage, the pair's fit it (see below).
func normSweptPairs(e NormEmitter, n *Norm) bool {
	N := n.Plan.Reduced[0].Size
	V := int64(e.Lanes())
	return (N+V-1)/V <= normSweptPairMaxVecs && RunsOf(N, nil, N/V/normAccs, 1).SweepChunk(nil) == 0 &&
		normSweptRegs(normPairRows-1).scale < e.NormRegs()
}

// A pair of rows of normSweptPairMaxVecs vectors of 64 bytes (AVX-512's)
// fits the stage.
var _ [plan.NormStageBytes - normPairRows*normSweptPairMaxVecs*64]struct{}

// normSweptRegs are the registers of row i of an interleaved pair of
// rows not held in registers: after the accumulators, each row's shift
// and scale (row 0's are the one-row kernel's).
func normSweptRegs(i int) normRowRegs {
	return normRowRegs{shift: normAccs + 2*i, scale: normAccs + 2*i + 1, held: -1}
}

// normHeldVecs is how many vectors a softmax row of N elements takes
// held in registers regHeld..NormRegs()-1, or 0 when it does not fit.
func normHeldVecs(e NormEmitter, N int64) int {
	V := int64(e.Lanes())
	if N > int64(e.NormRegs()-regHeld)*V {
		return 0
	}
	return int((N + V - 1) / V)
}

// normRowRegs are the registers of one held row: its max (shift),
// the reciprocal of its sum or the sum's log (scale), and its vectors
// (from held on). The accumulators, used by one step at a time, are
// shared.
type normRowRegs struct{ shift, scale, held int }

// oneRowRegs are a row's registers when the kernel takes one at a time.
var oneRowRegs = normRowRegs{regShift, regScale, regHeld}

// normGroupRegs are the registers of row i of an interleaved group of
// rows of H held vectors: after the accumulators, each row's statistic
// (its max, then, the max no longer needed, the scale) and its vectors.
func normGroupRegs(i, H int) normRowRegs {
	base := normAccs + i*(1+H)
	return normRowRegs{shift: base, scale: base, held: base + 1}
}

// normLogRows is how many log-softmax rows the kernel interleaves where
// it reads them from the cache again (normLogGroup).
const normLogRows = 4

// normLogAhead is how many groups of normLogRows rows on the group's map
// sweep prefetches src where n prefetches rows (Norm.PrefetchRows). The
// group's first sweep, the max, asks memory for all its rows at once;
// the exps, the log and the map that follow are too many instructions
// for the core to reach the next group's loads meanwhile, so without
// the prefetch each group waits for memory in turn, and one group
// ahead still leaves part of that wait (PERFORMANCE-log.md, "Zen 5:
// the log-softmax group prefetched").
const normLogAhead = 2

// normLogGroup reports whether n's rows, which fit the registers, are
// log-softmax rows of f32 into f32, or of bf16 into bf16 where e stores
// bf16 two vectors at a time (DstPairStorer), and e packs normLogRows
// rows' statistics in one register (NormRowPacker): the kernel then
// takes the rows normLogRows at a time without holding them
// (normLogRowsGroup) and takes one log for the group. A short row's log
// is a good share of its instructions (a polynomial on a whole vector
// for one value); log-softmax's map needs only x, m and log(s), so the
// rows need not be held and a group of rows with one log fits the
// registers (two a row). The other type pairs keep the held pairs,
// where a row's vectors are converted once and its stores checked once
// (RowStoreChecker): f16, and bf16 stored a vector at a time, were
// measured no faster in groups, whose every sweep converts the row
// again and whose stores are checked one by one (PERFORMANCE-log.md,
// "Zen 5: the log-softmax group's map streamed; bf16 log-softmax rows
// in groups"); f32 into bf16 was not measured.
func normLogGroup(e NormEmitter, n *Norm) bool {
	ty := e.ElemTypes()
	p, ok := e.(NormRowPacker)
	dp, isPairer := e.(DstPairStorer)
	types := ty.SrcDT == dtypes.F32 && ty.DstDT == dtypes.F32 ||
		ty.SrcDT == dtypes.BF16 && ty.DstDT == dtypes.BF16 && isPairer && dp.PairsDst()
	return ok && p.PackedRows() == normLogRows && n.Kind == NormLogSoftmax && n.Dequant == nil &&
		n.Residual == 0 && types
}

// NormRowPacker is optional: an instruction set that moves a group of
// rows' statistics, each in every lane of its own register, into blocks
// of one register and back, so that a lane-wise function of them (the
// log) is one sequence for the group.
type NormRowPacker interface {
	// PackedRows is how many rows' statistics one register packs:
	// blocks of Lanes()/PackedRows() lanes; 0 where it packs none.
	PackedRows() int
	// PackRow sets block i of dst to src's value (src holds one value
	// in every lane), leaving dst's other blocks.
	PackRow(dst, src, i int)
	// UnpackRow sets every lane of dst to the value of block i of src.
	UnpackRow(dst, src, i int)
}

// normLogRegs are the registers of row i of an interleaved group of
// log-softmax rows not held (normLogSteps): after the accumulators,
// each row's max, then its sum's log.
func normLogRegs(i int) normRowRegs {
	base := normAccs + 2*i
	return normRowRegs{shift: base, scale: base + 1, held: -1}
}

// normHeldRows emits rows held softmax or log-softmax rows (or a
// normLogRowsGroup), or rows not held (normSweptPairs), their starts s
// apart: each step of the row's chain (normHeldSteps, normSweptSteps,
// normStatSteps) for every row in turn, so the rows' chains overlap.
func normHeldRows(e NormEmitter, n *Norm, row *plan.Loop, rows int, s Steps, st NormColumnStager) {
	if rows == normLogRows && normLogGroup(e, n) {
		normLogRowsGroup(e, n, row, rows, s)
		return
	}
	H := normHeldVecs(e, row.Size)
	// Log-softmax rows not held take one log for the rows' sums, packed
	// in a register, in place of a log each (see normSweptLogs).
	p, packs := e.(NormRowPacker)
	packs = packs && H == 0 && n.Kind == NormLogSoftmax && p.PackedRows() >= rows
	steps := make([][]func(), rows)
	for i := range rows {
		if !n.Kind.softmax() {
			// Rows in pairs prefetch nothing (normRowsAtOnce).
			steps[i] = normStatSteps(e, n, row, normSweptRegs(i), 0)
			continue
		}
		if H == 0 {
			steps[i] = normSweptSteps(e, n, row, normSweptRegs(i), st != nil, packs)
			continue
		}
		steps[i] = normHeldSteps(e, n, row, normGroupRegs(i, H))
	}
	// Rows not held that keep their exps in the stage keep them one
	// after the other there.
	V := int64(e.Lanes())
	stageRow := (row.Size + V - 1) / V * V * 4
	ptrs := e.Pointers()
	for j := range steps[0] {
		if packs && j == normSweptMapStep {
			normSweptLogs(e, p, rows)
		}
		for i := range rows {
			ptrs.Advance(s, int64(i))
			if st != nil && i > 0 {
				st.AdvanceStage(int64(i) * stageRow)
			}
			steps[i][j]()
			if st != nil && i > 0 {
				st.AdvanceStage(-int64(i) * stageRow)
			}
			ptrs.Advance(s, -int64(i))
		}
	}
}

// Registers of a row: the accumulators 0..normAccs-1, then the
// statistics the map sweep reads.
const (
	regShift = normAccs     // m or mu: subtracted from x
	regScale = normAccs + 1 // 1/s, 1/sd or log(s)
	regHeld  = normAccs + 2 // the first vector of a row held in registers
	regTotal = normAccs + 2 // a long sum's running total (rows not held)
	regEps   = normAccs + 3 // a run-time eps (no softmax: nothing held)
)

// rowKeep is where a sweep keeps f(x) (normSweepOf) and where a map
// reads its x (normMapFrom): nowhere (the map reads src), in the f32
// dst, or in the stage (NormColumnStager, as f32 whole vectors, an
// element's place 4 bytes apart from the stage's address).
type rowKeep uint8

const (
	keepNone rowKeep = iota
	keepDst
	keepStage
)

// normRow emits one row's statistics and map; st, when not nil, is the
// stage that keeps softmax's exps (normRowStage).
func normRow(e NormEmitter, n *Norm, row *plan.Loop, st NormColumnStager) {
	var steps []func()
	switch {
	case !n.Kind.softmax():
		steps = normStatSteps(e, n, row, oneRowRegs, nextRowBytes(e, n))
	case normHeldVecs(e, row.Size) > 0:
		// A row that fits the spare registers is loaded once and kept
		// there (normHeldSteps).
		steps = normHeldSteps(e, n, row, oneRowRegs)
	default:
		// Else an f32 dst or the stage keeps softmax's exps; the map
		// then scales them: one exp per element, not two.
		steps = normSweptSteps(e, n, row, oneRowRegs, st != nil, false)
	}
	for _, step := range steps {
		step()
	}
}

// normL2Squares reports whether n's norm over rows of N elements is the
// root of their sum of squares: an L2 norm's, but for rows of one
// element, whose norm is |x| exactly, as the reductions take it
// (plan.Reduction's OfOne), where the square of x could pass f32's range
// or underflow.
func normL2Squares(n *Norm, N int64) bool { return n.Kind == NormL2 && N != 1 }

// normStatSteps returns the steps of a layer norm, RMS norm or Lp norm
// row (never held in registers), its statistics in registers b: each
// statistics sweep with what follows it (the layer norm's mean, then its
// variance; the other kinds' one sweep), then the map into dst, which
// prefetches src ahead bytes on where ahead is not 0.
func normStatSteps(e NormEmitter, n *Norm, row *plan.Loop, b normRowRegs, ahead int64) []func() {
	N := row.Size
	var res *residualSum
	if n.Residual > 0 {
		res = &residualSum{n: n.Residual, steps: e.StepsOf(row)}
	}
	sub := func(t int) { e.Arith(ops.Subtract, t, b.shift) }
	scale := func(t int) { e.Arith(ops.Multiply, t, b.scale) }
	// byN divides register 0 by N, as a mean's finalize does (a true
	// division).
	byN := func() {
		mk := e.Mark()
		t := e.Tmp()
		e.SetConst(t, float32(N))
		e.DivideUniform(0, t)
		e.Release(mk)
	}
	// recip sets b.scale to 1/register 0.
	recip := func() {
		e.SetConst(b.scale, 1)
		e.DivideUniform(b.scale, 0)
	}
	// withEps sets register 0 to register 0 k eps (as plan.Binary
	// does): the run-time eps from its register, or the constant.
	withEps := func(k ops.Kind) {
		mk := e.Mark()
		t := e.Tmp()
		if n.EpsArg {
			e.Copy(t, regEps)
		} else {
			e.SetConst(t, n.Epsilon)
		}
		e.Binary(k, 0, t)
		e.Release(mk)
	}
	rootPlusEps := func() {
		withEps(ops.Add)
		e.SqrtUniform(0)
	}
	var steps []func()
	pre := scale // the map's first steps, before the post-ops
	switch n.Kind {
	case NormLayer:
		// The kept statistics' operands are the last binary ones.
		mean := len(e.Operands().BinSizes) - n.statOps()
		vr := mean
		if n.KeepMean {
			vr++
		}
		steps = []func(){func() {
			normSweepOf(e, N, NormSum, keepNone, nil, false, res)
			byN()
			e.Copy(b.shift, 0)
		}, func() {
			normSquares(e, N, sub, nil)
			byN()
			// A row whose variance is below (mean/4096)² may owe most of
			// it to the mean's rounding: it is swept again around the
			// mean moved by the mean of x - mean, which the kept mean is.
			done := e.NewLabel()
			e.Flush()
			skipUnlessNearConstant(e, [][2]int{{0, b.shift}}, done)
			normSweep(e, N, NormSum, keepNone, sub)
			byN()
			e.Arith(ops.Add, b.shift, 0)
			normSquares(e, N, sub, nil)
			byN()
			e.Flush()
			e.PlaceLabel(done)
			if n.KeepMean {
				e.StoreStat(mean, b.shift)
			}
			if n.KeepVar {
				e.StoreStat(vr, 0)
			}
			rootPlusEps()
			recip()
		}}
		pre = func(t int) { sub(t); scale(t) }
	case NormRMS:
		steps = []func(){func() {
			normSquares(e, N, nil, res)
			byN()
			rootPlusEps()
			recip()
		}}
	case NormL2, NormL1:
		steps = []func(){func() {
			if normL2Squares(n, N) {
				normSquares(e, N, nil, nil)
				e.SqrtUniform(0)
			} else {
				normSweep(e, N, NormSum, keepNone, func(t int) { e.Eltwise(plan.PostOp{Kind: ops.Abs}, t) })
			}
			// As the passes have it: a constant floor is a Clamp, a
			// run-time one a Maximum, an added eps an Add.
			switch {
			case n.EpsAdded:
				withEps(ops.Add)
			case n.EpsArg:
				withEps(ops.Maximum)
			default:
				e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: n.Epsilon, Beta: float32(math.Inf(1))}, 0)
			}
			e.Copy(b.shift, 0) // the divisor, for lpMap
			recip()
		}}
		return append(steps, func() {
			lpMap(e, []int{b.shift}, func(divide bool) {
				pre := scale
				if divide {
					pre = func(t int) { e.Arith(ops.Divide, t, b.shift) }
				}
				streamedMap(e, n, func() { normMapFrom(e, n, row, keepNone, pre, false, ahead) })
			})
		})
	}
	return append(steps, func() {
		streamedMap(e, n, func() { normMapFrom(e, n, row, keepNone, pre, false, ahead) })
	})
}

// lpTiny is the least normal f32: an Lp norm's divisor below it has a
// reciprocal past f32's range. lpHuge is its reciprocal: a divisor above
// it has a subnormal reciprocal, which has lost bits.
const (
	lpTiny = 0x1p-126
	lpHuge = 0x1p126
)

// lpMap emits an Lp norm's map twice, mapAs(false) multiplying x by
// the divisor's reciprocal, mapAs(true) dividing x by the divisor, and
// branches to the second where a lane of a divisor register in divs is
// below lpTiny: an L1 norm of subnormal values, or a row of 0s over a
// subnormal eps, whose reciprocal would be +Inf (x*Inf for x/d, 0*Inf a
// NaN for 0s); or above lpHuge, a norm near f32's largest values, whose
// subnormal reciprocal would put x's result a few units off. A divisor
// of 0, +Inf or NaN takes either: the two give the same. The rows every
// data set has take the multiply, at the cost of two compares and
// branches.
func lpMap(e NormEmitter, divs []int, mapAs func(divide bool)) {
	rare, done := e.NewLabel(), e.NewLabel()
	e.Flush()
	for _, d := range divs {
		next, notTiny := e.NewLabel(), e.NewLabel()
		e.SkipUnlessBelow(d, lpTiny, notTiny)
		e.Goto(rare)
		e.PlaceLabel(notTiny)
		mk := e.Mark()
		t := e.Tmp()
		e.SetConst(t, lpHuge)
		e.Arith(ops.Subtract, t, d) // below 0 where d is above lpHuge
		e.SkipUnlessBelow(t, 0, next)
		e.Release(mk)
		e.Goto(rare)
		e.PlaceLabel(next)
	}
	mapAs(false)
	e.Flush()
	e.Goto(done)
	e.PlaceLabel(rare)
	mapAs(true)
	e.Flush()
	e.PlaceLabel(done)
}

// NearConstant is how far below a mean's magnitude a standard
// deviation must be for the mean to be corrected (skipUnlessNearConstant
// here, and normprog's passes): there the f32 mean's rounding, a unit or
// two of it, can be most of the variance (a constant row's variance is
// then a few units² in place of 0).
const NearConstant = 0x1p-12

// skipUnlessNearConstant branches to l unless, for a pair {variance,
// mean} of registers in stats, a lane's variance is below
// (NearConstant·mean)²; lanes of 0s (a column tile's past its lanes)
// and NaNs (a row holding a NaN or an infinity, whose mean the sweep
// would make NaN, or whose squares overflow) do not count. Each pair
// is tested on its own, so that a NaN in one does not hide another's
// lane. The caller has flushed the pointers' moves.
func skipUnlessNearConstant(e NormEmitter, stats [][2]int, l Label) {
	near := e.NewLabel()
	for i, st := range stats {
		mk := e.Mark()
		t, u := e.Tmp(), e.Tmp()
		e.SetConst(t, NearConstant)
		e.Arith(ops.Multiply, t, st[1])
		e.Arith(ops.Multiply, t, t)
		e.Copy(u, st[0])
		e.Arith(ops.Subtract, u, t)
		if i == len(stats)-1 {
			e.SkipUnlessBelow(u, 0, l)
		} else {
			next := e.NewLabel()
			e.SkipUnlessBelow(u, 0, next)
			e.Goto(near)
			e.PlaceLabel(next)
		}
		e.Release(mk)
	}
	e.PlaceLabel(near)
}

// normSweep combines f(x) (x itself when f is nil) over a row of N
// elements with k into every lane of register 0:
// normAccs accumulators over whole vectors, the last vector partial.
// f(x) is also kept where keep says (keepDst: stored to the f32 dst).
func normSweep(e NormEmitter, N int64, k NormCombine, keep rowKeep, f func(t int)) {
	normSweepOf(e, N, k, keep, f, false, nil)
}

// normSquares sums the squares of f(x) (of x where f is nil) over a row
// of N elements into every lane of register 0, as normSweep with NormSum
// does, each square added by AccumulateSquare, rounded once; with res, x
// is the residual sum, formed here and stored to src.
func normSquares(e NormEmitter, N int64, f func(t int), res *residualSum) {
	normSweepOf(e, N, NormSum, keepNone, f, true, res)
}

// normSweepOf is normSweep where, with res, x is the residual sum,
// formed here and stored to src, and, with squares, the squares of f(x)
// are summed (k is NormSum).
func normSweepOf(e NormEmitter, N int64, k NormCombine, keep rowKeep, f func(t int), squares bool, res *residualSum) {
	V := int64(e.Lanes())
	vb := V * e.ElemTypes().SrcSize
	db := V * 4 // an f32 dst's vector, and the stage's
	st, _ := e.(NormColumnStager)
	normInit(e, k)
	// Pair loads fill two accumulators from one load where neither a
	// kept value nor a residual sum needs the lanes in order.
	pairs := pairsSrc(e, keep, res)
	// combine adds f(x) or its square t to acc, the first m lanes.
	combine := func(acc, t, m int) {
		switch {
		case squares && m == int(V):
			e.AccumulateSquare(acc, t)
			return
		case squares:
			e.Arith(ops.Multiply, t, t)
		}
		e.Accumulate(k, acc, t, m)
	}
	takePair := func(acc int, off int64) {
		mk := e.Mark()
		t, u := e.Tmp(), e.Tmp()
		pairs.LoadSrcPair(t, u, off)
		if f != nil {
			f(t)
			f(u)
		}
		combine(acc, t, int(V))
		combine(acc+1, u, int(V))
		e.Release(mk)
	}
	take := func(acc int, off int64, m int) {
		mk := e.Mark()
		t := e.Tmp()
		if res != nil {
			res.form(e, t, off/e.ElemTypes().SrcSize, m)
			e.StoreSrc(t, off, m)
			if e.ElemTypes().SrcDT != dtypes.F32 {
				e.LoadSrc(t, off, m) // the sum as src's type rounds it
			}
		} else {
			e.LoadSrc(t, off, m)
		}
		if f != nil {
			f(t)
		}
		switch keep {
		case keepDst:
			e.StoreDst(t, off/vb*db, m)
		case keepStage:
			st.StoreStage(t, off/vb*db)
		}
		combine(acc, t, m)
		e.Release(mk)
	}
	full, tail := N/V, int(N%V)
	iters, rem := full/normAccs, int(full%normAccs)
	step := Steps{Src: normAccs * vb}
	if keep == keepDst {
		step.Dst = normAccs * db
	}
	if res != nil {
		for i := range res.n {
			step.Bin[i] = normAccs * V * res.steps.Bin[i]
		}
	}
	// A long sum is cut into runs, as the reductions' are (runs.go):
	// each run's accumulators are summed into a running total in
	// register regTotal and start again from zero.
	chunk := 0
	if k == NormSum {
		chunk = RunsOf(N, nil, iters, 1).SweepChunk(nil)
	}
	if chunk > 0 {
		e.SetConst(regTotal, 0)
	}
	fold := func() {
		normTree(e, k)
		e.Accumulate(NormSum, regTotal, 0, int(V))
		normInit(e, k)
	}
	// The stage is no pointer of the loops' steps: each iteration
	// moves it, and it moves back after them.
	RunLoop(e, e.Pointers(), iters, step, chunk, func() {
		for u := 0; u < normAccs; u++ {
			if pairs != nil {
				takePair(u, int64(u)*vb)
				u++
				continue
			}
			take(u, int64(u)*vb, int(V))
		}
		if keep == keepStage {
			st.AdvanceStage(normAccs * db)
		}
	}, fold)
	if keep == keepStage {
		st.AdvanceStage(-iters * normAccs * db)
	}
	for u := range rem {
		take(u, (iters*normAccs+int64(u))*vb, int(V))
	}
	if tail > 0 {
		take(rem, full*vb, tail)
	}
	normTree(e, k)
	if chunk > 0 {
		e.Accumulate(NormSum, 0, regTotal, int(V))
	}
	e.HReduce(k, 0)
}

// SrcPairLoader is optional: an instruction set that widens a 16-bit
// src to f32 in fewer instructions two vectors at a time, where the
// lanes may come out in another order. LoadSrcPair loads 2V elements of
// src, off bytes past its pointer, into even and odd as f32: the
// even-indexed elements into even, the others into odd.
type SrcPairLoader interface {
	PairsSrc() bool
	LoadSrcPair(even, odd int, off int64)
}

// normAccs is even: a statistics sweep's loop body is pairs.
var _ [-(normAccs % 2)]struct{}

// pairsSrc returns e as a SrcPairLoader where a statistics sweep takes
// its whole vectors in pairs: e pairs its src loads, and the sweep
// neither keeps its values (whose places are in order) nor forms a
// residual sum; its combine and every f it applies are the same for
// any order of the lanes. Else nil.
func pairsSrc(e NormEmitter, keep rowKeep, res *residualSum) SrcPairLoader {
	p, ok := e.(SrcPairLoader)
	if !ok || !p.PairsSrc() || keep != keepNone || res != nil {
		return nil
	}
	return p
}

// normHeldSteps returns the steps of a softmax or log-softmax row held
// in registers b (the row's chain, each step waiting for the one
// before): load the row and take its max; sum the exps (softmax keeps
// them, log-softmax keeps x - m) and take the sum's reciprocal or log;
// map the row into dst.
func normHeldSteps(e NormEmitter, n *Norm, row *plan.Loop, b normRowRegs) []func() {
	N := row.Size
	sub := func(t int) { e.Arith(ops.Subtract, t, b.shift) }
	expShifted := func(t int) { sub(t); e.ExpShifted(t) }
	maxStep := func() {
		normHeldLoad(e, N, b.held, n.Kind == NormSoftmax)
		e.Copy(b.shift, 0)
		if n.InfAsZero {
			e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: -math.MaxFloat32, Beta: float32(math.Inf(1))}, b.shift)
		}
	}
	if n.Kind == NormLogSoftmax {
		lessLog := func(t int) { e.Arith(ops.Subtract, t, b.scale) }
		return []func(){maxStep, func() {
			normHeldSweep(e, N, b.held, sub, e.ExpShifted)
			e.LogSum(0)
			e.Copy(b.scale, 0)
		}, func() { normHeldMap(e, n, row, b.held, lessLog) }}
	}
	scale := func(t int) { e.Arith(ops.Multiply, t, b.scale) }
	return []func(){maxStep, func() {
		normHeldSweep(e, N, b.held, expShifted, nil)
		normStoreLogSumExp(e, n, b.shift)
		if n.InfAsZero {
			e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: 1, Beta: float32(math.Inf(1))}, 0)
		}
		e.SetConst(b.scale, 1)
		e.Arith(ops.Divide, b.scale, 0)
	}, func() { normHeldMap(e, n, row, b.held, scale) }}
}

// normStoreLogSumExp stores a softmax row's log-sum-exp where n keeps
// it (Norm.KeepLogSumExp), from its sum of exps in every lane of
// register 0 (left unchanged) and its max in register shift, through
// accumulators 1 and 2, which the sum no longer needs.
func normStoreLogSumExp(e NormEmitter, n *Norm, shift int) {
	if !n.KeepLogSumExp {
		return
	}
	stat := len(e.Operands().BinSizes) - 1
	e.Copy(1, 0)
	if !n.InfAsZero {
		e.LogSum(1)
		e.Arith(ops.Add, 1, shift)
		e.StoreStat(stat, 1)
		return
	}
	inf := float32(math.Inf(1))
	e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: 1, Beta: inf}, 1)
	e.LogSum(1)
	e.Copy(2, 0)
	e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: 0, Beta: 1}, 2)
	e.Arith(ops.Multiply, 2, shift)
	e.Arith(ops.Add, 2, 1)
	e.StoreStat(stat, 2)
}

// normSweptLogs sets the scale register of each of rows interleaved
// log-softmax rows not held, which holds its sum of exps, to the sum's
// log: one log for the rows' sums, packed in register 0 (an accumulator,
// free between steps), lane by lane the one-row kernel's bits.
func normSweptLogs(e NormEmitter, p NormRowPacker, rows int) {
	for i := range rows {
		p.PackRow(0, normSweptRegs(i).scale, i)
	}
	e.LogSum(0)
	for i := range rows {
		p.UnpackRow(normSweptRegs(i).scale, 0, i)
	}
}

// normSweptMapStep is the index of the map in normSweptSteps' steps.
const normSweptMapStep = 2

// normSweptSteps returns the steps of a softmax or log-softmax row not
// held in registers, its statistics in registers b (the row's chain, as
// normHeldSteps'): its max; the sum of its exps and the sum's reciprocal
// or log; the map into dst. With staged, softmax keeps its exps in the
// stage (normRowStage), else in an f32 dst, where the map scales them:
// one exp an element, not two; else the map computes them again. With
// packedLog, log-softmax's sum step leaves the sum, not its log, for
// normSweptLogs to take before the map.
func normSweptSteps(e NormEmitter, n *Norm, row *plan.Loop, b normRowRegs, staged, packedLog bool) []func() {
	N := row.Size
	ahead := nextRowBytes(e, n)
	sub := func(t int) { e.Arith(ops.Subtract, t, b.shift) }
	expShifted := func(t int) { sub(t); e.ExpShifted(t) }
	keep := keepNone
	switch {
	case staged:
		keep = keepStage
	case n.Kind == NormSoftmax && e.ElemTypes().DstDT == dtypes.F32:
		keep = keepDst
	}
	maxStep := func() {
		normSweep(e, N, NormMaxAny, keepNone, nil)
		e.Copy(b.shift, 0)
		if n.InfAsZero {
			e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: -math.MaxFloat32, Beta: float32(math.Inf(1))}, b.shift)
		}
	}
	sumStep := func() {
		normSweep(e, N, NormSum, keep, expShifted)
		if n.Kind == NormLogSoftmax {
			if !packedLog {
				e.LogSum(0)
			}
			e.Copy(b.scale, 0)
			return
		}
		normStoreLogSumExp(e, n, b.shift)
		if n.InfAsZero {
			e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: 1, Beta: float32(math.Inf(1))}, 0)
		}
		e.SetConst(b.scale, 1)
		e.Arith(ops.Divide, b.scale, 0)
	}
	mapStep := func() {
		if n.Kind == NormLogSoftmax {
			pre := func(t int) { sub(t); e.Arith(ops.Subtract, t, b.scale) }
			streamedMap(e, n, func() { normMapFrom(e, n, row, keepNone, pre, false, ahead) })
			return
		}
		scale := func(t int) { e.Arith(ops.Multiply, t, b.scale) }
		switch keep {
		case keepDst:
			// The map rewrites the lines the sum sweep wrote, in the
			// cache already: a regular store.
			normMapFrom(e, n, row, keepDst, scale, false, ahead)
		case keepStage:
			streamedMap(e, n, func() { normMapFrom(e, n, row, keepStage, scale, false, ahead) })
		default:
			streamedMap(e, n, func() { normMapFrom(e, n, row, keepNone, func(t int) { expShifted(t); scale(t) }, true, ahead) })
		}
	}
	return []func(){maxStep, sumStep, mapStep}
}

// normLogRowsGroup emits rows log-softmax rows that fit the registers
// but are not held in them (normLogGroup), their starts s apart, in the
// registers normLogRegs: each row's max, then each row's sum of exps,
// one log of the rows' sums packed in a register (NormRowPacker), then
// each row's map. The row's vectors are loaded from src again for each
// sweep, from the cache after the first; each takes the held row's
// operations in its order (load and max; x - m, its exp and the sum;
// the sum's log, lane by lane; (x - m) - log(s)), so every row's result
// is the one-row kernel's bits but for NaNs: where a row's results are
// all NaN (a NaN or +Inf in it, or all -Inf) and its sum's lanes hold
// different NaNs, the one-row kernel takes each lane's own and the
// group one block's (NormRowPacker), so which NaN (sign, payload) a
// result carries may differ. A dst stored in pairs (DstPairStorer) is
// mapped two whole vectors at a time. Where n prefetches rows, the map
// sweep fetches the rows normLogAhead groups on into L2; where n
// streams its dst, the map's stores are non-temporal (streamedMap).
func normLogRowsGroup(e NormEmitter, n *Norm, row *plan.Loop, rows int, s Steps) {
	N := row.Size
	V := e.Lanes()
	vb := int64(V) * e.ElemTypes().SrcSize
	vecs := int((N + int64(V) - 1) / int64(V))
	ptrs := e.Pointers()
	// each applies f to every vector v of row i loaded into a
	// temporary, its first m lanes the row's.
	each := func(i int, f func(t, v, m int)) {
		ptrs.Advance(s, int64(i))
		for v := 0; int64(v*V) < N; v++ {
			mk := e.Mark()
			t := e.Tmp()
			m := int(min(int64(V), N-int64(v*V)))
			e.LoadSrc(t, int64(v)*vb, m)
			f(t, v, m)
			e.Release(mk)
		}
		ptrs.Advance(s, -int64(i))
	}
	for i := range rows {
		b := normLogRegs(i)
		each(i, func(t, v, m int) { normFold(e, NormMaxAny, v, t, m, false) })
		normRestAt(e, NormMaxAny, vecs)
		normTree(e, NormMaxAny)
		e.HReduce(NormMaxAny, 0)
		e.Copy(b.shift, 0)
		if n.InfAsZero {
			e.Eltwise(plan.PostOp{Kind: ops.Clamp, Alpha: -math.MaxFloat32, Beta: float32(math.Inf(1))}, b.shift)
		}
	}
	p := e.(NormRowPacker)
	P := p.PackedRows()
	for i0 := 0; i0 < rows; i0 += P {
		for i := i0; i < i0+P; i++ {
			b := normLogRegs(i)
			each(i, func(t, v, m int) {
				e.Arith(ops.Subtract, t, b.shift)
				e.ExpShifted(t)
				normFold(e, NormSum, v, t, m, false)
			})
			normRestAt(e, NormSum, vecs)
			normTree(e, NormSum)
			e.HReduce(NormSum, 0)
			e.Copy(b.scale, 0)
		}
		for i := i0; i < i0+P; i++ {
			p.PackRow(0, normLogRegs(i).scale, i-i0)
		}
		e.LogSum(0)
		for i := i0; i < i0+P; i++ {
			p.UnpackRow(normLogRegs(i).scale, 0, i-i0)
		}
	}
	opnds := mapOperands(e, n)
	rs := e.StepsOf(row)
	pf, _ := e.(NormColumnPrefetcher)
	ahead := nextRowBytes(e, n) * int64(normLogAhead*rows)
	pairs := pairsDst(e, rs, opnds.DstSize)
	streamedMap(e, n, func() {
		for i := range rows {
			b := normLogRegs(i)
			// mapped loads vector v of the row into t and maps it, but
			// for the store.
			mapped := func(t, v int) LaneMap {
				l := Block(v, V, int(min(int64(V), N-int64(v*V))), rs)
				e.LoadSrc(t, int64(v)*vb, l.N)
				if pf != nil && ahead != 0 {
					// The lines that start in this vector, of the row
					// normLogAhead groups on.
					for o := (int64(v)*vb + 63) / 64 * 64; o < int64(v+1)*vb; o += 64 {
						pf.PrefetchSrcL2(ahead + o)
					}
				}
				e.Arith(ops.Subtract, t, b.shift)
				e.Arith(ops.Subtract, t, b.scale)
				normPostOps(e, opnds, 0, t, l)
				return l
			}
			ptrs.Advance(s, int64(i))
			storeMapped(e, pairs, int(N), mapped)
			ptrs.Advance(s, -int64(i))
		}
	})
}

// normHeldLoad loads a row of N elements that fits registers held on
// into them, vector v in register held+v, and leaves its max in every
// lane of register 0; the vectors go to the accumulators in normSweep's
// order. With infTail (softmax, which keeps and scales its exps) the
// lanes past the row's end are -Inf (normLoadInfTail).
func normHeldLoad(e NormEmitter, N int64, held int, infTail bool) {
	V := e.Lanes()
	vb := int64(V) * e.ElemTypes().SrcSize
	v := 0
	for ; int64(v*V) < N; v++ {
		m := int(min(int64(V), N-int64(v*V)))
		r := held + v
		if infTail {
			normLoadInfTail(e, r, int64(v)*vb, m)
		} else {
			e.LoadSrc(r, int64(v)*vb, m)
		}
		normFold(e, NormMaxAny, v, r, m, true)
	}
	normRestAt(e, NormMaxAny, v)
	normTree(e, NormMaxAny)
	e.HReduce(NormMaxAny, 0)
}

// normLoadInfTail loads n lanes of src at off into r as LoadSrc does,
// but with the lanes from n on -Inf, not 0, for softmax's exps, which
// are scaled and stored: e^x of a lane past the row's end is then
// e^-Inf = +0, where e^(0 - m) of a max m past the exp's normal range
// can be subnormal, and a subnormal operand (of the scaling multiply,
// of a bf16 store's check) is slow, on every row with a tail. The max
// and the sum take only the first n lanes either way, so no result
// changes; max(-Inf, x) is x, bit for bit (a NaN x included).
func normLoadInfTail(e NormEmitter, r int, off int64, n int) {
	if n == e.Lanes() {
		e.LoadSrc(r, off, n)
		return
	}
	mk := e.Mark()
	t := e.Tmp()
	e.LoadSrc(t, off, n)
	e.SetConst(r, float32(math.Inf(-1)))
	e.Accumulate(NormMaxAny, r, t, n)
	e.Release(mk)
}

// normHeldSweep applies keep to each vector of a row held in registers
// from held on (normHeldLoad) in place, and sums f of the result (the
// result itself when f is nil) into every lane of register 0; the
// vectors go to the accumulators in normSweep's order, so the sum is the
// same. What it sums are exps (normFold's sums).
func normHeldSweep(e NormEmitter, N int64, held int, keep, f func(t int)) {
	V := e.Lanes()
	v := 0
	for ; int64(v*V) < N; v++ {
		m := int(min(int64(V), N-int64(v*V)))
		r := held + v
		keep(r)
		if f == nil {
			normFold(e, NormSum, v, r, m, true)
			continue
		}
		if v < normAccs && m == V {
			// f's result starts its accumulator, as normFold's.
			e.Copy(v, r)
			f(v)
			continue
		}
		mk := e.Mark()
		t := e.Tmp()
		e.Copy(t, r)
		f(t)
		normFold(e, NormSum, v, t, m, false)
		e.Release(mk)
	}
	normRestAt(e, NormSum, v)
	normTree(e, NormSum)
	e.HReduce(NormSum, 0)
}

// normFold combines the first m lanes of vector v of a row, in register
// t, into its accumulator for k, in normSweep's order (v%normAccs), where
// the row's vectors are emitted one by one: the first normAccs whole
// vectors start their accumulators, as the identity combined with x
// would, bit for bit (the max of -Inf and x is x; for a sum, 0 + x is x
// but for x = -0, so the values summed must not be -0: exps); a part of
// a vector among them starts its accumulator at the identity. One
// difference: NEON's FMAX quiets a signalling NaN, so one there reaches
// the accumulators' tree unquieted, and which NaN's payload a NaN max
// carries may differ (a NaN all the same). The accumulators the row
// leaves unset take normRestAt. With keep, t is left as it was (a held
// vector); else a part of a vector clobbers it.
func normFold(e NormEmitter, k NormCombine, v, t, m int, keep bool) {
	whole := m == e.Lanes()
	if v < normAccs {
		if whole {
			e.Copy(v, t)
			return
		}
		e.SetConst(v, normIdentity(k))
	}
	if whole || !keep {
		// Accumulate leaves a whole vector's t as it is.
		e.Accumulate(k, v%normAccs, t, m)
		return
	}
	mk := e.Mark()
	u := e.Tmp()
	e.Copy(u, t)
	e.Accumulate(k, v%normAccs, u, m)
	e.Release(mk)
}

// normRestAt sets the accumulators from u on, which normFold leaves
// unset in a row of u vectors, to k's identity.
func normRestAt(e NormEmitter, k NormCombine, u int) {
	for a := u; a < normAccs; a++ {
		if a == u {
			e.SetConst(a, normIdentity(k))
		} else {
			e.Copy(a, u)
		}
	}
}

// normInit sets the accumulators to k's identity.
func normInit(e NormEmitter, k NormCombine) { normRestAt(e, k, 0) }

// normIdentity is k's identity: -Inf for the max, 0 for the sum.
func normIdentity(k NormCombine) float32 {
	if k == NormMaxAny {
		return float32(math.Inf(-1))
	}
	return 0
}

// normTree combines the accumulators pairwise into register 0.
func normTree(e NormEmitter, k NormCombine) {
	for h := normAccs / 2; h > 0; h /= 2 {
		for u := range h {
			e.Accumulate(k, u, u+h, e.Lanes())
		}
	}
}

// residualSum is what the first sweep of a row reads to form a residual
// sum: the plan's first n binary operands, with the row's steps.
type residualSum struct {
	n     int
	steps Steps
}

// form sets the m lanes of r from element j of the row on to the sum
// of the operands, in order, as the passes add them.
func (rs *residualSum) form(e NormEmitter, r int, j int64, m int) {
	load := func(i, r int) {
		n := m
		if rs.steps.Bin[i] == 0 {
			n = Bcast
		}
		e.LoadOperand(i, r, j*rs.steps.Bin[i], n)
	}
	load(0, r)
	mk := e.Mark()
	t := e.Tmp()
	for i := 1; i < rs.n; i++ {
		load(i, t)
		e.Binary(ops.Add, r, t)
	}
	e.Release(mk)
}

// normHeldMap maps a row held in registers from held on (normHeldSweep)
// through pre and the post-ops into dst.
//
// Where the emitter is a RowStoreChecker, the row's stores are checked
// once: the held registers keep what was stored, so the exact path
// stores them again.
func normHeldMap(e NormEmitter, n *Norm, row *plan.Loop, held int, pre func(t int)) {
	V := e.Lanes()
	opnds := mapOperands(e, n)
	s := e.StepsOf(row)
	block := func(v int) LaneMap { return Block(v, V, int(min(int64(V), row.Size-int64(v*V))), s) }
	c, once := e.(RowStoreChecker)
	once = once && c.BeginRowStores()
	for v := 0; int64(v*V) < row.Size; v++ {
		r := held + v
		pre(r)
		normFinish(e, opnds, r, block(v))
	}
	if once {
		c.EndRowStores(func() {
			for v := 0; int64(v*V) < row.Size; v++ {
				l := block(v)
				e.StoreDst(held+v, l.DstOff, l.N)
			}
		})
	}
}

// RowStoreChecker is a NormEmitter whose dst stores check each vector
// for lanes their fast conversion gets wrong (AVX-512's bf16 for
// subnormals) and branch to an exact path. BeginRowStores makes the
// stores that follow only gather those lanes, and reports whether it
// did (false, and nothing changed, where the stores have no check);
// EndRowStores then branches once, where some lane needs it, to redo:
// the same stores, emitted with their own checks.
type RowStoreChecker interface {
	BeginRowStores() bool
	EndRowStores(redo func())
}

// normMapFrom maps the row: each vector of src (or of where the sweep
// before kept it, from) through pre, then the plan's post-ops with their
// operands (contiguous along the row or broadcast), stored to dst; not
// the post-ops of a residual sum's operands, which lead, nor those of
// kept statistics, which end the list (n's Residual, KeepMean, KeepVar).
// With infTail src's lanes past the row's end load as -Inf
// (normLoadInfTail). Where ahead is not 0 and e prefetches
// (NormColumnPrefetcher), it fetches into L2 the src ahead bytes on, the
// next row's (see Norm.PrefetchRows).
func normMapFrom(e NormEmitter, n *Norm, row *plan.Loop, from rowKeep, pre func(t int), infTail bool, ahead int64) {
	V := e.Lanes()
	opnds := mapOperands(e, n)
	first := n.Residual
	s := e.StepsOf(row)
	pf, _ := e.(NormColumnPrefetcher)
	st, _ := e.(NormColumnStager)
	pairs := pairsDst(e, s, opnds.DstSize)
	c := normMapVecs * V
	defer func() {
		// The stage, no pointer of the loop's steps, moved with each
		// full chunk (see below); back to the row's start.
		if from == keepStage {
			st.AdvanceStage(-row.Size / int64(c) * int64(c) * 4)
		}
	}()
	Chunks(e, e.Pointers(), row.Size, c, s, func(m int) {
		if from == keepStage && m == c {
			defer st.AdvanceStage(int64(c) * 4)
		}
		if pf != nil && ahead != 0 {
			for b := int64(0); b < int64(m)*e.ElemTypes().SrcSize; b += 64 {
				pf.PrefetchSrcL2(ahead + b)
			}
		}
		mapped := func(t, v int) LaneMap {
			l := Block(v, V, min(V, m-v*V), s)
			switch {
			case from == keepDst:
				e.LoadDst(t, l.DstOff, l.N)
			case from == keepStage:
				st.LoadStage(t, int64(v*V)*4)
			case infTail:
				normLoadInfTail(e, t, int64(v*V)*e.ElemTypes().SrcSize, l.N)
			default:
				e.LoadSrc(t, int64(v*V)*e.ElemTypes().SrcSize, l.N)
			}
			pre(t)
			normPostOps(e, opnds, first, t, l)
			return l
		}
		storeMapped(e, pairs, m, mapped)
	})
}

// MulAdder is optional: an instruction set with a fused multiply-add.
// MulAdd sets r = r*a + b, rounded once; a and b may be clobbered.
type MulAdder interface {
	MulAdd(r, a, b int)
}

// normPostOps applies a normalization map's post-ops from first on to r,
// as postOpsFrom does, but for a scale and shift at first (a binary
// Multiply then a binary Add, as LayerNorm's gamma and beta), which an
// emitter with a fused multiply-add (MulAdder) takes in one, rounded
// once, as oneDNN's normalization kernels apply theirs.
func normPostOps(e NormEmitter, opnds Operands, first, r int, l LaneMap) {
	m, ok := e.(MulAdder)
	p := opnds.PostOps
	if !ok || first+1 >= len(p) || p[first].Kind != ops.Multiply || p[first+1].Kind != ops.Add {
		postOpsFrom(e, opnds, first, r, l)
		return
	}
	bin := 0
	for _, op := range p[:first] {
		if op.Kind.IsBinary() {
			bin++
		}
	}
	mk := e.Mark()
	a, b := e.Tmp(), e.Tmp()
	loadBinary(e, bin, a, l)
	loadBinary(e, bin+1, b, l)
	m.MulAdd(r, a, b)
	e.Release(mk)
	postOpsFrom(e, opnds, first+2, r, l)
}

// normFinish is finish with normPostOps.
func normFinish(e NormEmitter, opnds Operands, r int, l LaneMap) {
	normPostOps(e, opnds, 0, r, l)
	e.StoreDst(r, l.DstOff, l.N)
}

// storeMapped stores the vectors of m elements that mapped(t, v) leaves
// in temporary t (vector v, mapped but not stored, at the returned
// place), two whole vectors at a time where pairs is not nil.
func storeMapped(e NormEmitter, pairs DstPairStorer, m int, mapped func(t, v int) LaneMap) {
	V := e.Lanes()
	for v := 0; v*V < m; v++ {
		mk := e.Mark()
		t := e.Tmp()
		if pairs != nil && (v+2)*V <= m {
			b := e.Tmp()
			l := mapped(t, v)
			mapped(b, v+1)
			pairs.StoreDstPair(t, b, l.DstOff)
			e.Release(mk)
			v++
			continue
		}
		l := mapped(t, v)
		e.StoreDst(t, l.DstOff, l.N)
		e.Release(mk)
	}
}

// mapOperands are the operands a map sweep applies: not those of kept
// statistics, which end the list (n's KeepMean, KeepVar,
// KeepLogSumExp).
func mapOperands(e NormEmitter, n *Norm) Operands {
	opnds := e.Operands()
	opnds.PostOps = opnds.PostOps[:len(opnds.PostOps)-n.statOps()]
	opnds.BinSizes = opnds.BinSizes[:len(opnds.BinSizes)-n.statOps()]
	return opnds
}

// DstPairStorer is optional: an instruction set whose dst stores cost
// less two whole vectors at a time (amd64's bf16: one conversion or pack,
// and one branch on the fast conversion's check, for both). PairsDst
// reports whether this kernel's dst stores do; StoreDstPair then writes
// whole vectors a and b to dst, a off bytes past its pointer and b right
// after it, as two StoreDst would, bit for bit; a and b may be
// overwritten.
type DstPairStorer interface {
	PairsDst() bool
	StoreDstPair(a, b int, off int64)
}

// pairsDst returns e as a DstPairStorer where a map with steps s stores
// its vectors in pairs: e pairs its dst stores and dst is contiguous
// along the row (dstSize bytes an element); else nil.
func pairsDst(e NormEmitter, s Steps, dstSize int64) DstPairStorer {
	p, ok := e.(DstPairStorer)
	if !ok || !p.PairsDst() || s.Dst != dstSize {
		return nil
	}
	return p
}
