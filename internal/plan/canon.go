package plan

import "sort"

// Canonicalize validates p and returns its canonical Plan:
//
//   - size-1 dims are dropped;
//   - a kept dim of size 0 leaves nothing to compute: the plan has
//     Outputs 0, N 0, Div 0 and a single Outer loop of size 0 (so a runner
//     that only walks loops also does nothing);
//   - a reduced dim of size 0 leaves every output the combine's identity,
//     finalized (a sum 0, a max -Inf, a mean 0/0 = NaN): the reduced dims
//     become a single Reduced loop of size 0 (nothing is read, so the kept
//     loops' src strides are set to 0), N = Div = 0;
//   - loops are ordered by src stride, largest first (ties: larger dst
//     stride first, then dim order), and neighbours that are both kept or
//     both reduced are merged when the outer one's stride equals the inner
//     one's size times stride in every tensor (src; for kept loops also dst
//     and every binary operand);
//   - Inner is the kept loop with the smallest src stride when that stride
//     is smaller than every reduced loop's: the reduction then walks whole
//     rows of Inner outputs ([O,R,I] kernels). Other kept loops go to
//     Outer and reduced loops to Reduced, each largest stride first, and
//     each list is merged again (Outer's last loop also into Inner);
//   - binary operand strides move from the post-ops into Loop.BinStrides
//     (zeros in reduced loops).
//
// N is the product of the reduced sizes (1 when nothing is reduced: an
// identity copy with conversion and post-ops), Outputs the product of the
// kept sizes, and Div = N. A rank-0 problem, or one with only size-1 dims,
// has no loops, N = 1 and Outputs = 1.
func Canonicalize(p *Problem) (*Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	nb := p.BinaryCount()
	pl := &Plan{Reduction: p.Reduction, SrcDT: p.SrcDT, DstDT: p.DstDT, PostOps: planPostOps(p.PostOps)}

	var loops []tagged
	keptZero, redZero := false, false
	for i, d := range p.Dims {
		if d == 1 {
			continue
		}
		l := Loop{Size: d, SrcStride: p.SrcStrides[i], BinStrides: make([]int64, nb)}
		if p.Reduce[i] {
			redZero = redZero || d == 0
			loops = append(loops, tagged{l, true})
			continue
		}
		keptZero = keptZero || d == 0
		l.DstStride = p.DstStrides[i]
		k := 0
		for _, op := range p.PostOps {
			if op.Kind.IsBinary() {
				l.BinStrides[k] = op.BinStrides[i]
				k++
			}
		}
		loops = append(loops, tagged{l, false})
	}
	if keptZero {
		pl.Outer = []Loop{{BinStrides: make([]int64, nb)}}
		return pl, nil
	}
	if redZero {
		// The sum is over nothing; drop the reduced loops so that they
		// do not steer Inner, and stand a size-0 loop in for them below.
		// No src is read, so src strides are zeroed: the loops then order
		// and merge by the dst layout alone.
		kept := loops[:0]
		for _, t := range loops {
			if !t.reduced {
				t.SrcStride = 0
				kept = append(kept, t)
			}
		}
		loops = kept
	}

	sort.SliceStable(loops, func(a, b int) bool {
		la, lb := &loops[a].Loop, &loops[b].Loop
		if la.SrcStride != lb.SrcStride {
			return la.SrcStride > lb.SrcStride
		}
		return la.DstStride > lb.DstStride
	})
	loops = mergeTagged(loops)

	var kept, red []Loop
	for _, t := range loops {
		if t.reduced {
			red = append(red, t.Loop)
		} else {
			kept = append(kept, t.Loop)
		}
	}
	if n := len(kept); n > 0 && (len(red) == 0 || kept[n-1].SrcStride < red[len(red)-1].SrcStride) {
		pl.Inner, pl.HasInner = kept[n-1], true
		kept = kept[:n-1]
	}
	pl.Outer = mergeList(kept, false)
	pl.Reduced = mergeList(red, true)
	for pl.HasInner && len(pl.Outer) > 0 {
		last := len(pl.Outer) - 1
		m, ok := merge(&pl.Outer[last], &pl.Inner, false)
		if !ok {
			break
		}
		pl.Inner, pl.Outer = m, pl.Outer[:last]
	}
	if redZero {
		pl.Reduced = []Loop{{BinStrides: make([]int64, nb)}}
	}

	// Validate bounded the product of all non-zero dims, so the counts fit.
	_ = pl.SetCounts()
	pl.Div = pl.N
	if pl.N == 1 {
		// A whole reduction of one element, which the runtime never
		// splits into stages (they would need the problem's parts).
		pl.Reduction = pl.Reduction.OfOne()
	}
	if len(pl.Outer) == 0 {
		pl.Outer = nil
	}
	if len(pl.Reduced) == 0 {
		pl.Reduced = nil
	}
	return pl, nil
}

// tagged is a loop before it is sorted into Outer, Inner or Reduced.
type tagged struct {
	Loop
	reduced bool
}

// mergeTagged merges neighbours of the stride-ordered list that are both
// kept or both reduced and contiguous.
func mergeTagged(loops []tagged) []tagged {
	var out []tagged
	for _, t := range loops {
		if n := len(out); n > 0 && out[n-1].reduced == t.reduced {
			if m, ok := merge(&out[n-1].Loop, &t.Loop, t.reduced); ok {
				out[n-1].Loop = m
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// mergeList merges neighbours of one list (all kept or all reduced).
func mergeList(loops []Loop, reduced bool) []Loop {
	var out []Loop
	for i := range loops {
		if n := len(out); n > 0 {
			if m, ok := merge(&out[n-1], &loops[i], reduced); ok {
				out[n-1] = m
				continue
			}
		}
		out = append(out, loops[i])
	}
	return out
}

// merge fuses outer loop o and inner loop in into one loop of size
// o.Size*in.Size when walking them nested addresses the same elements in
// the same order as one loop with in's strides: o's stride is in.Size
// times in's in src and, unless reduced (where dst and operands do not
// move), in dst and every binary operand.
func merge(o, in *Loop, reduced bool) (Loop, bool) {
	if !stepsOver(o.SrcStride, in.Size, in.SrcStride) {
		return Loop{}, false
	}
	if !reduced {
		if !stepsOver(o.DstStride, in.Size, in.DstStride) {
			return Loop{}, false
		}
		for j := range in.BinStrides {
			if !stepsOver(o.BinStrides[j], in.Size, in.BinStrides[j]) {
				return Loop{}, false
			}
		}
	}
	size, ok := mulSize(o.Size, in.Size)
	if !ok {
		return Loop{}, false
	}
	m := *in
	m.Size = size
	m.BinStrides = append([]int64(nil), in.BinStrides...)
	return m, true
}

// stepsOver reports whether outer == size*inner without overflow.
func stepsOver(outer, size, inner int64) bool {
	p, ok := mulSize(size, inner)
	return ok && p == outer
}

// planPostOps copies ops without their binary strides (they move into
// the loops). It returns nil for no post-ops.
func planPostOps(ops []PostOp) []PostOp {
	if len(ops) == 0 {
		return nil
	}
	out := make([]PostOp, len(ops))
	for i, op := range ops {
		op.BinStrides = nil
		out[i] = op
	}
	return out
}
