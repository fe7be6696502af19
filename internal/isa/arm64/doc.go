// Package arm64 turns a canonical reduction plan (package internal/plan) into
// AArch64 Advanced SIMD (NEON) machine code, with golang-asm's arm64
// backend as the assembler. It is pure Go and builds on every GOARCH, so
// the code can be generated and disassembled anywhere; running it is the
// job of package jit (executable memory, icache flush, the call
// trampoline).
//
// A vector is four f32 lanes in a 128-bit register. f16 and bf16 data
// live in memory only: four 16-bit values are loaded into a 64-bit
// register and widened exactly (FCVTL for f16, SHLL #16 for bf16); all
// arithmetic is f32. 8-bit integers (s8, u8) likewise: four bytes are
// loaded into an S register (sixteen into a Q register in runs),
// sign- or zero-extended twice (SXTL/UXTL) and converted (SCVTF/UCVTF),
// exactly; integer dst types (s8, u8, s32) are stored from f32, see
// below. The generator picks one of three kernel shapes from
// the plan, the same three as package amd64:
//
//   - row: the innermost reduced loop is contiguous ([Outer...,
//     Reduced...]). Up to eight independent accumulators per output, fed
//     four vectors per LD1 with post-increment; rows of at most 256
//     elements are summed four outputs at a time and turned into one
//     vector of four sums by three FADDPs, so the epilogue runs once per
//     four outputs;
//   - column: the kept Inner loop is contiguous ([Outer..., Reduced...,
//     Inner]). Blocks of up to 16 vectors of Inner are accumulated in
//     registers over the reduced rows (vertical adds, rows unrolled when
//     the block is narrow); an Inner of one or two elements whose rows
//     are contiguous is read as one flat stream and its lanes folded;
//   - element: nothing is contiguous. One element at a time into lane 0,
//     several accumulators; correct rather than fast.
//
// Every shape ends in the same epilogue: the finalize (for the mean a
// true f32 division by Div, FDIV), the post-ops, and the conversion to
// the dst data type with round to nearest even. The kernel ABI (argument
// block in R0, registers) is the one in internal/plan/abi.go.
//
// What is the same logic as on amd64 is written once in package
// internal/kernelshape, and this package supplies its primitives: Emit's
// skeleton (kernelshape.Emit), the loop nest (Generate), the loops and
// group loops (kernelshape.Loop and CountGroups over EnterLoop/LeaveLoop/
// Repeat and the branches of loop.go), the row shape (kernelshape.Row
// over RowAccs, AddVectors, AddPartial, AddElement, HCombine, Transpose,
// row.go), the column shape (kernelshape.Column over ColumnBlock,
// FlatLanes, Fold, col.go), the running totals' cut (kernelshape.SumRuns
// over RunsOf/PlaceTotals/FoldRun/AddTotals, runs.go) and the epilogue
// (kernelshape.Epilogue over Finalize, Eltwise, Binary, LoadOperand,
// StoreDst, epilogue.go). A single output sits in lane 0 alone, so its
// binary operand is one element (SingleLanes). What stays here is what
// NEON does its own way: the primitives themselves (LD1 runs with
// post-increment, pairwise 8-bit sums, FADDP transposes), the step
// registers of loops whose pointer steps need two ADDs, and the
// addressing through R17.
//
// Plans of f64 and exact data (integers, booleans, the bitwise and
// logical reductions) take the native kernel instead (kernelshape.Native
// over NativeInit, NativeLoad, NativeCombine, NativeStoreColumn,
// NativeStoreFirst, native.go): lanes of the data's own type, 2 of f64
// or 64-bit integers, 4, 8 or 16 of the narrower ones, so that integer
// sums and products wrap as the interpreter's and f64 never passes
// through f32. NEON has no 64-bit lane multiply (an s64 or u64 product
// is put together from 32-bit multiplies of the halves: MUL, UADDLP,
// UMLAL) and no 64-bit max or min (a compare, CMGT or CMHI, and BIT).
// The mean of 16- and 32-bit integers sums widened elements (SXTL,
// UXTL) in 64-bit lanes and stores SCVTF's f64 of the sum over Div, or
// FCVTZS or FCVTZU of it narrowed (SQXTN, UQXTN) into the src's type.
// f64 results take the post-ops kernelshape's f64 epilogue takes
// (nativepost.go, as amd64's) in 2D lanes, through kernelshape.Epilogue;
// f64 log-sum-exp in two passes, as amd64's (nativelse.go).

// The shapes are written for any plan.Reduction (kind.go): accumulators
// start at the combine's identity, each loaded vector is transformed
// (FABS, FMUL x,x) and combined (FADD, FMUL, FMAX, FMIN), and every
// merge of partial results (trees across accumulators, horizontal and
// pairwise combines, the four-output transpose, the flat column's fold)
// goes through the same combine. Covered: every combine, the transforms
// none, |x| and x*x, and every finalize with root none or square root
// (P 1 or 2); |x|^p and other roots are Unimplemented (the interpreter
// runs them).
//
// Decisions worth knowing:
//
//   - Results are bit-identical to plan.Eltwise / plan.Binary and the
//     dtypes conversions, NaN payloads aside, except Exp's and Log's: a
//     vector exp in f32 (exp.go, package internal/vexp's algorithm, amd64's
//     steps) within vexp.MaxULP (one) f32 ulp of plan.Eltwise, subnormal
//     results rounded correctly, overflow +Inf, a NaN returned as it
//     came; a vector log (log.go, package internal/vlog's algorithm, amd64's
//     AVX2 steps) within vlog.MaxULP (one) f32 ulp, subnormal inputs
//     included, its specials exact; Sigmoid, Tanh, Elu, SoftPlus, Mish
//     and both GELUs as package internal/vfn's straight-line programs
//     (vfn.go), each step one or a few 4S instructions rounded as
//     vfn.Model rounds it (FMA is one FMLA), within vfn.MaxULP of
//     plan.Eltwise, a NaN returned as it came. FMAX/FMIN already
//     give NaN for a NaN on either side and order -0 below +0, as
//     plan.Binary does; Clamp compares and selects instead (FMAX would
//     turn a -0 that the reference keeps into +0); ReLU and LeakyReLU
//     use ordered compares against zero so that NaN and -0 come out as
//     the reference gives them.
//   - A vfn program's values get temporaries by liveness, and the exp's
//     and log's scratch comes from the same pool; work that does not
//     depend on an exp or a log may be moved before it where that needs
//     fewer registers (vfn.go's schedule). Every program fits in every
//     kernel shape (TestVFNRegisters): the runtime decides by kind, not
//     by plan, whether post-ops need a pass of their own.
//   - HardSigmoid, HardSwish and Pow run in f64 with the reference's
//     operations in its order (f64.go): the four lanes widened to two
//     registers of 2D (FCVTL, FCVTL2), FMUL/FADD/FDIV/FSQRT there, the clamps
//     and HardSwish's ends as compares and selects (not FMAX/FMIN, for
//     -0, as in Clamp), and one narrowing (FCVTN, FCVTN2) that rounds
//     as float32(...) does, so the results are bit-identical too.
//   - f32 -> f16 is FCVTN, which rounds as FPCR says: Go runs with round
//     to nearest even, no flush to zero, no default NaN. f32 -> bf16 is
//     an exact integer sequence (x + 0x7fff + lsb, NaN made quiet) and
//     UZP2 to gather the high halves; it needs no optional feature.
//   - Sums start at +0, also the "sum" of one element (a plan with no
//     reduced loops), as in the interpreter.
//   - FMAX, FMIN and their pairwise forms FMAXP, FMINP (not the NM forms)
//     give NaN when either side is NaN and order -0 below +0, exactly
//     plan.CombineF64's max and min. NEON has no pairwise multiply:
//     UZP1/UZP2 separate the even and odd lanes for an FMUL instead.
//   - A partial vector (a row's tail) is loaded with +0 above its
//     elements; for any combine but add, those lanes are set to the
//     identity before the combine wherever lanes are later mixed (rows,
//     the flat column). A column never mixes lanes and its unused lanes
//     are never stored, so its tails are left as loaded.
//   - Long sums are summed in two levels, as on amd64
//     (kernelshape.Runs, runs.go): runs of about sqrt(n) adds, each
//     added into a running total in the LongArgs block, at R0. Only
//     sums: products, max and min are not cut.
//   - Nothing is read or written outside the tensors: tails load and
//     store exactly the bytes of their elements (LDR/STR of an S, D, H
//     or B register and a lane insert or extract for the third element), and
//     the tests run every shape against guard pages.
//   - No stack and no literal pool (the assembler would put large
//     constants and offsets in one; assemble rejects it): constants are
//     built with MOVZ/MOVN/MOVK and DUP, hoisted into the prologue
//     (v26..v31); an offset the load or store cannot encode is added into
//     R17 once and later accesses near it reuse it (rows that are not
//     16-byte aligned, far rows); a loop's pointer step that needs two
//     ADDs is put in a register before the loop.
//   - Pointer increments are folded into offsets and emitted lazily (a
//     loop's rewind merges with the next move), see gen.ptrs; a
//     post-increment LD1 is recorded there too, so streaming loops need
//     no separate pointer update.
//   - Instructions the Go 1.15 assembler does not spell (the float
//     vector arithmetic in 4S and 2D, FCVTL/FCVTN/SHLL and the f32 <->
//     f64 forms of FCVTL/FCVTN, the integer widenings,
//     conversions and saturating narrowings, FADDP, LDR/STR of Q, H and B
//     registers, LDP Q, and MOVZ/MOVN/MOVK of a chunk at bit 48 with its
//     top bit set, which it rejects) are raw words built in enc.go and
//     checked against binutils' disassembler.
//   - f32 -> s32 is FCVTNS: round to nearest even, saturate, NaN to 0,
//     which is gdnn's rule for integer dst (dtypes.F32ToS32). s8 and u8
//     narrow that with two saturating steps (SQXTN, SQXTN for s8;
//     SQXTUN, UQXTN for u8), the same as clamping once. Sums of 8-bit
//     data are f32 sums of exact integers: exact while a partial sum
//     stays below 2^24 (65793 u8 values, 131072 s8 values at the
//     extremes), rounded as f32 sums are beyond. Where an output's lanes
//     are all combined anyway (rows, a one-wide flat column), plain sums
//     add 16 bytes pairwise twice in integers (SADDLP/UADDLP: four exact
//     sums of four) before one conversion and one FADD: 11 instructions
//     per 32 bytes in a long row's loop against 31 widening every byte
//     (f32 data: 12 per 32 elements). Columns keep one lane per output
//     and widen every byte.
//   - Only base ASIMD is used, so every arm64 Linux system runs the code;
//     optional features (FHM's FMLAL for f16 sums, BF16) are not needed
//     for exact results.
package arm64
