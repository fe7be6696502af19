package amd64

import "github.com/gdnn/gdnn/internal/kernelconf"

// tuning is one core family's figures for Choose: every measured number
// and every family difference the choices read, in one table per family
// (intelTuning, zenTuning), so that tuning for a new family is a new
// table, not a search through the generator. Section titles are those
// of docs/PERFORMANCE-log.md; "Figures" is its section "Figures behind
// the generators' choices".
type tuning struct {
	// groupMaxF32 and groupMax are the longest rows (elements, f32 and other src) summed
	// V outputs at once (one accumulator chain each, transposed) rather
	// than one output at a time: grouping wins up to 64 for every type,
	// breaks even for f32 near 128 and still wins for 16-bit rows,
	// whose loads are cheap and per-output work dear, at 240 (Figures:
	// "Short rows in groups of V").
	groupMaxF32, groupMax int64
	// rowAccumulators is how many accumulators one output's row sweep
	// adds into: enough chains to hide the add's latency ("Paced row
	// sweeps" compares it with one).
	rowAccumulators int
	// pacedRows: row sweeps of f32 src read from DRAM (the FromMemory
	// hint) go at one 64-byte line per add's latency, in a loop of
	// oneDNN's shape, because these cores stream DRAM fastest with few
	// loads in flight ("Paced row sweeps", "Zen 4: paced loops in
	// oneDNN's shape"). Intel cores need the loads in flight. The native
	// kernel's rows read from DRAM (f64 and exact data) are paced alike
	// (kernelshape.NativePacer).
	pacedRows bool
	// pfAhead is how far ahead (bytes) groups of rows shorter than a
	// line, and kept iterations sharing a line, prefetch: their many
	// instructions per line leave the reorder window too few loads
	// (Figures: "Groups of rows shorter than a line prefetched", "Kept
	// loops whose iterations share a line prefetched").
	pfAhead int64
	// groupPrefetchIters is the most outer reduced iterations a group
	// prefetches under: with more, the lines pfAhead on are used only
	// after all of them (Figures: "Groups of rows shorter than a line
	// prefetched").
	groupPrefetchIters int64
	// rowStreams and minStreamedRow: a single f32 row of at least
	// minStreamedRow bytes is read as rowStreams streams side by side,
	// each with its own accumulators (Figures: "Two streams for long f32
	// rows").
	rowStreams     int
	minStreamedRow int64
	// rowPrefetch: single 16-bit rows (and exp rows) prefetch rowAhead
	// bytes ahead in calls of at least minPrefetchedCall bytes (Figures:
	// "16-bit rows prefetched 16 KiB ahead"). Zen cores' hardware
	// prefetchers keep these loads ahead alone ("Rows without software
	// prefetch").
	rowPrefetch       bool
	rowAhead          int64
	minPrefetchedCall int64
	// chainTarget is how many independent add chains a column loop body
	// should have: the add's latency (4) times two adds per cycle, a
	// figure of the cores, not a measurement.
	chainTarget int
	// avx2WideAcc is AVX2's column block width in accumulators when two
	// temporaries suffice (ymm0-11; ymm14-15 hold tail masks): wider
	// blocks read more of each strided row per visit (Figures: "AVX2
	// column blocks of 12 accumulators"). The native kernel's AVX2
	// column blocks take it too where their code fits the four
	// temporaries left (emitNative).
	avx2WideAcc int
	// narrowBytes is the widest 16-bit column block (bytes per row) that
	// takes bf16 pair loads and prefetch pfRows rows ahead; AVX2 blocks
	// prefetch only over rows at most pfMaxStride bytes apart (Figures:
	// "Narrow 16-bit column blocks: pair loads and prefetch").
	narrowBytes int64
	pfRows      int64
	pfMaxStride int64
	// pfRowsBusy is how many rows ahead f32 column blocks of kinds with
	// more than one instruction per vector prefetch, over rows at least
	// pfMaxStride apart ("Column blocks of max, min and the Lp norms
	// prefetched").
	pfRowsBusy int64
	// widePairs: bf16 column blocks of any width take pair loads (without
	// the prefetch), where widening bounds them ("Pair loads in wide bf16
	// blocks").
	widePairs bool
	// rowByRowVecs is how many vectors of a row one row-by-row loop
	// iteration adds (2, 8 and 12 ran the same; Figures: "Row by row
	// prefetched rowAhead ahead").
	rowByRowVecs int
	// rowByRowL1 caps a row-by-row stream of f32 rows' partials row and
	// prefetch distance to this much of L1, 0 for no cap ("Row by row
	// prefetched to fit L1").
	rowByRowL1 int64
	// rowByRowF32AVX512: AVX-512 takes f32 src row by row too, not only
	// 16-bit src ("Zen 4: f32 row by row"; Intel's column blocks read
	// 1 KiB of each row per visit and gain nothing).
	rowByRowF32AVX512 bool
	// rowByRowExp: log-sum-exp's unshifted sums of exp go row by row
	// ("Log-sum-exp row by row on Zen cores").
	rowByRowExp bool
}

// intelTuning is measured on an Intel Xeon (AVX-512) and its AVX2.
var intelTuning = tuning{
	groupMaxF32: 96, groupMax: 256,
	rowAccumulators: 8,
	pfAhead:         2048, groupPrefetchIters: 4,
	rowStreams: 2, minStreamedRow: 256 << 10,
	rowPrefetch: true, rowAhead: 16 << 10, minPrefetchedCall: 512 << 10,
	chainTarget: 8,
	avx2WideAcc: 12,
	narrowBytes: 256, pfRows: 16, pfMaxStride: 4096,
	pfRowsBusy:   4,
	rowByRowVecs: 4,
}

// zenTuning is intelTuning with what an AMD EPYC (Zen 4) measured
// otherwise.
var zenTuning = func() tuning {
	t := intelTuning
	t.pacedRows = true
	t.rowPrefetch = false
	t.widePairs = true
	t.rowByRowL1 = 24 << 10
	t.rowByRowF32AVX512 = true
	t.rowByRowExp = true
	return t
}()

// tuningOf is the table of family f.
func tuningOf(f kernelconf.Family) tuning {
	if f == kernelconf.Zen {
		return zenTuning
	}
	return intelTuning
}
