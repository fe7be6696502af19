package reduce

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/normprog"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/preop"
	"github.com/gdnn/gdnn/internal/status"
)

// LpNormalize writes x / max(||x||_p, eps) over axis to dst, the norm
// taken along axis (p 1: the sum of |x|; p 2: the square root of the sum
// of x²), as PyTorch's torch.nn.functional.normalize does (its default
// eps is 1e-12). eps 0 divides by the norm itself, as ONNX's
// LpNormalization does, so that a row of 0s gives NaN (0/0); with eps >
// 0 it gives 0s. A row holding an infinity gives NaN for it (Inf/Inf)
// and ±0 elsewhere, a NaN a row of NaN. dims are src's, which dst has
// too; axis may be negative; eps must be finite and non-negative; p must
// be 1 or 2. Options: Type, SrcType, DstType, SrcStrides and DstStrides,
// as Softmax's; dst may be src itself, as Softmax's. It runs as machine
// code (the interpreter where there is none), threads over chunks of
// rows: one fused kernel where the axis is the innermost or a kept dim
// inside it is contiguous (the channels of NCHW), else two passes of the
// reductions' machine code, the norm of each row, then x divided by it.
func LpNormalize[D, S Float](dst []D, src []S, dims []int, axis, p int, eps float32, opts ...Option) error {
	return lpNormalize("LpNormalize", dst, src, dims, axis, p, eps, opts)
}

// lpNormalize is LpNormalize, its errors named after fn (an ONNX node's
// call has its own name).
func lpNormalize[D, S Float](fn string, dst []D, src []S, dims []int, axis, p int, eps float32, opts []Option) error {
	var kind normprog.Kind
	switch p {
	case 1:
		kind = normprog.L1Norm
	case 2:
		kind = normprog.L2Norm
	default:
		return status.Errorf(status.InvalidArguments, "reduce.%s: p is %d; want 1 or 2", fn, p)
	}
	if msg := norm.EpsilonProblem(eps); msg != "" {
		return status.Errorf(status.InvalidArguments, "reduce.%s: %s", fn, msg)
	}
	var a callInts
	io, err := resolveIO[D, S](&a, fn, dims, opts)
	if err != nil {
		return err
	}
	ax, err := axisIn(fn, int64(axis), len(dims))
	if err != nil {
		return err
	}
	srcSpan, dstSpan := sliceSpan(io.dims, io.srcStrides), sliceSpan(io.dims, io.dstStrides)
	if err := shortSlices(fn, len(src), len(dst), srcSpan, dstSpan, io.dims, io.dims); err != nil {
		return err
	}
	srcB, dstB := bytesOf(src), bytesOf(dst)
	srcV, dstV := spanView(srcB, srcSpan, io.srcDT.Size()), spanView(dstB, dstSpan, io.dstDT.Size())
	if jit.Overlap(srcV, dstV) && !jit.SameTensor(dstB, srcB, io.dstDT, io.srcDT, io.dims, io.dstStrides, io.srcStrides) {
		return status.Errorf(status.InvalidArguments, "reduce.%s: dst overlaps src in memory "+
			"(in place, dst must be src itself: the same first element, type and strides)", fn)
	}
	var normed [norm.MaxRank]bool
	d := &normprog.Desc{Kind: kind, SrcDT: io.srcDT, DstDT: io.dstDT, Dims: io.dims, SrcStrides: io.srcStrides,
		DstStrides: io.dstStrides, Norm: normed[:len(dims)], Epsilon: eps}
	d.Norm[ax] = true
	if elements(io.dims) == 0 {
		// Nothing to write; the slices must still be what the dims say.
		return nil
	}
	prog, err := lpPrograms.get(d)
	if err != nil {
		return inNormCall(fn, err)
	}
	return inNormCall(fn, prog.Run(normprog.Buffers{Src: srcB, Dst: dstB}))
}

// MaskedMean writes the mean over axis of the elements of src that mask
// keeps, sum(x·mask) / sum(mask), to dst: masked mean pooling of token
// embeddings, which divides by the tokens a row has, not by its padded
// length. mask holds one value per element of src's dims up to and
// including axis, dense (for src [batch, seq, hidden] and axis 1, a
// [batch, seq] attention mask), and is broadcast over the dims after
// axis; its values are 1 (keep) and 0 (padding), or non-negative weights,
// which make it the weighted mean (a negative or NaN value is refused). dst has src's dims without axis. A
// row whose mask is all 0 (no token) gives 0s: the count is taken as at
// least the smallest normal f32 (as sentence-transformers clamps it to
// 1e-9), and its sum is 0. x·mask is an IEEE product, so an infinity or
// NaN under a 0 of the mask still gives NaN, as the framework code it
// replaces does. Options: Type, SrcType, DstType (src and dst: Float),
// SrcStrides and DstStrides (dst's over its own dims).
//
// It runs as a kernel of the reductions' machine code (the interpreter
// where there is none) that counts each row's mask, then the fused
// Multiply -> ReduceSum program of internal/preop (the one a partition
// of x·mask before its reduction runs): per chunk of the kept dims, the
// product x·mask into an f32 scratch that stays in cache and its sum
// divided by the count, so that x is read from memory once.
func MaskedMean[D, S Float, M ~float32 | ~uint8](dst []D, src []S, mask []M, dims []int, axis int, opts ...Option) error {
	const fn = "MaskedMean"
	var a callInts
	io, err := resolveIO[D, S](&a, fn, dims, opts, axis)
	if err != nil {
		return err
	}
	ax, err := axisIn(fn, int64(axis), len(dims))
	if err != nil {
		return err
	}
	var mz M
	maskDT := dtypes.F32
	if unsafe.Sizeof(mz) == 1 {
		maskDT = dtypes.U8
	}
	mdims := io.dims[:ax+1]
	if n := elements(mdims); int64(len(mask)) != n {
		return status.Errorf(status.InvalidShape, "reduce.%s: mask holds %d values; src dims %s and axis %d want %d (dims %s)",
			fn, len(mask), ints(dims), axis, n, int64s(mdims))
	}
	if maskDT == dtypes.F32 { // a u8 mask holds weights only
		if i, ok := badWeight(mask); !ok {
			return status.Errorf(status.InvalidArguments, "reduce.%s: mask value %d is %v; a mask holds 1 (keep) and 0 (padding), or non-negative weights",
				fn, i, float32(mask[i]))
		}
	}
	// The spans first: nothing is allocated or written for slices too
	// short (the counts' scratch is as large as dst's rows).
	ddims := append(append(a.make(len(io.dims))[:0], io.dims[:ax]...), io.dims[ax+1:]...)
	srcSpan, dstSpan := sliceSpan(io.dims, io.srcStrides), sliceSpan(ddims, io.dstStrides)
	if err := shortSlices(fn, len(src), len(dst), srcSpan, dstSpan, io.dims, ddims); err != nil {
		return err
	}
	srcB, dstB, maskB := bytesOf(src), bytesOf(dst), maskBytes(mask)
	dstV := spanView(dstB, dstSpan, io.dstDT.Size())
	for _, b := range [][]byte{spanView(srcB, srcSpan, io.srcDT.Size()), maskB} {
		if jit.Overlap(dstV, b) {
			return status.Errorf(status.InvalidArguments, "reduce.%s: dst overlaps src or mask in memory", fn)
		}
	}
	r := len(io.dims)
	// Strides over src's dims: the mask's (dense over its dims, 0 after
	// axis) and the count's (dense over the dims before axis).
	mstr := a.dense(mdims, r-ax-1)
	cstr := a.dense(io.dims[:ax], r-ax)
	var reduce [norm.MaxRank]bool
	reduce[ax] = true
	// dst's strides given over its own dims go over src's, 0 at axis.
	dstr := append(append(append(a.make(r)[:0], io.dstStrides[:ax]...), 0), io.dstStrides[ax:]...)
	clamp := [1]plan.PostOp{{Kind: ops.Clamp, Alpha: smallestNormal, Beta: float32(math.Inf(1))}}
	divide := [1]plan.PostOp{{Kind: ops.Divide, BinDT: dtypes.F32, BinStrides: cstr}}
	count := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: maskDT, DstDT: dtypes.F32, Dims: mdims,
		SrcStrides: a.dense(mdims, 0), Reduce: reduce[:ax+1], DstStrides: a.dense(io.dims[:ax], 1), PostOps: clamp[:]}
	mean := &preop.Desc{OpDT: maskDT, OpStrides: mstr, Problem: plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0),
		SrcDT: io.srcDT, DstDT: io.dstDT, Dims: io.dims, SrcStrides: io.srcStrides, Reduce: reduce[:r], DstStrides: dstr,
		PostOps: divide[:]}}
	mp, err := maskedPrograms.get(count, mean)
	if err != nil {
		return inNormCall(fn, err)
	}
	if elements(io.dims[:ax]) == 0 || elements(io.dims[ax+1:]) == 0 {
		return nil // no element read, none written
	}
	sp, _ := maskedScratch.Get().(*[]byte)
	if sp == nil {
		sp = new([]byte)
	}
	defer maskedScratch.Put(sp)
	nc := 4 * max(elements(io.dims[:ax]), 1)
	if int64(cap(*sp)) < nc {
		*sp = make([]byte, nc)
	}
	cnt := (*sp)[:nc:nc]
	if err := mp.count.Run(maskB, cnt, nil); err != nil {
		return inNormCall(fn, err)
	}
	return inNormCall(fn, mp.mean.Run(srcB, dstB, maskB, [][]byte{cnt}))
}

// shortSlices refuses a src or dst slice of fewer values than the span
// its dims and strides address.
func shortSlices(fn string, nsrc, ndst int, srcSpan, dstSpan int64, srcDims, dstDims []int64) error {
	if int64(nsrc) < srcSpan {
		return status.Errorf(status.InvalidArguments, "reduce.%s: src holds %d values; its dims %s and strides address %d", fn, nsrc, int64s(srcDims), srcSpan)
	}
	if int64(ndst) < dstSpan {
		return status.Errorf(status.InvalidArguments, "reduce.%s: dst holds %d values; its dims %s and strides address %d", fn, ndst, int64s(dstDims), dstSpan)
	}
	return nil
}

// badWeight returns the index of the first value of mask that is not a
// weight (negative, or NaN) and false, or true where every value is one:
// a negative weight can make a row's count 0 or negative, which the
// count's clamp would turn into a divisor near 1e-38.
func badWeight[M ~float32 | ~uint8](mask []M) (int, bool) {
	for i, v := range mask {
		if !(float32(v) >= 0) {
			return i, false
		}
	}
	return 0, true
}

// maskedScratch keeps MaskedMean's scratch (the counts) between calls.
var maskedScratch sync.Pool

// maskedProgram is MaskedMean's compiled work: the count per row, then
// the sum of x·mask divided by it.
type maskedProgram struct {
	count *jit.Kernel
	mean  *preop.Program
}

// maskedPrograms keeps MaskedMean's compiled programs by their
// descriptions and the instruction set, so that a call with a shape seen
// before compiles nothing; a full cache is emptied, as lpPrograms is.
var maskedPrograms = maskedCache{byKey: map[string]*maskedProgram{}}

type maskedCache struct {
	sync.Mutex
	byKey map[string]*maskedProgram
}

// get returns the program of count and mean, compiling it on a miss.
// The key is spelled on the stack and looked up without a string of
// its own, so that a hit allocates nothing.
func (c *maskedCache) get(count *plan.Problem, mean *preop.Desc) (*maskedProgram, error) {
	var kb [512]byte
	isa, stamp := jit.ISAStamp()
	b := binary.AppendVarint(kb[:0], int64(isa))
	b = appendProblemKey(b, count)
	b = appendProblemKey(b, &mean.Problem)
	b = binary.AppendVarint(b, int64(mean.OpDT))
	b = appendInts(b, mean.OpStrides)
	c.Lock()
	mp, ok := c.byKey[string(b)]
	c.Unlock()
	if ok {
		return mp, nil
	}
	// count and mean may live in the caller's scratch: what is compiled
	// is kept, so it is compiled from copies.
	pl, err := plan.Canonicalize(count.Clone())
	if err != nil {
		return nil, err
	}
	mp = &maskedProgram{}
	if mp.count, err = jit.Compile(pl); err != nil {
		return nil, err
	}
	m := preop.Desc{OpDT: mean.OpDT, OpStrides: slices.Clone(mean.OpStrides), Problem: *mean.Problem.Clone()}
	if mp.mean, err = preop.Compile(&m); err != nil {
		return nil, err
	}
	if jit.CapStamp() != stamp {
		return mp, nil // compiled under another cap than the key's: not kept (jit.ISAStamp)
	}
	c.Lock()
	defer c.Unlock()
	if len(c.byKey) >= 256 {
		clear(c.byKey)
	}
	c.byKey[string(b)] = mp
	return mp, nil
}

// appendProblemKey appends to b the spelling of every field of pr a
// compiled kernel depends on.
func appendProblemKey(b []byte, pr *plan.Problem) []byte {
	put := func(v int64) { b = binary.AppendVarint(b, v) }
	r := pr.Reduction
	put(int64(r.Transform))
	put(int64(r.Combine))
	put(int64(r.Finalize))
	put(int64(math.Float32bits(r.P)))
	put(int64(math.Float32bits(r.Eps)))
	put(int64(pr.SrcDT))
	put(int64(pr.DstDT))
	b = appendInts(b, pr.Dims)
	b = appendInts(b, pr.SrcStrides)
	b = appendInts(b, pr.DstStrides)
	put(int64(len(pr.Reduce)))
	for _, on := range pr.Reduce {
		if on {
			put(1)
		} else {
			put(0)
		}
	}
	put(int64(len(pr.PostOps)))
	for _, op := range pr.PostOps {
		put(int64(op.Kind))
		put(int64(math.Float32bits(op.Alpha)))
		put(int64(math.Float32bits(op.Beta)))
		put(int64(op.BinDT))
		b = appendInts(b, op.BinStrides)
	}
	return b
}

// appendInts appends s, its length first, to b.
func appendInts(b []byte, s []int64) []byte {
	b = binary.AppendVarint(b, int64(len(s)))
	for _, v := range s {
		b = binary.AppendVarint(b, v)
	}
	return b
}

// axisIn is axis of a tensor of rank dims counted from the front, or
// fn's error for an axis out of range.
func axisIn(fn string, axis int64, rank int) (int, error) {
	ax, ok := norm.AxisIn(axis, rank)
	if !ok {
		return 0, status.Errorf(status.InvalidArguments, "reduce.%s: axis %d is out of range [%d, %d] for src of rank %d",
			fn, axis, -rank, rank-1, rank)
	}
	return ax, nil
}

// smallestNormal is the least normal f32, the least count MaskedMean
// divides by.
const smallestNormal = 0x1p-126

// maskBytes is mask's memory.
func maskBytes[M ~float32 | ~uint8](s []M) []byte {
	if len(s) == 0 {
		return nil
	}
	var z M
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// ioSettings are the resolved data types, dims and layouts of a call
// with a Float src and dst and no parameters.
type ioSettings struct {
	srcDT, dstDT           dtypes.DataType
	dims                   []int64
	srcStrides, dstStrides []int64
}

// resolveIO resolves opts (Type, SrcType, DstType, SrcStrides,
// DstStrides; anything else is refused) for fn over src dims, the
// slices from a. dst has
// src's dims, or those without dropped when one is given.
func resolveIO[D, S Float](a *callInts, fn string, dims []int, opts []Option, dropped ...int) (ioSettings, error) {
	var io ioSettings
	var s normSettings
	if err := s.apply(fn, 0, opts); err != nil {
		return io, err
	}
	if s.paramDT != dtypes.Undef {
		return io, status.Errorf(status.InvalidArguments, "reduce.%s: ParamType names gamma and beta; %s has none", fn, fn)
	}
	srcNamed, dstNamed := s.srcDT, s.dstDT
	if s.srcByType && !is16[S]() {
		srcNamed = dtypes.Undef
	}
	if s.dstByType && !is16[D]() {
		dstNamed = dtypes.Undef
	}
	var err error
	if io.srcDT, err = normType[S](fn, "src", "SrcType", srcNamed); err != nil {
		return io, err
	}
	if io.dstDT, err = normType[D](fn, "dst", "DstType", dstNamed); err != nil {
		return io, err
	}
	if len(dims) > norm.MaxRank {
		return io, status.Errorf(status.InvalidShape, "reduce.%s: %d dims, more than %d", fn, len(dims), norm.MaxRank)
	}
	io.dims = a.make(len(dims))
	if _, err := checkDims(fn, dims, io.dims); err != nil {
		return io, err
	}
	ddims := io.dims
	if len(dropped) > 0 {
		if ax, ok := norm.AxisIn(int64(dropped[0]), len(dims)); ok {
			ddims = append(append(a.make(len(dims))[:0], io.dims[:ax]...), io.dims[ax+1:]...)
		}
	}
	if io.srcStrides, err = stridesOf(a, fn, "src", s.srcStrides, s.hasSrcStr, io.dims); err != nil {
		return io, err
	}
	io.dstStrides, err = stridesOf(a, fn, "dst", s.dstStrides, s.hasDstStr, ddims)
	return io, err
}

// lpPrograms keeps LpNormalize's compiled programs by description and
// instruction set, so that a call with a problem seen before compiles
// nothing; bounded as the normalizations' cache is.
var lpPrograms = progCache{byKey: map[string]*normprog.Program{}}

type progCache struct {
	sync.Mutex
	byKey map[string]*normprog.Program
}

// get returns d's program, compiling it on a miss; refusals are not
// kept. A full cache is emptied, not trimmed: a framework cycles through
// a few shapes. d is LpNormalize's: no field but those spelled in the
// key is set. The key is spelled on the stack and looked up without a
// string of its own, so that a hit allocates nothing.
func (c *progCache) get(d *normprog.Desc) (*normprog.Program, error) {
	var kb [256]byte
	b := kb[:0]
	put := func(v int64) { b = binary.AppendVarint(b, v) }
	isa, stamp := jit.ISAStamp()
	put(int64(isa))
	put(int64(d.Kind))
	put(int64(d.SrcDT))
	put(int64(d.DstDT))
	put(int64(math.Float32bits(d.Epsilon)))
	for i := range d.Dims {
		put(d.Dims[i])
		put(d.SrcStrides[i])
		put(d.DstStrides[i])
		if d.Norm[i] {
			put(1)
		} else {
			put(0)
		}
	}
	c.Lock()
	p, ok := c.byKey[string(b)]
	c.Unlock()
	if ok {
		return p, nil
	}
	// d may live in the caller's scratch: it is compiled from a copy.
	p, err := normprog.Compile(&normprog.Desc{Kind: d.Kind, SrcDT: d.SrcDT, DstDT: d.DstDT, Dims: slices.Clone(d.Dims),
		SrcStrides: slices.Clone(d.SrcStrides), DstStrides: slices.Clone(d.DstStrides), Norm: slices.Clone(d.Norm), Epsilon: d.Epsilon})
	if err != nil {
		return nil, err
	}
	if jit.CapStamp() != stamp {
		return p, nil // compiled under another cap than the key's: not kept (jit.ISAStamp)
	}
	c.Lock()
	defer c.Unlock()
	if len(c.byKey) >= 256 {
		clear(c.byKey)
	}
	c.byKey[string(b)] = p
	return p, nil
}

// sliceSpan is the elements dims with strides address, from the first:
// 0 where a dim is 0, else one past the farthest (saturating; a negative
// stride counts by its size, and is refused later).
func sliceSpan(dims, strides []int64) int64 {
	for _, d := range dims {
		if d == 0 {
			return 0
		}
	}
	sp := int64(1)
	for i, d := range dims {
		t := plan.MulSat(d-1, max(strides[i], -strides[i]))
		if sp > math.MaxInt64-t {
			return math.MaxInt64
		}
		sp += t
	}
	return sp
}

// spanView is b cut to the n elements of size bytes a tensor's span
// holds where b is longer: what an overlap check compares, since a
// slice may run on past its tensor.
func spanView(b []byte, n int64, size int) []byte {
	if n >= 0 && n <= int64(len(b))/int64(size) {
		return b[:n*int64(size)]
	}
	return b
}

// checkDims copies dims into d (of their length) and returns their
// elements, or an error for a negative dim or more than 2^63 elements.
func checkDims(fn string, dims []int, d []int64) (int64, error) {
	for i, v := range dims {
		if v < 0 {
			return 0, status.Errorf(status.InvalidShape, "reduce.%s: dim %d is %d (negative)", fn, i, v)
		}
		d[i] = int64(v)
	}
	n := elements(d)
	if n == math.MaxInt64 {
		return 0, status.Errorf(status.InvalidShape, "reduce.%s: dims %s hold more than 2^63 elements", fn, ints(dims))
	}
	return n, nil
}
