package normprog

import (
	"sync"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/status"
)

// In place: dst may be src itself, and with a residual sum dst or the
// kept sum may be x or skip itself (the same first byte, data type and
// strides: every output element sits on its own input element). Any
// other overlap of an output with an input is refused.
//
// Chunks are cut along kept dims, so chunk c's outputs are chunk c's
// inputs and no other chunk reads them. Within a chunk:
//
//   - the fused kernel reads each row for its statistics before its
//     map, and the map loads each vector (src, softmax's exps kept in
//     dst, x and skip while forming the sum) before it stores the same
//     lanes, one vector after another, with no group moved back over
//     lanes already stored; rows are disjoint and each is finished before
//     the next. So it runs in place as it is;
//   - the passes write dst (or the kept sum) only in their last pass (the
//     sum in its first), but that pass is a kernel whose src is then its
//     own dst, and a kernel may end a loop with a group moved back over
//     outputs it has stored, recomputing them from overwritten src. So
//     the chunk of that input is first copied to scratch (the whole input
//     once where chunks interleave: wholeCopy), and the passes read the
//     copy (softmax's last pass reads its exps, not src, and
//     needs none). A residual operand that is dst is read only by the
//     sum's pass, which writes scratch or the sum; skip as the kept sum is
//     that pass's binary operand given as its dst, which the kernels
//     take in place (see internal/jit/inplace.go).

// checkAliasing refuses an output that overlaps an input without being
// that input itself (see In place), and a kept sum that overlaps dst.
func (p *Program) checkAliasing(b *Buffers) error {
	d := &p.d
	res := d.Residual
	if res == nil {
		if jit.Overlap(b.Src, b.Dst) && !jit.SameTensor(b.Src, b.Dst, d.SrcDT, d.DstDT, d.Dims, d.SrcStrides, d.DstStrides) {
			return status.Errorf(status.InvalidArguments, "normprog: dst overlaps src without being src itself "+
				"(in place, dst must be src: the same first byte, data type and strides)")
		}
		return nil
	}
	type tensor struct {
		name    string
		buf     []byte
		dt      dtypes.DataType
		strides []int64
	}
	// In arrays of their own, so that the lists stay on the stack.
	var outArr [2]tensor
	var inArr [3]tensor
	outs := append(outArr[:0], tensor{"dst", b.Dst, d.DstDT, d.DstStrides})
	if res.KeepSum {
		if jit.Overlap(b.Src, b.Dst) {
			return status.Errorf(status.InvalidArguments, "normprog: the sum overlaps dst")
		}
		outs = append(outs, tensor{"sum", b.Src, d.SrcDT, d.SrcStrides})
	}
	ins := append(inArr[:0], tensor{"residual x", b.X, res.X.DT, res.X.Strides}, tensor{"residual skip", b.Skip, res.Skip.DT, res.Skip.Strides})
	if res.Bias != nil {
		ins = append(ins, tensor{"residual bias", b.Bias, res.Bias.DT, res.Bias.Strides})
	}
	for _, out := range outs {
		for i, in := range ins {
			if !jit.Overlap(out.buf, in.buf) || i < 2 && jit.SameTensor(out.buf, in.buf, out.dt, in.dt, d.Dims, out.strides, in.strides) {
				continue
			}
			return status.Errorf(status.InvalidArguments, "normprog: %s overlaps %s without being it "+
				"(in place, the output must be x or skip itself: the same first byte, data type and strides)", out.name, in.name)
		}
	}
	return nil
}

// inPlaceCopy returns the passes ps of chunk c, whose buffers buf gives,
// reading a copy of the input that a pass also writes as its dst, and
// that input's ref; ok is false when no pass does (the run is not in
// place, or its passes need no copy). The copy is slot
// len(ps.scratch) of scratch, grown as needed.
func (p *Program) inPlaceCopy(ps *passes, c int64, scratch *[][]byte, buf func(ref) []byte) (in ref, cp []byte, ok bool) {
	for _, s := range ps.steps {
		from, to := buf(s.src), buf(s.dst)
		if len(from) > 0 && len(to) > 0 && unsafe.SliceData(from) == unsafe.SliceData(to) {
			in, ok = s.src, true
			break
		}
	}
	if !ok {
		return ref{}, nil, false
	}
	d := &p.d
	strides, dt := d.SrcStrides, d.SrcDT
	if in.kind == rX {
		strides, dt = d.Residual.X.Strides, d.Residual.X.DT
	}
	n := p.chunkSpan(c, strides, int64(dt.Size()))
	slot := len(ps.scratch)
	for len(*scratch) <= slot {
		*scratch = append(*scratch, nil)
	}
	if int64(cap((*scratch)[slot])) < n {
		(*scratch)[slot] = make([]byte, n)
	}
	cp = (*scratch)[slot][:n]
	copy(cp, buf(in)[:n])
	return in, cp, true
}

// wholeCopy is, for a run in place by passes, the input that the
// passes would copy chunk by chunk (src, or a residual sum's x, where an
// output is it itself) when the chunks' spans of it overlap: a chunk's
// copy would then read other chunks' elements, as other workers write
// them, and where the normalized dims lie outside the chunk dim (a
// normalization over axis 0, GroupNorm on channels last as passes) nearly the whole
// tensor, chunk after chunk. The run then reads a copy of the whole input
// made once instead. in is nil when no such copy is needed.
func (p *Program) wholeCopy(b *Buffers) (in *[]byte, n int64) {
	d := &p.d
	if p.cl != nil {
		return nil, 0 // its blocks are apart and copied one by one
	}
	if p.full.fused != nil && (p.last == nil || p.last.fused != nil) {
		return nil, 0 // the fused kernel runs in place as it is
	}
	strides, dt := d.SrcStrides, d.SrcDT
	switch {
	case d.Residual == nil && jit.Overlap(b.Src, b.Dst):
		in = &b.Src
	case d.Residual != nil && (jit.Overlap(b.X, b.Dst) || jit.Overlap(b.X, b.Src)):
		in, strides, dt = &b.X, d.Residual.X.Strides, d.Residual.X.DT
	default:
		return nil, 0
	}
	size := int64(dt.Size())
	if p.chunkDim >= 0 {
		step := p.chunk * strides[p.chunkDim] * size
		for c := range p.nChunks - 1 {
			if p.chunkSpan(c, strides, size) > step {
				return in, span(d.Dims, strides, size)
			}
		}
	}
	return nil, 0
}

// wholeCopies keeps the buffers of wholeCopy's copies between runs.
var wholeCopies sync.Pool

// copyPiece is how many bytes of a whole copy one goroutine copies at a
// time (a variable: tests lower it).
var copyPiece int64 = 1 << 20

// runOnWholeCopy runs run with *in replaced by a copy of its first n
// bytes, made on jit's threads where there are more than one and more
// than one piece to copy.
func runOnWholeCopy(in *[]byte, n int64, run func() error) error {
	kept, _ := wholeCopies.Get().(*[]byte)
	if kept == nil {
		kept = new([]byte)
	}
	if int64(cap(*kept)) < n {
		*kept = make([]byte, n)
	}
	cp, from := (*kept)[:n], *in
	if threads, pieces := jit.Threads(), (n+copyPiece-1)/copyPiece; threads > 1 && pieces > 1 {
		if err := jit.Parallel(threads, pieces, func(_ int, i int64) error {
			lo := i * copyPiece
			hi := min(n, lo+copyPiece)
			copy(cp[lo:hi], from[lo:hi])
			return nil
		}); err != nil {
			wholeCopies.Put(kept)
			return err
		}
	} else {
		// Not through Parallel, whose closure would go to the heap.
		copy(cp, from[:n])
	}
	*in = cp
	err := run()
	*in = from
	wholeCopies.Put(kept)
	return err
}

// chunkSpan is span for chunk c of an operand of the program's dims:
// the bytes from its first element to its last.
func (p *Program) chunkSpan(c int64, strides []int64, size int64) int64 {
	last := int64(0)
	for i, n := range p.d.Dims {
		if i == p.chunkDim {
			n = min(p.chunk, n-c*p.chunk)
		}
		last += (n - 1) * strides[i]
	}
	return (last + 1) * size
}
