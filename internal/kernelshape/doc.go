// Package kernelshape is the part of a reduction kernel generator that
// does not depend on the instruction set: which plans an emitter takes,
// the loop nest around the kernel body and which shape (row or column)
// runs inside it, how far each loop moves each pointer, which pointer
// moves are still pending, and where the lanes of a result vector go.
//
// It also holds the parts of a kernel that are the same logic on every
// instruction set, written once against small interfaces the emitters
// (packages amd64 and arm64) implement with their instructions:
//
//   - Emit (emit.go): check the plan against Covers, build, assemble;
//     an emitter's kernel is a Built.
//   - Generate (nest.go): prologue, the kept loops, the row or column
//     shape, return, over an Emitter.
//   - Loop and CountLoop (loop.go), over Counters: counter registers,
//     pointer steps and rewinds, labels and the count-down branch.
//     amd64's tested loops and arm64's step registers live behind
//     EnterLoop and LeaveLoop. GroupLoop and CountGroups (groups.go)
//     run a kept loop in groups, the last group stepped back.
//   - Row (row.go), over a RowEmitter: groups of short rows, their
//     accumulators, the vector, element and nothing-reduced sweeps, the
//     horizontal combine or transpose, the epilogue. Column (column.go),
//     over a ColumnEmitter: blocks of Inner and flat streams of narrow
//     Inner. RowByRow (rowbyrow.go): a column plan a row at a time
//     through dst.
//   - NormRows (norm.go), over a NormEmitter: a fused normalization,
//     each row's statistics in registers and then its map (softmax,
//     log-softmax, layer norm, RMS norm, L2 normalization).
//   - Native (native.go), over a NativeEmitter: f64 and exact data
//     (integers, booleans) in lanes of their own type, in a column, row
//     or element shape, as the index reduction's Arg (arg.go) over an
//     ArgEmitter, or a column plan a row at a time through dst where the
//     emitter is a NativeRowByRower (nativerowbyrow.go); f64 max and
//     min NaN-free first, then exact, where the emitter is a
//     NativeSpeculator; f64 post-ops through Epilogue over
//     an f64 Finisher (nativepost.go); f64 log-sum-exp in two passes,
//     a max and a sum of exp(x - shift), over a NativeLSE (nativelse.go).
//   - SumRuns (runs.go), over Totals: long sums cut into runs folded
//     into running totals, wherever each emitter keeps them.
//   - Epilogue (epilogue.go), over a Finisher: finalize, post-ops with
//     their binary operands loaded as a LaneMap says, store; lane by
//     lane where the lanes are not contiguous. FinalizeGuard is the
//     optional check amd64's speculative code needs.
//
// The interfaces are small sets of primitives (init, add vectors, add a
// partial vector, combine, horizontal combine, transpose, fold, load
// and store, eltwise and binary lowering, loops), as XNNPACK's templates
// are written over per-ISA primitives. What only one instruction set has
// is an optional interface the shapes look for: amd64's gathers
// (RowGatherer), byte sums by SAD (RowSingle), packed rows (RowPacker),
// its own row sweep with streams, words and pairs (RowSweeper) and its
// prefetches; a column block's words and pairs are amd64's ColumnBlock.
// amd64's flatOuter (several kept iterations from one AVX-512 load) and
// the NaN-free check of row-by-row partials stay in amd64: no other
// instruction set has their instructions.
//
// So a new post-op with a package vfn program touches no emitter, and
// one with instructions of its own each emitter's Eltwise; a new combine
// touches the emitters' accumulate and combine primitives, not the
// shapes; and a new loop shape built from these primitives is written
// here once (a primitive it needs that they lack is one method on each
// emitter). Nothing here emits an instruction itself (a Label is the
// assembler's, handed back untouched): everything is plain arithmetic
// over an internal/plan.Plan and calls through the interfaces. Two
// emitters given the same plan therefore walk the same loops in the same
// order, which is what lets their tests share one reference.
package kernelshape
