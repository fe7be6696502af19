// Package amd64 turns a canonical reduction plan (package internal/plan) into
// x86-64 machine code for AVX-512 or AVX2, with golang-asm as the
// assembler. It is pure Go and builds on every GOARCH; running the code is
// the job of package jit (executable memory, the call trampoline).
//
// There is one generator, with the vector width as a parameter (16 f32
// lanes in zmm registers with opmask tails, or 8 lanes in ymm registers
// with VMASKMOVPS or word-insert tails), in the manner of oneDNN's
// templated jit_uni_reduction_kernel. It picks one of three kernel
// shapes from the plan:
//
//   - row: the innermost reduced loop is contiguous ([Outer..., Reduced...]).
//     Several independent accumulators per output hide the add latency;
//     short rows are summed for up to one vector of outputs at once and
//     transposed into one vector, so that the horizontal sums and the
//     epilogue are vectorised across outputs; rows no wider than half
//     (a quarter) of a vector go two (four) to a register, in the lanes
//     the first transpose levels would have left them in, and those
//     levels are not emitted (packSkip); rows of 2 to 4 back to back are
//     gathered 16 at a time with VPERMT2PS (gather);
//   - column: the kept Inner loop is contiguous ([Outer..., Reduced...,
//     Inner]). Blocks of Inner are accumulated in registers over the
//     reduced rows (vertical adds); a short Inner whose rows are contiguous
//     is read as one flat stream and its lanes folded by index mod Inner,
//     and when a whole kept iteration is at most half a vector, several
//     iterations come from one load (flatSums, AVX-512). A stage-1 plan
//     hinted RowByRow is reduced a row at a time into its f32 dst row
//     instead, reading back-to-back rows as one prefetched stream
//     (rowbyrow.go);
//   - element: nothing is contiguous. One element at a time, several
//     accumulators; correct rather than fast.
//
// Plans over f64 and exact data (integers, booleans; plan.IsWide,
// plan.IsExact) take a generator of their own instead, the native kernel
// (kernelshape.Native over native.go's primitives): lanes of the src's
// own type, 8 to 64 bits, in the same column, row and element shapes,
// and on AVX2 a stage-1 chunk hinted RowByRow a row at a time through
// its dst row of partials (nativerowbyrow.go); f64 results take the
// post-ops kernelshape's f64 epilogue takes
// (nativepost.go: the binary ops, Abs, Clamp, ReLU, LeakyReLU, Square,
// Sqrt, Round, HardSigmoid, HardSwish, Pow, bit for bit as
// plan.EltwiseF64 and plan.BinaryF64; Exp and Log, package vf64's; and
// Sigmoid, Tanh, Elu, SoftPlus, Mish, GELUTanh and GELUErf, written once in
// package vf64 over the f64 lanes' instructions, postf64.go) in f64
// lanes, through kernelshape.Epilogue; f64 log-sum-exp in two passes
// with vf64's exp and log, half the accumulators' registers holding the
// shifts (nativelse.go); its f64 max and min with no
// post-ops speculate on NaN-free data as the f32 kernels do
// (nativespec.go). What AVX2 lacks of AVX-512 is put together:
// a 64-bit max and min from VPCMPGTQ and a blend, a 64-bit product from
// three VPMULUDQ of the lanes' 32-bit halves, the int64 to f64
// conversion of an integer mean's sums (VCVTQQ2PD) from the halves'
// bit patterns and one rounding add. The mean of 16- and 32-bit
// integers sums widened elements (VPMOVSX, VPMOVZX) in 64-bit lanes.
//
// What is reduced is read from the plan's plan.Reduction through a few
// hooks (reduce.go), in the manner of oneDNN's init_acc, compute_op and
// finalize: accumulators start at the identity (InitAcc), elements are
// loaded, transformed (|x|, x*x) and combined (add, mul, max, min) by
// accum, partial results are merged by combine in every tree, transpose,
// fold and gather, and every shape ends in the same epilogue: the
// finalize (the mean's true f32 division by Div, the Lp norms' eps and
// square root), the post-ops, and the conversion to the dst data type
// with round to nearest even. Covers declares what is emitted. The kernel
// ABI (argument block, registers) is the one in internal/plan/abi.go.
//
// What is the same logic as on arm64 is written once in package
// internal/kernelshape, and this package supplies its primitives: Emit's
// skeleton (kernelshape.Emit), the loop nest (Generate), the loops and
// group loops (kernelshape.Loop and CountGroups over EnterLoop/LeaveLoop/
// Repeat and the branches in gen.go; tested loops for paced sweeps are
// EnterLoop's), the row shape (kernelshape.Row over RowAccs, AddVectors,
// AddPartial, AddElement, HCombine, Transpose, row.go), the column shape
// (kernelshape.Column over ColumnBlock, FlatLanes, Fold, col.go), row by
// row (kernelshape.RowByRow, rowbyrow.go), the running totals' cut
// (kernelshape.SumRuns over RunsOf/PlaceTotals/FoldRun/AddTotals,
// runs.go, totals in registers when they fit) and the epilogue
// (kernelshape.Epilogue over Finalize, Eltwise, Binary, LoadOperand,
// StoreDst, epilogue.go; a single output fills every lane, SingleLanes,
// and NaN-free AVX2 code checks for -0 first, GuardFinalize). What only
// x86 has it supplies as the shapes' optional capabilities: gathers
// (RowGather), SAD rows (SingleRow), packed rows (PackedSweep), its own
// row sweep (RowSweep: two streams, paced loops, prefetch, 16-bit words
// two to a lane, bf16 pairs), a column block's words, pairs and
// prefetches (ColumnBlock). What stays here besides: several kept
// iterations from one load (flatOuter), NaN speculation (opmask and Y13
// flags, the exact fallback) and the register limits of 16 general
// registers (counters versus totals, see reserveTotals).

// Decisions worth knowing:
//
//   - Results are bit-identical to plan.Eltwise / plan.Binary and the
//     dtypes conversions, NaN payloads aside, except Exp's, Log's and
//     package vfn's post-ops (below): max and min are made exact (NaN propagates, +0 > -0) as
//     described below; ReLU and LeakyReLU test with ordered/unordered
//     compares so that NaN and -0 come out as the reference gives them.
//   - HardSigmoid, HardSwish and Pow run in f64 with the reference's
//     operations (f64.go), again for bit-identical results. Exp is a
//     vector exp in f32 (exp.go; the algorithm is package internal/vexp's,
//     the same on arm64): Cody-Waite reduction by ln2 in two FMAs, a
//     degree-6 polynomial, and 2^n applied in two halves so that
//     subnormal results round correctly and overflow gives +Inf; within
//     vexp.MaxULP (one) f32 ulp of plan.Eltwise, a NaN returned as it
//     came. Log is a vector log in f32 (log.go, package internal/vlog's
//     algorithm, the same on arm64): x split into 2^k * m with m in
//     [2/3, 4/3) (VGETMANTPS and VGETEXPPS on AVX-512, integer steps on
//     AVX2, subnormals included), a degree-9 polynomial in m - 1, and
//     k*ln2 added last; within vlog.MaxULP (one) f32 ulp of
//     plan.Eltwise, its specials exact (VFIXUPIMMPS on AVX-512), a NaN
//     returned as it came. Sigmoid, Tanh, Elu, SoftPlus, Mish and both
//     GELUs are package internal/vfn's straight-line programs (vfn.go),
//     lowered step by step on both widths with constants as memory
//     operands and registers by liveness, in at most four temporaries
//     (AVX2 has six); each within vfn.MaxULP of plan.Eltwise over the
//     dense sweeps (vfn.Sweep). TestProgramsExhaustive (run with
//     -vfn.all, not in CI) runs them, Exp and Log on all 2^32 f32
//     inputs on both widths, which give the same bits for every input:
//     Exp and Log keep their one ulp everywhere, and the programs their
//     vfn.MaxULP (docs/RELIABILITY.md).
//   - VCVTNEPS2BF16 flushes subnormals to zero, so with Options.BF16 the
//     (rare) lanes with a zero exponent are redone with the exact integer
//     rounding; the result never depends on the ISA. A normalization row
//     held in registers gathers the subnormal lanes of all its stores and
//     branches once, to store the row again with the exact rounding.
//   - Accumulators start at the identity: sums at +0, also the "sum" of
//     one element (a plan with no reduced loops), as in the interpreter.
//   - Max and min combine with plan.Binary's Maximum and Minimum: NaN
//     wins and +0 is above -0, so no result depends on the order of the
//     elements, the lanes or the thread count. On AVX-512 a max or min
//     kernel, on AVX2 a max kernel, is emitted twice (speculate.go):
//     NaN-free code, whose combine is VRANGEPS alone (it orders the
//     zeros but ignores a quiet NaN) or VMAXPS alone (it ignores both),
//     with unordered compares off the dependency chain gathering NaN
//     lanes into K0 or Y13 (AVX2 adds the outputs that are -0), then
//     the exact code, which the NaN-free code jumps to, to run the whole
//     call again, when the flag is not zero. The
//     exact code's max takes three instructions (an unordered compare,
//     VRANGEPS and an all-ones fix-up of the NaN lanes; rangeExact),
//     reading f32 src straight from memory; AVX2's max five (both
//     orders of VMAXPS, AND, an unordered compare, OR); min three on
//     both (both orders of VMINPS, OR). A partial load
//     combines only its lanes (a masked memory operand, a masked move or
//     a blend), so the lanes past a tail never enter a max, min or
//     product; sums add the zeros the load leaves there.
//   - A max or min of bf16 or f16 src, or of its magnitudes, is taken
//     as words (words.go):
//     sign and magnitude make the float max or min follow from the
//     words' unsigned minimum and maximum and signed maximum, kept in
//     three integer accumulators, exactly, NaN and -0 included, with no
//     widening until the row's or column block's end. AVX2 does not
//     speculate on such plans (but row by row): its NaN-free code has
//     too few registers for the words.
//   - Tricks that hold for plain sums only (packed rows, whose lanes
//     hold zeros; the masked last pair of a bf16 row, which reads zeros;
//     memory-operand adds; the two-level summation cut) are used for
//     plain sums only (plainSum, g.add, zeroIsIdentity). bf16 pair loads,
//     whose lanes mix neighbouring elements, serve every kind but
//     log-sum-exp's exp (bf16Pairs); row by row serves every kind, and
//     log-sum-exp's exp on Zen cores only (rowByRowKind).
//   - Long sums are summed in two levels (kernelshape.Runs, runs.go):
//     chains longer than the tolerance allows are cut into runs of about
//     sqrt(n) adds, each run's accumulators added into running totals
//     and cleared. The totals sit in spare temporaries, or in the
//     LongArgs block when there are too few, so that no shape gives up
//     accumulator registers for them.
//   - Nothing is read or written outside the tensors: tails use opmasks,
//     VMASKMOVPS, or exact-size word and byte moves (AVX2 has no 8- or
//     16-bit masked load), and the tests run every shape against guard
//     pages.
//   - s8 and u8 src are widened and converted to f32 lanes on loading
//     (exact); integer dst (s8, u8, s32) is rounded to nearest even by
//     VCVTPS2DQ and saturated, NaN giving 0, as dtypes.F32ToS8 and its
//     kin do (int8.go). Packed rows, which move 16- and 32-bit elements,
//     are not used for 8-bit src. Plain sums of one output's contiguous
//     8-bit rows are summed exactly in 64-bit integers by VPSADBW
//     (sadrow.go) and rounded to f32 once.
//   - No stack and no constant pool: constants are built in registers
//     (MOVL imm + VPBROADCASTD), tail masks are hoisted into the prologue.
//   - Pointer increments are folded into displacements and emitted
//     lazily (a loop's rewind merges with the next move), see gen.m.
//   - Software prefetch only where measured to pay: groups of rows
//     shorter than a line and column kernels whose kept iterations share
//     lines (many instructions per line leave the reorder window too few
//     loads in flight), narrow 16-bit column blocks read a few lines
//     per strided row, dense streams of masked loads (flat columns,
//     and column blocks of one masked vector over rows less than a line
//     apart), which the hardware prefetchers do not follow, and 16-bit
//     rows in calls of 512 KiB or more, which read from L3 and DRAM far
//     slower than f32 rows without it (TestChoose tables the
//     cases).
//
// Every such choice is made before a byte is emitted: Choose (conf.go)
// turns a plan, the runtime's hints and the target into a Conf, weighing
// the core family's figures (tuning.go), and the shapes lower the Conf.
package amd64

// Options selects the instruction set the code may use.
type Options struct {
	// AVX512 allows AVX-512 F, BW, DQ and VL (zmm registers, opmasks).
	// Without it the code uses AVX2, FMA and F16C only.
	AVX512 bool
	// BF16 says AVX512_BF16 is present: f32 -> bf16 conversion uses
	// VCVTNEPS2BF16 instead of an integer round-to-nearest-even sequence.
	// It is ignored without AVX512.
	BF16 bool
	// Zen tunes the code for AMD's Zen cores (Zen 3 and later), whose
	// memory pipeline differs from Intel's where it was first tuned: the
	// row sweeps of plans hinted FromMemory read at about one 64-byte line
	// per add's latency, since these cores stream DRAM fastest with few
	// loads in flight (Conf.Paced, conf.go), long f32 reductions over
	// wide rows are taken row by row on AVX-512 too (Covers), row sweeps
	// leave prefetching to the hardware (rowPrefetch), and AVX-512 bf16
	// column blocks of any width take pair loads (colBlock).
	Zen bool
}
