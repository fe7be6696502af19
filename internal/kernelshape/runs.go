package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// Long sums are summed in two levels. An f32 accumulator that takes n
// adds in a row carries a rounding error that grows with n: up to n-1
// units of 2^-24 of the sum of magnitudes, and a good part of that on
// data whose errors all lean one way, such as a constant tensor. One
// call of a kernel may add thousands of terms into each accumulator. So
// a kernel cuts each accumulator's adds into runs of at most about 2K,
// K the power of two at or above the square root of its n (at least
// minRun), and after each run adds its accumulators into running totals
// (registers, or the LongArgs block when the emitter has none to spare)
// and starts them again from zero: no chain is then longer than about
// 2*sqrt(n).
//
// A cut costs a fold per run, which shows on column and row sums that
// run from L2 and fold every 16 adds (docs/RELIABILITY.md, "Figures
// measured"; docs/PERFORMANCE-log.md, "Figures behind the generators'
// choices"). So chains short enough for the tolerance stay whole: the
// reference allows (4*ceil(log2(N+1)) + 8) units for a sum or mean of N
// elements, of which the final adds across accumulators and lanes take
// up to 8, so a chain of up to 4*ceil(log2(N+1)) adds is left uncut (see
// uncut).

// minRun is the shortest run, and the longest chain always left whole:
// shorter runs would fold more often than they add.
const minRun = 16

// MayCut reports whether a kernel summing n elements per output may cut
// its sums into runs, and so needs the LongArgs block.
func MayCut(n int64) bool { return n > minRun }

// uncut is the longest chain of adds left whole in a sum of n elements
// per output.
func uncut(n int64) int64 {
	b := int64(0) // ceil(log2(n+1))
	for b < 63 && int64(1)<<b < n+1 {
		b++
	}
	return max(minRun, 4*b)
}

// Groups lists n groups of u accumulator registers, reg(i, j) being
// register j of group i: the registers each running total sums.
func Groups(n, u int, reg func(i, j int) int) [][]int {
	gs := make([][]int, n)
	for i := range gs {
		gs[i] = make([]int, u)
		for j := range gs[i] {
			gs[i][j] = reg(i, j)
		}
	}
	return gs
}

// sweepExtra bounds the adds an accumulator takes in a sweep beyond its
// loop's iterations: leftover vectors, a masked tail, a masked pair.
const sweepExtra = 3

// Runs says where a kernel cuts its sums into runs: after every Chunk
// iterations of loop Level of the reduced loops (Level == len(outer) is
// the sweep's own loop). Level < 0: the sums are short, nothing is cut.
type Runs struct {
	Level int
	Chunk int
}

// None reports whether nothing is cut.
func (r Runs) None() bool { return r.Level < 0 }

// SweepChunk is the chunk of the sweep's own loop, the one inside the
// reduced loops outer, for RunLoop: 0 when the cut is elsewhere.
func (r Runs) SweepChunk(outer []plan.Loop) int {
	if r.Level == len(outer) {
		return r.Chunk
	}
	return 0
}

// RunsOf chooses the runs of a kernel summing elems elements per output
// as the reduced loops outer (outermost first) around a
// sweep: a loop of iters iterations adding perIter times into each
// accumulator per iteration, and up to sweepExtra adds more. The cut
// goes at the innermost loop whose iterations hold more than K adds in
// all; a run is as many of its iterations as hold at most K (at least
// one).
func RunsOf(elems int64, outer []plan.Loop, iters, perIter int64) Runs {
	body := plan.MulSat(iters, perIter) + sweepExtra
	n := body
	for _, l := range outer {
		n = plan.MulSat(n, l.Size)
	}
	if n <= uncut(elems) {
		return Runs{Level: -1}
	}
	K := runLength(n)
	if plan.MulSat(iters, perIter) > K {
		return Runs{Level: len(outer), Chunk: int(max(1, K/perIter))}
	}
	for j := len(outer) - 1; j >= 0; j-- {
		if plan.MulSat(body, outer[j].Size) > K {
			return Runs{Level: j, Chunk: int(max(1, K/body))}
		}
		body = plan.MulSat(body, outer[j].Size)
	}
	return Runs{Level: -1} // the whole sum is one run: at most K + sweepExtra adds
}

// runLength is K for n adds per accumulator: the power of two at or
// above sqrt(n), at least minRun, so that runs and the totals' chain
// (n/K runs) are both about sqrt(n) long.
func runLength(n int64) int64 {
	K := int64(minRun)
	for K*K < n && K < 1<<20 {
		K *= 2
	}
	return K
}

// EmitReducedRuns is EmitReduced with the cut of r: loop r.Level (when
// it is one of red) runs in chunks of r.Chunk iterations, and flush
// follows each whole chunk (see RunLoop).
func EmitReducedRuns(lp Looper, ptrs *Pointers, red []plan.Loop, srcSize int64, r Runs, flush, body func()) {
	var emit func(level int)
	emit = func(level int) {
		if level == len(red) {
			body()
			return
		}
		s := Steps{Src: red[level].SrcStride * srcSize}
		inner := func() { emit(level + 1) }
		if level == r.Level {
			RunLoop(lp, ptrs, red[level].Size, s, r.Chunk, inner, flush)
			return
		}
		Loop(lp, red[level].Size, s, inner)
	}
	emit(0)
}

// RunLoop emits a loop of n iterations with steps s in chunks of chunk
// iterations, flush after each whole chunk; the iterations left over
// (fewer than chunk) run last, unflushed: they join the next run, or
// the kernel's final fold. chunk <= 0 emits a plain loop.
func RunLoop(lp Looper, ptrs *Pointers, n int64, s Steps, chunk int, body, flush func()) {
	if chunk <= 0 || n < int64(chunk) {
		Loop(lp, n, s, body)
		return
	}
	Chunks(lp, ptrs, n, chunk, s, func(m int) {
		Loop(lp, int64(m), s, body)
		if m == chunk {
			flush()
		}
	})
}

// Totals is what an instruction set supplies to SumRuns: its loops, the
// pointers, and running totals it keeps where it can (registers or the
// LongArgs block).
type Totals interface {
	Looper
	// RunsOf chooses the cut of a sum over the reduced loops outer
	// around a sweep of iters iterations, perIter adds into each
	// accumulator per iteration (RunsOf, or no cut where the emitter
	// has no place for totals).
	RunsOf(outer []plan.Loop, iters, perIter int64) Runs
	// PlaceTotals places one running total per group and clears it from
	// register zero, which holds +0.
	PlaceTotals(groups [][]int, zero int)
	// FoldRun ends a run: each group summed into its first register,
	// added into its total, and all cleared.
	FoldRun(groups [][]int)
}

// SumRuns emits the reduced loops outer (src moving by srcSize-byte
// elements) around sweep, the sums of groups cut into runs as
// t.RunsOf(outer, iters, perIter) says: the totals are placed before the
// loops (from register zero) and each run is folded into them. sweep
// gets the chunk of its own loop (0: no cut there, see RunLoop) and the
// fold. The caller adds the totals in once each group is summed.
func SumRuns(t Totals, outer []plan.Loop, iters, perIter, srcSize int64, groups [][]int, zero int, sweep func(chunk int, fold func())) Runs {
	r := t.RunsOf(outer, iters, perIter)
	if !r.None() {
		t.PlaceTotals(groups, zero)
	}
	fold := func() { t.FoldRun(groups) }
	EmitReducedRuns(t, t.Pointers(), outer, srcSize, r, fold, func() { sweep(r.SweepChunk(outer), fold) })
	return r
}
