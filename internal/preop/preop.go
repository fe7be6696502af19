// Package preop runs a reduction whose src is first multiplied by a
// broadcast operand (a mask or weights): masked mean pooling of token
// embeddings, x [B,T,H] times mask [B,T,1] averaged over T, is the case
// it is for.
//
// It is a program of two compiled kernels of package internal/jit, run
// per chunk of a kept dim (chunk.Choose): the product (a copy of x with a
// binary Multiply post-op) into a chunk-sized f32 scratch, then the
// reduction of that scratch with the caller's post-ops into dst. A chunk
// is a few hundred KiB, so the scratch is written and read back in one
// core's cache and x is read from memory once. Each kernel is machine
// code wherever the reductions have it (AVX-512, AVX2, NEON), the
// interpreter elsewhere, saying why.
//
// Chunks are fixed by the description alone and each runs whole on one
// goroutine, so results are bit-identical for any thread count. The
// product is kept in f32 (never rounded to a 16-bit type between the
// Multiply and the reduction).
package preop

import (
	"sort"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/chunk"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Desc is a reduction (Problem: src, dims, reduced dims, dst and post-ops,
// as for any kernel) whose src is multiplied element by element by an
// operand of type OpDT addressed by OpStrides over the src's dims (0
// where it is broadcast).
type Desc struct {
	Problem   plan.Problem
	OpDT      dtypes.DataType
	OpStrides []int64
}

// chunkBytes is about how much f32 scratch one chunk writes: with its
// part of src it stays in a core's L2.
const chunkBytes = 256 << 10

// Program is a compiled Desc; safe for concurrent Runs.
type Program struct {
	d       Desc
	cut     chunk.Cut
	full    *pair
	last    *pair               // the last, shorter chunk (nil: none)
	scratch chunk.Stash[[]byte] // a worker's scratch, kept between Runs
}

// pair is one chunk's kernels: the product into scratch, then the
// reduction of the scratch.
type pair struct {
	mul, red *jit.Kernel
	scratch  int64 // bytes
}

// Compile validates d and compiles its kernels.
func Compile(d *Desc) (*Program, error) {
	if d == nil {
		return nil, status.Errorf(status.InvalidArguments, "preop: Compile of a nil description")
	}
	pr := &d.Problem
	if err := pr.Validate(); err != nil {
		return nil, err
	}
	if len(d.OpStrides) != len(pr.Dims) {
		return nil, status.Errorf(status.InvalidArguments, "preop: the operand has %d strides for %d dims", len(d.OpStrides), len(pr.Dims))
	}
	// A u8 operand (a mask of 0s and 1s as tokenizers give it) is exact
	// in f32, as the float types are.
	for _, dt := range []dtypes.DataType{pr.SrcDT, d.OpDT} {
		if dt != dtypes.F32 && dt != dtypes.BF16 && dt != dtypes.F16 && (dt != dtypes.U8 || dt == pr.SrcDT) {
			return nil, status.Errorf(status.Unimplemented, "preop: a %v src or operand; the product is computed for f32, bf16 and f16 (and a u8 operand)", dt)
		}
	}
	if pr.BinaryCount() >= plan.MaxBinary {
		return nil, status.Errorf(status.Unimplemented, "preop: %d binary post-ops and the operand, more than %d", pr.BinaryCount(), plan.MaxBinary)
	}
	p := &Program{d: cloneDesc(d)}
	// Chunks of a kept dim (chunk.Choose), of about chunkBytes of f32
	// scratch (all of it when nothing is kept).
	p.cut = chunk.Choose(pr.Dims, pr.SrcStrides, func(i int) bool { return !pr.Reduce[i] }, 4, chunkBytes)
	dims := append([]int64(nil), pr.Dims...)
	if p.cut.Dim >= 0 {
		dims[p.cut.Dim] = p.cut.Size
	}
	var err error
	if p.full, err = p.build(dims); err != nil {
		return nil, err
	}
	if p.cut.Dim >= 0 {
		if rem := pr.Dims[p.cut.Dim] % p.cut.Size; rem > 0 {
			dims[p.cut.Dim] = rem
			if p.last, err = p.build(dims); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

func cloneDesc(d *Desc) Desc {
	c := *d
	pr := &c.Problem
	pr.Dims = append([]int64(nil), pr.Dims...)
	pr.SrcStrides = append([]int64(nil), pr.SrcStrides...)
	pr.DstStrides = append([]int64(nil), pr.DstStrides...)
	pr.Reduce = append([]bool(nil), pr.Reduce...)
	pr.PostOps = append([]plan.PostOp(nil), pr.PostOps...)
	for i := range pr.PostOps {
		pr.PostOps[i].BinStrides = append([]int64(nil), pr.PostOps[i].BinStrides...)
	}
	c.OpStrides = append([]int64(nil), d.OpStrides...)
	return c
}

// build compiles the kernels of one chunk of dims: the scratch is dense
// f32 in the order of src's strides, so that it is written as src is
// read.
func (p *Program) build(dims []int64) (*pair, error) {
	pr := &p.d.Problem
	order := make([]int, len(dims))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pr.SrcStrides[order[a]] > pr.SrcStrides[order[b]] })
	scr := make([]int64, len(dims))
	n := int64(1)
	for k := len(order) - 1; k >= 0; k-- {
		scr[order[k]] = n
		n = plan.MulSat(n, dims[order[k]])
	}
	compile := func(q *plan.Problem) (*jit.Kernel, error) {
		pl, err := plan.Canonicalize(q)
		if err != nil {
			return nil, err
		}
		return jit.Compile(pl)
	}
	mul, err := compile(&plan.Problem{Reduction: plan.Copy, SrcDT: pr.SrcDT, DstDT: dtypes.F32, Dims: dims, SrcStrides: pr.SrcStrides,
		Reduce: make([]bool, len(dims)), DstStrides: scr,
		PostOps: []plan.PostOp{{Kind: ops.Multiply, BinDT: p.d.OpDT, BinStrides: p.d.OpStrides}}})
	if err != nil {
		return nil, err
	}
	q := *pr
	q.SrcDT, q.Dims, q.SrcStrides = dtypes.F32, dims, scr
	red, err := compile(&q)
	if err != nil {
		return nil, err
	}
	return &pair{mul: mul, red: red, scratch: plan.MulSat(n, 4)}, nil
}

// Impl names the kernels' implementation ("jit:avx512", ..., or
// "interp"), both joined by "+" where they differ.
func (p *Program) Impl() string {
	a, b := p.full.mul.Impl(), p.full.red.Impl()
	if a == b {
		return a
	}
	return a + "+" + b
}

// Why says why the interpreter runs either kernel, or "".
func (p *Program) Why() string {
	if w := p.full.mul.Why(); w != "" {
		return w
	}
	return p.full.red.Why()
}

// InPlace reports false: no operand may share dst's memory (the
// reduction's post-op operands are read after the products of a whole
// chunk are written to scratch, not in the caller's order).
func (p *Program) InPlace(int) bool { return false }

// Run reduces src times op into dst, bins the post-ops' operands. Each
// kernel checks its buffers: one shorter than its span is an error.
func (p *Program) Run(src, dst, op []byte, bins [][]byte) error {
	if p == nil || p.full == nil {
		return status.Errorf(status.InvalidArguments, "preop: Run of a nil program")
	}
	if len(bins) != p.d.Problem.BinaryCount() {
		return status.Errorf(status.InvalidArguments, "preop: %d binary operand buffers given, the post-ops have %d", len(bins), p.d.Problem.BinaryCount())
	}
	if threads := jit.Threads(); p.cut.Threads(threads) > 1 {
		// The workers' closure goes to the heap, and with it what it
		// refers to: the operand list is a copy, so that bins, and a
		// one-thread run's closure, stay on the caller's stack.
		var binArr [plan.MaxBinary][]byte
		bs := binArr[:copy(binArr[:], bins)]
		return chunk.Run(p.cut, threads, &p.scratch, func(s *[]byte, c int64) error {
			return p.runChunk(c, s, src, dst, op, bs)
		})
	}
	return chunk.Serial(p.cut, &p.scratch, func(s *[]byte, c int64) error {
		return p.runChunk(c, s, src, dst, op, bins)
	})
}

// runChunk runs chunk c: the product into scratch, then its reduction.
func (p *Program) runChunk(c int64, scratch *[]byte, src, dst, op []byte, bins [][]byte) error {
	pr := &p.d.Problem
	ps := p.full
	if p.last != nil && c == p.cut.N-1 {
		ps = p.last
	}
	if int64(cap(*scratch)) < ps.scratch {
		*scratch = make([]byte, ps.scratch)
	}
	s := (*scratch)[:ps.scratch]
	start := p.cut.Start(c)
	// at is buf from chunk c's first element, or empty where that is
	// past its end (the kernel then refuses it).
	at := func(buf []byte, strides []int64, dt dtypes.DataType) []byte {
		if p.cut.Dim < 0 {
			return buf
		}
		off := plan.MulSat(plan.MulSat(start, strides[p.cut.Dim]), int64(dt.Size()))
		if off > int64(len(buf)) {
			return nil
		}
		return buf[off:]
	}
	opnd := [1][]byte{at(op, p.d.OpStrides, p.d.OpDT)}
	if err := ps.mul.RunInline(at(src, pr.SrcStrides, pr.SrcDT), s, opnd[:]); err != nil {
		return err
	}
	var binBuf [plan.MaxBinary][]byte
	cb := binBuf[:len(bins)]
	k := 0
	for _, po := range pr.PostOps {
		if po.Kind.IsBinary() {
			cb[k] = at(bins[k], po.BinStrides, po.BinDT)
			k++
		}
	}
	return ps.red.RunInline(s, at(dst, pr.DstStrides, pr.DstDT), cb)
}
