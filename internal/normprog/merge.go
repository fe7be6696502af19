package normprog

import "slices"

// mergeKept merges each pair of neighbouring kept dims that every
// operand walks as one (the outer dim's stride is the inner one's
// size times its stride, in every tensor): [4, 512, 4096] normalized
// over the last dim becomes [2048, 4096]. chooseChunks cuts one dim,
// the outermost in memory; merged, that dim is long enough to cut into
// chunks that fit a core's L2, where [4, 512, 4096] could only be cut
// into 8 MiB chunks of 512 rows.
func mergeKept(d *Desc) {
	for i := len(d.Dims) - 2; i >= 0; i-- {
		if d.Norm[i] || d.Norm[i+1] {
			continue
		}
		lists := strideLists(d)
		if slices.ContainsFunc(lists, func(s *[]int64) bool { return (*s)[i] != (*s)[i+1]*d.Dims[i+1] }) {
			continue
		}
		d.Dims[i] *= d.Dims[i+1]
		d.Dims = slices.Delete(d.Dims, i+1, i+2)
		d.Norm = slices.Delete(d.Norm, i+1, i+2)
		for _, s := range lists {
			(*s)[i] = (*s)[i+1]
			*s = slices.Delete(*s, i+1, i+2)
		}
	}
}

// strideLists are every operand's strides over d's dims.
func strideLists(d *Desc) []*[]int64 {
	lists := []*[]int64{&d.SrcStrides, &d.DstStrides}
	for _, o := range []*Operand{d.Gamma, d.Beta, d.Mean, d.Var, d.Stats} {
		if o != nil {
			lists = append(lists, &o.Strides)
		}
	}
	for i := range d.PostOps {
		if d.PostOps[i].Kind.IsBinary() {
			lists = append(lists, &d.PostOps[i].BinStrides)
		}
	}
	if r := d.Residual; r != nil {
		lists = append(lists, &r.X.Strides, &r.Skip.Strides)
		if r.Bias != nil {
			lists = append(lists, &r.Bias.Strides)
		}
	}
	return lists
}
