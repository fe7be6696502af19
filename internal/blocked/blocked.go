// Package blocked runs reductions whose src or dst has a blocked memory
// layout (oneDNN's aBx16b, ABcd32a16b, ...: see package layout) on the
// plain strided machinery of package jit: no emitter knows about blocks.
//
// A dim D blocked by b is, in memory, two strided dims: D/b blocks of b
// consecutive positions. When src and dst block the same dim differently
// (8 and 16), the dim splits into mixed-radix digits that both tensors
// address with one stride each: c = q*16 + m*8 + r gives (D/16, 2, 8).
// Without padding (every blocked D a multiple of its block) the whole
// problem is then one plain strided problem over the digits, which the
// planner canonicalises like any other: zero copies, no new kernels.
//
// With padding, a dim is not one product of digits. Its range splits into
// pieces, each a product of digits: the whole blocks of the largest
// radix, then whole blocks of the next one in what is left, and the last
// positions one by one. A box is one piece of every dim: a plain strided
// problem on offset views of the buffers.
//
//   - Kept dims: boxes write disjoint outputs, so the boxes are run one
//     after the other and the result is complete.
//   - A reduced dim in pieces would leave each output's elements spread
//     over several boxes, whose partial results would need combining per
//     alg (and the mean's N, the norms' finalize, the post-ops applied
//     once). Instead src is first repacked into a dense plain scratch
//     with the runtime's copy plans (plan.Copy, per box; exact: the same
//     data type, no arithmetic), and the reduction reads the scratch as an
//     ordinary plain tensor. It costs one more pass over src, only for
//     problems that reduce a padded blocked dim; it is the simplest
//     scheme that is right for every alg, every post-op and every
//     threading split the runtime picks, because it adds no arithmetic of
//     its own.
//
// Padding positions are never read (no box addresses them), so whatever
// they hold (NaN, garbage) never counts; dst padding is written as zeros,
// as oneDNN keeps it, by clearing the dst span before the boxes write
// their outputs.
package blocked

import (
	"slices"
	"strings"
	"sync"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/layout"
)

// Kernel is a compiled blocked-layout reduction. It is safe for
// concurrent use.
type Kernel struct {
	repack       []box // src -> dense scratch; nil when src is read in place
	scratchBytes int64
	main         []box
	clearDst     int64 // bytes of dst zeroed first (dst has padding), else 0
	srcBytes     int64
	dstBytes     int64
	nbin         int
	impl         string
}

// box is one plain strided problem over offset views of the buffers.
type box struct {
	k    *jit.Kernel
	src  int64 // byte offsets of the box's first element
	dst  int64
	bins []int64
}

// digit is one strided dim a logical dim splits into: Count values of
// weight W (the logical index advances by W per step).
type digit struct{ count, w int64 }

// piece is a part of a logical dim's range that is one product of digits,
// starting at logical index base.
type piece struct {
	base   int64
	digits []digit
}

// Compile returns a Kernel for p over src and dst described by their
// layouts. p gives the reduction, data types, logical src Dims, Reduce
// and post-ops (binary operands plain: BinStrides over the src dims, as
// in plan.Problem); its SrcStrides and DstStrides are ignored. dst is
// described over the src's rank: size 1 where a dim is reduced (with
// keep_dims false, a size-1 dim of block 1 and stride 0). A block
// combination no set of strided digits expresses (blocks that do not
// divide each other) is graph.Unimplemented; malformed descriptions are
// graph.InvalidArguments.
func Compile(p *plan.Problem, src, dst layout.Desc) (*Kernel, error) {
	if p == nil {
		return nil, status.Errorf(status.InvalidArguments, "blocked: Compile of a nil problem")
	}
	rank := len(p.Dims)
	if err := checkDesc("src", src, p.Dims); err != nil {
		return nil, err
	}
	if len(p.Reduce) != rank {
		return nil, status.Errorf(status.InvalidArguments, "blocked: %d reduce flags for rank %d", len(p.Reduce), rank)
	}
	want := make([]int64, rank)
	for i, d := range p.Dims {
		want[i] = d
		if p.Reduce[i] {
			want[i] = 1
		}
	}
	if err := checkDesc("dst", dst, want); err != nil {
		return nil, err
	}
	ssz, dsz := int64(p.SrcDT.Size()), int64(p.DstDT.Size())
	if ssz == 0 || dsz == 0 {
		return nil, status.Errorf(status.InvalidDataType, "blocked: data types %s:%s", p.SrcDT, p.DstDT)
	}
	k := &Kernel{nbin: p.BinaryCount(), srcBytes: src.Span() * ssz, dstBytes: dst.Span() * dsz}
	if dst.Padded() {
		k.clearDst = k.dstBytes
	}
	read := src
	repack := false
	for i := range rank {
		if p.Reduce[i] && len(dimPieces(p.Dims[i], radicesOf(src.Block[i]))) > 1 {
			repack = true
		}
	}
	if repack {
		// Copy every logical element into a dense plain scratch whose
		// dim order follows src's memory order (see scratchStrides).
		dense := layout.Strided(p.Dims, scratchStrides(src))
		cp := &plan.Problem{Reduction: plan.Copy, SrcDT: p.SrcDT, DstDT: p.SrcDT, Dims: p.Dims, Reduce: make([]bool, rank)}
		var err error
		if k.repack, err = boxes(cp, src, dense, nil); err != nil {
			return nil, err
		}
		k.scratchBytes = dense.Span() * ssz
		read = dense
	}
	var err error
	if k.main, err = boxes(p, read, dst, p.PostOps); err != nil {
		return nil, err
	}
	k.impl = k.main[0].k.Impl()
	return k, nil
}

// scratchStrides returns dense plain strides for a copy of a blocked
// tensor, with the dims in the order src's memory has them: the outer
// parts by decreasing stride, then the blocked dims innermost, in the
// order of their inner blocks. The repack then reads whole blocks and
// writes runs of a block's length (aBx16b repacks to axb: 16 channels
// in, 16 contiguous channels out), instead of scattering every element
// of a block to a different row.
func scratchStrides(src layout.Desc) []int64 {
	rank := len(src.Dims)
	var outer, inner []int
	for i := range rank {
		if src.Block[i] > 1 {
			inner = append(inner, i)
		} else {
			outer = append(outer, i)
		}
	}
	// Stable sorts keep the dim order among equal strides (size-1 dims).
	slices.SortStableFunc(outer, func(a, b int) int { return cmpDesc(src.Outer[a], src.Outer[b]) })
	slices.SortStableFunc(inner, func(a, b int) int { return cmpDesc(src.Inner[a], src.Inner[b]) })
	order := append(outer, inner...)
	strides := make([]int64, rank)
	acc := int64(1)
	for i := rank - 1; i >= 0; i-- {
		d := order[i]
		strides[d] = acc
		if src.Dims[d] > 0 {
			acc *= src.Dims[d]
		}
	}
	return strides
}

// cmpDesc orders larger values first.
func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// checkDesc checks that d describes a tensor of the given dims.
func checkDesc(what string, d layout.Desc, dims []int64) error {
	r := len(dims)
	if len(d.Dims) != r || len(d.Block) != r || len(d.Outer) != r || len(d.Inner) != r {
		return status.Errorf(status.InvalidArguments, "blocked: %s description has rank %d, want %d", what, len(d.Dims), r)
	}
	for i := range dims {
		if d.Dims[i] != dims[i] {
			return status.Errorf(status.InvalidArguments, "blocked: %s dims %v, want %v", what, d.Dims, dims)
		}
		if d.Block[i] < 1 || d.Outer[i] < 0 || d.Inner[i] < 0 {
			return status.Errorf(status.InvalidArguments, "blocked: %s dim %d has block %d, strides %d and %d",
				what, i, d.Block[i], d.Outer[i], d.Inner[i])
		}
	}
	return nil
}

// radicesOf returns the distinct blocks above 1, largest first.
func radicesOf(blocks ...int64) []int64 {
	var r []int64
	for _, b := range blocks {
		if b > 1 && !slices.Contains(r, b) {
			r = append(r, b)
		}
	}
	slices.Sort(r)
	slices.Reverse(r)
	return r
}

// dimPieces splits the range [0, n) of a dim into pieces of whole digits
// for the radices (largest first, each dividing the one before).
func dimPieces(n int64, radices []int64) []piece {
	if len(radices) == 0 || n == 0 {
		return []piece{{0, []digit{{n, 1}}}}
	}
	var out []piece
	base, rem := int64(0), n
	for i, r := range radices {
		c := rem / r
		if c == 0 {
			continue
		}
		ds := []digit{{c, r}}
		prev := r
		for _, s := range radices[i+1:] {
			ds = append(ds, digit{prev / s, s})
			prev = s
		}
		ds = append(ds, digit{prev, 1})
		out = append(out, piece{base, ds})
		base += c * r
		rem -= c * r
	}
	if rem > 0 {
		out = append(out, piece{base, []digit{{rem, 1}}})
	}
	return out
}

// strideOf is the stride, in a tensor of block b with strides outer and
// inner, of a digit of weight w: the radices divide each other, so w is
// a multiple of b or a divisor of it.
func strideOf(w, b, outer, inner int64) int64 {
	if b == 1 || w >= b {
		return w / b * outer
	}
	return w * inner
}

// boxes compiles one plain problem per box (one piece of every dim) for p
// from src to dst. ops are p's post-ops, binary operands plain.
func boxes(p *plan.Problem, src, dst layout.Desc, ops []plan.PostOp) ([]box, error) {
	rank := len(p.Dims)
	per := make([][]piece, rank)
	for i := range rank {
		var rad []int64
		if p.Reduce[i] {
			rad = radicesOf(src.Block[i])
		} else {
			rad = radicesOf(src.Block[i], dst.Block[i])
		}
		for j := 1; j < len(rad); j++ {
			if rad[j-1]%rad[j] != 0 {
				return nil, status.Errorf(status.Unimplemented,
					"blocked: dim %d is blocked by %d and by %d; gdnn splits a dim only where one block divides the other", i, rad[j-1], rad[j])
			}
		}
		per[i] = dimPieces(p.Dims[i], rad)
	}
	var binIdx []int
	for j, op := range ops {
		if op.Kind.IsBinary() {
			binIdx = append(binIdx, j)
		}
	}
	ssz, dsz := int64(p.SrcDT.Size()), int64(p.DstDT.Size())
	var out []box
	pick := make([]int, rank)
	for {
		q := &plan.Problem{Reduction: p.Reduction, SrcDT: p.SrcDT, DstDT: p.DstDT, Dims: []int64{}, SrcStrides: []int64{}, Reduce: []bool{}, DstStrides: []int64{}}
		for _, op := range ops {
			op.BinStrides = nil
			if op.Kind.IsBinary() {
				op.BinStrides = []int64{}
			}
			q.PostOps = append(q.PostOps, op)
		}
		b := box{bins: make([]int64, len(binIdx))}
		for i := range rank {
			pc := per[i][pick[i]]
			b.src += offsetOf(pc.base, src, i) * ssz
			if !p.Reduce[i] {
				b.dst += offsetOf(pc.base, dst, i) * dsz
			}
			for k, j := range binIdx {
				if !p.Reduce[i] {
					b.bins[k] += pc.base * ops[j].BinStrides[i] * int64(ops[j].BinDT.Size())
				}
			}
			for _, dg := range pc.digits {
				if dg.count == 1 {
					continue // a size-1 digit addresses nothing
				}
				q.Dims = append(q.Dims, dg.count)
				q.Reduce = append(q.Reduce, p.Reduce[i])
				q.SrcStrides = append(q.SrcStrides, strideOf(dg.w, src.Block[i], src.Outer[i], src.Inner[i]))
				ds := int64(0)
				if !p.Reduce[i] {
					ds = strideOf(dg.w, dst.Block[i], dst.Outer[i], dst.Inner[i])
				}
				q.DstStrides = append(q.DstStrides, ds)
				for _, j := range binIdx {
					bs := int64(0)
					if !p.Reduce[i] {
						bs = dg.w * ops[j].BinStrides[i]
					}
					q.PostOps[j].BinStrides = append(q.PostOps[j].BinStrides, bs)
				}
			}
		}
		if len(q.Dims) > plan.MaxRank {
			return nil, status.Errorf(status.Unimplemented, "blocked: the layouts split %d dims into %d, more than the %d a plan takes",
				rank, len(q.Dims), plan.MaxRank)
		}
		pl, err := plan.Canonicalize(q)
		if err != nil {
			return nil, err
		}
		if b.k, err = jit.Compile(pl); err != nil {
			return nil, err
		}
		out = append(out, b)
		// Next box: the last dim's piece turns fastest.
		i := rank - 1
		for ; i >= 0; i-- {
			if pick[i]++; pick[i] < len(per[i]) {
				break
			}
			pick[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

// offsetOf is the element offset of logical index x of dim i in d.
func offsetOf(x int64, d layout.Desc, i int) int64 {
	return x/d.Block[i]*d.Outer[i] + x%d.Block[i]*d.Inner[i]
}

// Impl names the implementation of the reduction boxes ("jit:avx512",
// "interp", ...).
func (k *Kernel) Impl() string { return k.impl }

// Why says why the interpreter runs any of the kernel's boxes (the
// repack's or the reduction's; see jit.Kernel.Why), or "". Boxes share
// one plan shape and so mostly one cause: each distinct cause is given
// once, so the text does not grow with the number of boxes.
func (k *Kernel) Why() string {
	var whys []string
	for _, set := range []struct {
		what  string
		boxes []box
	}{{"repack", k.repack}, {"reduction", k.main}} {
		for _, b := range set.boxes {
			if w := b.k.Why(); w != "" && !slices.Contains(whys, set.what+": "+w) {
				whys = append(whys, set.what+": "+w)
			}
		}
	}
	return strings.Join(whys, "; ")
}

// Boxes returns how many plain problems the kernel runs: repack boxes
// and reduction boxes.
func (k *Kernel) Boxes() (repack, main int) { return len(k.repack), len(k.main) }

// SrcBytes and DstBytes are the bytes the src and dst buffers must hold
// (the layouts' spans, padding included).
func (k *Kernel) SrcBytes() int64 { return k.srcBytes }

// DstBytes: see SrcBytes.
func (k *Kernel) DstBytes() int64 { return k.dstBytes }

var scratchPool sync.Pool // *[]byte

// InPlace reports whether binary operand j may be the dst buffer itself,
// as jit.Kernel.InPlace says for a plain problem: every box must read
// operand j exactly where it writes dst, and dst must have no padding to
// clear (clearing first would wipe the operand before it is read).
func (k *Kernel) InPlace(j int) bool {
	if k == nil || k.clearDst > 0 || len(k.main) == 0 {
		return false
	}
	for _, b := range k.main {
		if j < 0 || j >= len(b.bins) || b.bins[j] != b.dst || !b.k.InPlace(j) {
			return false
		}
	}
	return true
}

// Run executes the kernel on src, dst and one plain buffer per binary
// post-op. Buffers shorter than the layouts' spans are an
// InvalidArguments error, before anything is written. dst must not
// overlap src or bins, except a binary operand that is dst itself where
// InPlace allows it.
func (k *Kernel) Run(src, dst []byte, bins [][]byte) error {
	if k == nil {
		return status.Errorf(status.InvalidArguments, "blocked: Run of a nil kernel")
	}
	if int64(len(src)) < k.srcBytes {
		return status.Errorf(status.InvalidArguments, "blocked: src buffer holds %d bytes, the layout spans %d", len(src), k.srcBytes)
	}
	if int64(len(dst)) < k.dstBytes {
		return status.Errorf(status.InvalidArguments, "blocked: dst buffer holds %d bytes, the layout spans %d", len(dst), k.dstBytes)
	}
	if len(bins) != k.nbin {
		return status.Errorf(status.InvalidArguments, "blocked: %d binary operand buffers given, the problem has %d", len(bins), k.nbin)
	}
	// Check every operand before anything is written: a box's kernel
	// checks only its own part, after earlier boxes (and the clear of a
	// padded dst) have written.
	for i, b := range bins {
		for _, bx := range k.main {
			if bx.bins[i] > int64(len(b)) {
				return status.Errorf(status.InvalidArguments, "blocked: binary operand %d holds %d bytes, a box starts at %d", i, len(b), bx.bins[i])
			}
		}
		if jit.Overlap(b, dst[:k.dstBytes]) && !k.InPlace(i) {
			return status.Errorf(status.InvalidArguments, "blocked: binary operand %d shares memory with dst, and the kernel cannot read it in place", i)
		}
	}
	if jit.Overlap(src[:k.srcBytes], dst[:k.dstBytes]) {
		return status.Errorf(status.InvalidArguments, "blocked: src and dst share memory")
	}
	if k.clearDst > 0 {
		clear(dst[:k.clearDst])
	}
	read := src
	if k.repack != nil {
		h, _ := scratchPool.Get().(*[]byte)
		if h == nil || int64(cap(*h)) < k.scratchBytes {
			b := make([]byte, k.scratchBytes)
			h = &b
		}
		defer scratchPool.Put(h)
		read = (*h)[:k.scratchBytes]
		for _, b := range k.repack {
			if err := b.k.Run(from(src, b.src), from(read, b.dst), nil); err != nil {
				return err
			}
		}
	}
	var sub [plan.MaxBinary][]byte
	for _, b := range k.main {
		for i, off := range b.bins {
			if off > int64(len(bins[i])) {
				return status.Errorf(status.InvalidArguments, "blocked: binary operand %d holds %d bytes, a box starts at %d", i, len(bins[i]), off)
			}
			sub[i] = bins[i][off:]
		}
		if err := b.k.Run(from(read, b.src), from(dst, b.dst), sub[:len(b.bins)]); err != nil {
			return err
		}
	}
	return nil
}

// from is buf from byte off on: empty where off is past its end, as a
// box's offset is in a tensor of no elements (a dim of size 0), whose
// box reads nothing (and then its kernel checks the span it needs).
func from(buf []byte, off int64) []byte {
	return buf[min(off, int64(len(buf))):]
}
