package normprog

import (
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// The fused kernel over columns: a softmax, log-softmax, layer, RMS, L2
// or L1 normalization whose one normalized dim is not innermost (the
// channels of NCHW, as ConvNeXt's channels-first LayerNorm) runs as
// kernelshape.NormColumns where the innermost kept dim is contiguous in
// src and dst and every operand is contiguous or broadcast along it.
// Each lane is a row of its own, the channels are swept in tiles of a
// few vectors of that dim that stay in cache, and src is read from
// memory once.

// columnKinds maps the kinds the column kernel computes.
var columnKinds = map[Kind]kernelshape.NormKind{Softmax: kernelshape.NormSoftmax, LogSoftmax: kernelshape.NormLogSoftmax,
	LayerNorm: kernelshape.NormLayer, RMSNorm: kernelshape.NormRMS, L2Norm: kernelshape.NormL2, L1Norm: kernelshape.NormL1}

// columnDim returns the normalized dim of a description of kind the
// column kernel may take (one normalized dim of size > 1, a kept dim of
// stride 1 in src and dst, no kept statistics), judged from the
// description alone; kind is the program's (GroupNorm's description is
// a LayerNorm over its groups, which the column kernel does not take).
func columnDim(kind Kind, d *Desc) (int, bool) {
	_, ok := columnKinds[kind]
	if !ok || !useFused || slices.Contains(d.Dims, 0) || d.Residual != nil || d.Mean != nil || d.Var != nil || d.Stats != nil ||
		d.Kind == LogSoftmax && d.InfAsZero || binaries(columnPostOps(d)) > plan.MaxBinary {
		return -1, false
	}
	a := -1
	for i, n := range d.Dims {
		if d.Norm[i] && n > 1 {
			if a >= 0 {
				return -1, false
			}
			a = i
		}
	}
	if a < 0 || innerDim(d) < 0 {
		return -1, false
	}
	return a, true
}

// innerDim is the kept dim of size > 1 of src stride 1, when dst has
// stride 1 there too, else -1.
func innerDim(d *Desc) int {
	for i, n := range d.Dims {
		if !d.Norm[i] && n > 1 && d.SrcStrides[i] == 1 && d.DstStrides[i] == 1 {
			return i
		}
	}
	return -1
}

// Column chunks: the column kernel keeps a tile in cache whatever the
// chunk, so chunks only spread the work over the threads. Where the
// outermost kept dim gives fewer than columnChunks chunks (softmax over
// the channels of a few images), the contiguous inner dim is cut
// instead, into at least columnChunks pieces of at least
// columnMinPiece elements, each a multiple of columnPieceAlign, so that
// tiles of a power-of-two width are whole (a tile of another width, as a
// channel sum cut into runs takes, leaves a partial tile per piece, which
// computes each lane as a whole tile does).
const (
	columnChunks     = 16
	columnMinPiece   = 1024
	columnPieceAlign = 256
)

// chooseColumnChunks recuts a program the column kernel may run (see
// above).
func (p *Program) chooseColumnChunks() {
	d := &p.d
	if _, ok := columnDim(p.kind, d); !ok || p.nChunks >= columnChunks {
		return
	}
	i := innerDim(d)
	n := d.Dims[i]
	piece := (n + columnChunks - 1) / columnChunks
	piece = max(columnMinPiece, (piece+columnPieceAlign-1)/columnPieceAlign*columnPieceAlign)
	if piece >= n {
		return
	}
	p.chunkDim, p.chunk, p.nChunks = i, piece, (n+piece-1)/piece
}

// fusedColumns compiles the column kernel of one chunk of dims, or
// returns nil where the description or the ISA has none.
func (p *Program) fusedColumns(dims []int64) (*jit.NormKernel, error) {
	d := &p.d
	a, ok := columnDim(p.kind, d)
	if !ok || dims[a] <= 1 {
		return nil, nil
	}
	post := columnPostOps(d)
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: d.SrcDT, DstDT: d.DstDT, Dims: dims,
		SrcStrides: d.SrcStrides, Reduce: d.Norm, DstStrides: d.DstStrides, PostOps: post})
	if err != nil || len(pl.Reduced) != 1 || !pl.HasInner || pl.Inner.SrcStride != 1 || pl.Inner.DstStride != 1 ||
		pl.Reduced[0].Size != dims[a] || pl.Reduced[0].SrcStride != d.SrcStrides[a] {
		return nil, nil
	}
	// The normalized loop walks dst and the operands too: the map
	// sweep writes each channel.
	ch := &pl.Reduced[0]
	ch.DstStride = d.DstStrides[a]
	ch.BinStrides = nil
	for _, op := range post {
		if !op.Kind.IsBinary() {
			continue
		}
		if s := pl.Inner.BinStrides[len(ch.BinStrides)]; s != 0 && s != 1 {
			return nil, nil
		}
		ch.BinStrides = append(ch.BinStrides, op.BinStrides[a])
	}
	// Columns stream dst from memory whatever the L3 (see rowStreamMinBytes).
	k, _, err := jit.CompileNorm(&kernelshape.Norm{Kind: columnKinds[d.Kind], Plan: pl, Epsilon: d.Epsilon, InfAsZero: d.InfAsZero,
		EpsArg: d.EpsDT != dtypes.Undef, EpsAdded: d.EpsAdded, StreamDst: fromMemory(d), Dequant: d.Dequant})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// columnPostOps are the column kernel's post-ops: gamma, beta, then the
// caller's.
func columnPostOps(d *Desc) []plan.PostOp {
	var post []plan.PostOp
	if d.Gamma != nil {
		post = append(post, plan.PostOp{Kind: ops.Multiply, BinDT: d.Gamma.DT, BinStrides: d.Gamma.Strides})
	}
	if d.Beta != nil {
		post = append(post, plan.PostOp{Kind: ops.Add, BinDT: d.Beta.DT, BinStrides: d.Beta.Strides})
	}
	return append(post, d.PostOps...)
}

// fusedKernel compiles the fused kernel of one chunk of dims: over rows
// where the normalized dims are innermost, else over columns; nil where
// neither applies.
func (p *Program) fusedKernel(dims []int64) (*jit.NormKernel, error) {
	if k, err := p.fused(dims); k != nil || err != nil {
		return k, err
	}
	return p.fusedColumns(dims)
}
