package plan

// The kernel ABI: how the runtime calls a compiled kernel, shared by the
// jit runtime and every code emitter.
//
// A kernel is called with a pointer to an Args block (amd64: in DI; arm64:
// in R0). It runs its Plan once, except that the outermost Outer loop runs
// Args.Count iterations instead of its Size (when the plan has no Outer
// loop, Count is 1 and ignored). Src, Dst and Bins point at the first
// element the call touches, so the runtime can hand consecutive blocks of
// the outermost loop to different threads. A kernel uses no stack, keeps
// the registers the trampoline's platform reserves, and returns with RET.
type Args struct {
	Src   uintptr
	Dst   uintptr
	Count int64
	Bins  [MaxBinary]uintptr
}

// MaxBinary is the most binary post-ops one plan may carry: enough for
// benchdnn's longest reduction chains (an Lp norm's eps, a sum post-op,
// a linear as a Multiply and an Add, and a binary add). The emitters
// keep every operand's pointer in a register.
const MaxBinary = 6

// Byte offsets of the Args fields, for the emitters.
const (
	ArgSrc   = 0
	ArgDst   = 8
	ArgCount = 16
	ArgBins  = 24 // + 8*i for binary post-op i
)

// LongArgs is the argument block of a kernel that keeps running totals:
// Args, then an area the kernel may use as f32 scratch (it need not be
// cleared; the kernel initialises what it reads).
type LongArgs struct {
	Args
	Totals [TotalsLen]float32
}

// TotalsLen is the size of LongArgs.Totals in f32 values: 16 zmm
// registers' worth, one running total per accumulator register.
const TotalsLen = 256

// ArgTotals is the byte offset of LongArgs.Totals.
const ArgTotals = ArgBins + 8*MaxBinary

// IndexArgs is the argument block of an index reduction kernel whose
// column goes row by row (kernelshape.ArgRowByRow): Args, then scratch
// for the best values and indices of a block of up to
// IndexScratchOutputs outputs, which the kernel aligns to 64 bytes (it
// need not be cleared; the kernel initialises what it reads).
type IndexArgs struct {
	Args
	Scratch [2*IndexScratchOutputs + 16]uint32
}

// IndexScratchOutputs is how many outputs an IndexArgs scratch holds: the
// values (f32) first, then as many indices (s32). A block of that many f32
// outputs is a 4 KiB page of each row: a group of rows' runs and the 8 KiB
// scratch, swept together, then fit in L1 (a wider block's sweep evicts
// the scratch before it comes round again). It holds half as many
// outputs of 64-bit values, whose indices take 64 bits too (each held
// twice): a block of them is 4 KiB of each row as well.
const IndexScratchOutputs = 1024

// ArgIndexScratch is the byte offset of IndexArgs.Scratch.
const ArgIndexScratch = ArgBins + 8*MaxBinary

// Code is what an emitter returns: machine code, whether it must be
// called with a LongArgs block, and whether (a fused normalization's) it
// reads the scratch of NormArgs.Stage.
type Code struct {
	Text   []byte
	Totals bool
	Staged bool
}

// NormArgs is the argument block of a fused normalization kernel: Args,
// then the values the kernel reads at run time rather than from its code.
type NormArgs struct {
	Args
	// Eps is the epsilon of a kernel built to read it here (a graph's
	// epsilon tensor, which may change between runs), as f32.
	Eps float32
	_   uint32
	// Stage is the address of NormStageBytes of scratch, aligned to 64
	// bytes, that a kernel over a dim that is not innermost keeps a
	// tile's rows in (kernelshape.NormColumns), and a softmax kernel
	// over rows its exps (kernelshape.NormRows); it need not be cleared.
	Stage uintptr
}

// ArgEps is the byte offset of NormArgs.Eps.
const ArgEps = ArgBins + 8*MaxBinary

// ArgStage is the byte offset of NormArgs.Stage.
const ArgStage = ArgEps + 8

// NormStageBytes is the size of NormArgs.Stage's scratch: half an L1
// data cache, so that a tile's rows there stay beside the lines of src
// and dst passing through.
const NormStageBytes = 16 << 10
