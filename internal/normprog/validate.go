package normprog

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// validate checks d: its kind, data types, ranks, dims and strides, the
// normalized dims, epsilon and the operands.
func validate(d *Desc) error {
	bad := func(format string, args ...any) error {
		return status.Errorf(status.InvalidArguments, "normprog: "+format, args...)
	}
	if d.Kind < Softmax || d.Kind > L1Norm {
		return bad("unknown normalization %v", d.Kind)
	}
	if err := validateDequant(d); err != nil {
		return err
	}
	if dt := d.SrcDT; dt != dtypes.F32 && dt != dtypes.BF16 && dt != dtypes.F16 && d.Dequant == nil {
		return status.Errorf(status.Unimplemented, "normprog: %s of %v data, want f32, bf16 or f16", d.Kind, dt)
	}
	if dt := d.DstDT; dt != dtypes.F32 && dt != dtypes.BF16 && dt != dtypes.F16 && !dt.IsInt8() {
		return status.Errorf(status.Unimplemented, "normprog: %s into %v data, want f32, bf16, f16, s8 or u8", d.Kind, dt)
	}
	r := len(d.Dims)
	if r == 0 || r > plan.MaxRank {
		return bad("%s of rank %d, want 1 to %d", d.Kind, r, plan.MaxRank)
	}
	if len(d.SrcStrides) != r || len(d.DstStrides) != r || len(d.Norm) != r {
		return bad("%s: %d dims with %d src strides, %d dst strides and %d normalized flags",
			d.Kind, r, len(d.SrcStrides), len(d.DstStrides), len(d.Norm))
	}
	anyNorm := false
	for i := range d.Dims {
		if d.Dims[i] < 0 || d.SrcStrides[i] < 0 || d.DstStrides[i] < 0 {
			return bad("%s: dim %d has size %d, src stride %d, dst stride %d; none may be negative",
				d.Kind, i, d.Dims[i], d.SrcStrides[i], d.DstStrides[i])
		}
		anyNorm = anyNorm || d.Norm[i]
	}
	if !anyNorm && d.Kind != GroupNorm { // a group's channels are normalized over, with or without other dims
		return bad("%s normalizes over no dim", d.Kind)
	}
	// dst is written once an element: two elements in one place would
	// keep whichever was written last (the reference refuses them too).
	if plan.SelfOverlaps(d.Dims, d.DstStrides) {
		return bad("%s: dst strides %v over dims %v %s", d.Kind, d.DstStrides, d.Dims, plan.NestRule)
	}
	eps := float64(d.Epsilon)
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0 {
		return bad("%s: epsilon %v, want a finite value >= 0", d.Kind, d.Epsilon)
	}
	if err := validateEps(d); err != nil {
		return err
	}
	for _, o := range []struct {
		name string
		op   *Operand
	}{{"gamma", d.Gamma}, {"beta", d.Beta}} {
		if o.op == nil {
			continue
		}
		if d.Kind != LayerNorm && d.Kind != RMSNorm && d.Kind != GroupNorm {
			return bad("%s takes no %s", d.Kind, o.name)
		}
		if len(o.op.Strides) != r {
			return bad("%s: %s has %d strides for %d dims", d.Kind, o.name, len(o.op.Strides), r)
		}
		for i, s := range o.op.Strides {
			if s < 0 {
				return bad("%s: %s stride %d of dim %d is negative", d.Kind, o.name, s, i)
			}
		}
		if o.op.DT != dtypes.F32 && o.op.DT != dtypes.BF16 && o.op.DT != dtypes.F16 {
			return status.Errorf(status.Unimplemented, "normprog: %s %s of %v data, want f32, bf16 or f16", d.Kind, o.name, o.op.DT)
		}
	}
	if d.InfAsZero && d.Kind != Softmax {
		return bad("%s has no inf_as_zero mode", d.Kind)
	}
	if d.Kind == GroupNorm {
		if d.ChanDim < 0 || d.ChanDim >= r || d.Norm[d.ChanDim] {
			return bad("groupnorm: channel dim %d of rank %d (it may not be a normalized dim)", d.ChanDim, r)
		}
		if c := d.Dims[d.ChanDim]; d.Groups <= 0 || c%d.Groups != 0 {
			return bad("groupnorm: %d groups do not divide %d channels", d.Groups, c)
		}
	} else if d.Groups != 0 {
		return bad("%s takes no groups", d.Kind)
	}
	statRank := r
	if d.Kind == GroupNorm {
		statRank = r + 1
	}
	// The statistics: a layer or group norm's mean and variance, a
	// softmax's stats (its log-sum-exp).
	for _, o := range []struct {
		name string
		op   *Operand
		of   bool // d.Kind keeps it
	}{
		{"mean", d.Mean, d.Kind == LayerNorm || d.Kind == GroupNorm},
		{"variance", d.Var, d.Kind == LayerNorm || d.Kind == GroupNorm},
		{"stats", d.Stats, d.Kind == Softmax},
	} {
		if o.op == nil {
			continue
		}
		if !o.of {
			return bad("%s keeps no %s", d.Kind, o.name)
		}
		if o.op.DT != dtypes.F32 || len(o.op.Strides) != statRank {
			return bad("%s: %s is %v with %d strides, want f32 with %d", d.Kind, o.name, o.op.DT, len(o.op.Strides), statRank)
		}
		for _, s := range o.op.Strides {
			if s < 0 {
				return bad("%s: %s has a negative stride", d.Kind, o.name)
			}
		}
	}
	for i, op := range d.PostOps {
		if op.Kind.IsBinary() && len(op.BinStrides) != r {
			return bad("%s: post-op %d (%v) has %d operand strides for %d dims", d.Kind, i, op.Kind, len(op.BinStrides), r)
		}
	}
	return nil
}

// validateEps checks the run-time epsilon's type and EpsAdded: only the
// kinds with an epsilon take one, only L2Norm adds it to its norm.
func validateEps(d *Desc) error {
	if d.EpsDT != dtypes.Undef {
		if d.Kind == Softmax || d.Kind == LogSoftmax {
			return status.Errorf(status.InvalidArguments, "normprog: %s takes no epsilon", d.Kind)
		}
		if d.EpsDT != dtypes.F32 && d.EpsDT != dtypes.BF16 && d.EpsDT != dtypes.F16 {
			return status.Errorf(status.Unimplemented, "normprog: %s: a run-time epsilon of %v data, want f32, bf16 or f16", d.Kind, d.EpsDT)
		}
	}
	if d.EpsAdded && d.Kind != L2Norm {
		return status.Errorf(status.InvalidArguments, "normprog: %s does not add its epsilon to a norm (only l2norm does)", d.Kind)
	}
	return nil
}

// checkEps refuses a run-time epsilon buffer too short for one element,
// or whose value is not one a normalization may add (norm.EpsilonProblem).
func (p *Program) checkEps(eps []byte) error {
	dt := p.d.EpsDT
	if dt == dtypes.Undef {
		return nil
	}
	if len(eps) < dt.Size() {
		return status.Errorf(status.InvalidArguments, "normprog: epsilon buffer holds %d bytes, want one %v element", len(eps), dt)
	}
	if why := norm.EpsilonProblem(dtypes.LoadF32(dt, eps, 0)); why != "" {
		return status.Errorf(status.InvalidArguments, "normprog: %s: run-time %s", p.kind, why)
	}
	return nil
}

// cloneDesc copies d, so that the caller may change it afterwards.
func cloneDesc(d *Desc) Desc {
	c := *d
	c.Dims = append([]int64(nil), d.Dims...)
	c.SrcStrides = append([]int64(nil), d.SrcStrides...)
	c.DstStrides = append([]int64(nil), d.DstStrides...)
	c.Norm = append([]bool(nil), d.Norm...)
	for _, o := range []**Operand{&c.Gamma, &c.Beta, &c.Mean, &c.Var, &c.Stats} {
		if *o != nil {
			cp := **o
			cp.Strides = append([]int64(nil), cp.Strides...)
			*o = &cp
		}
	}
	if d.Residual != nil {
		res := *d.Residual
		res.X.Strides = append([]int64(nil), res.X.Strides...)
		res.Skip.Strides = append([]int64(nil), res.Skip.Strides...)
		if res.Bias != nil {
			bias := *res.Bias
			bias.Strides = append([]int64(nil), bias.Strides...)
			res.Bias = &bias
		}
		c.Residual = &res
	}
	c.PostOps = append([]plan.PostOp(nil), d.PostOps...)
	for i := range c.PostOps {
		c.PostOps[i].BinStrides = append([]int64(nil), c.PostOps[i].BinStrides...)
	}
	return c
}

// span is the bytes a tensor of dims with strides addresses, elements
// of size bytes: 0 when a dim is 0.
func span(dims, strides []int64, size int64) int64 {
	last := int64(0)
	for i, n := range dims {
		if n == 0 {
			return 0
		}
		ext := plan.MulSat(n-1, strides[i])
		if last > math.MaxInt64-ext {
			return math.MaxInt64
		}
		last += ext
	}
	return plan.MulSat(last+1, size)
}

// checkBuffers refuses buffers shorter than the spans the program
// addresses, and outputs that overlap inputs other than in place (see
// checkAliasing); bins are the binary post-ops' operands (b.Bins is not
// read: see run).
func (p *Program) checkBuffers(b *Buffers, bins [][]byte) error {
	d := &p.d
	short := func(name string, buf []byte, strides []int64, dt dtypes.DataType) error {
		if need := span(d.Dims, strides, int64(dt.Size())); int64(len(buf)) < need {
			return status.Errorf(status.InvalidArguments, "normprog: %s buffer holds %d bytes, the %s addresses %d", name, len(buf), p.kind, need)
		}
		return nil
	}
	if d.Residual == nil || d.Residual.KeepSum {
		if err := short("src", b.Src, d.SrcStrides, d.SrcDT); err != nil {
			return err
		}
	}
	if err := p.checkResidual(b, short); err != nil {
		return err
	}
	if err := short("dst", b.Dst, d.DstStrides, d.DstDT); err != nil {
		return err
	}
	for _, o := range []struct {
		name string
		op   *Operand
		buf  []byte
	}{{"gamma", d.Gamma, b.Gamma}, {"beta", d.Beta, b.Beta}, {"mean", d.Mean, b.Mean}, {"variance", d.Var, b.Var},
		{"stats", d.Stats, b.Stats}} {
		if o.op != nil {
			if err := short(o.name, o.buf, o.op.Strides, o.op.DT); err != nil {
				return err
			}
		}
	}
	nb := 0
	for _, op := range d.PostOps {
		if !op.Kind.IsBinary() {
			continue
		}
		if nb >= len(bins) {
			return status.Errorf(status.InvalidArguments, "normprog: %d binary operand buffers given, the post-ops have more", len(bins))
		}
		if err := short("binary operand", bins[nb], op.BinStrides, op.BinDT); err != nil {
			return err
		}
		nb++
	}
	if nb != len(bins) {
		return status.Errorf(status.InvalidArguments, "normprog: %d binary operand buffers given, the post-ops have %d", len(bins), nb)
	}
	if err := p.checkEps(b.Eps); err != nil {
		return err
	}
	p.cutToSpans(b)
	return p.checkAliasing(b)
}

// cutToSpans cuts each of b's tensors to the span its strides address:
// a slice may run on past it, and what lies past it is neither read nor
// written, so it may be another tensor's (a dst right after src in one
// arena), which the aliasing check must not count.
func (p *Program) cutToSpans(b *Buffers) {
	d := &p.d
	cut := func(buf *[]byte, strides []int64, dt dtypes.DataType) {
		if need := span(d.Dims, strides, int64(dt.Size())); int64(len(*buf)) > need {
			*buf = (*buf)[:need]
		}
	}
	cut(&b.Src, d.SrcStrides, d.SrcDT)
	cut(&b.Dst, d.DstStrides, d.DstDT)
	for _, o := range []struct {
		op  *Operand
		buf *[]byte
	}{{d.Gamma, &b.Gamma}, {d.Beta, &b.Beta}, {d.Mean, &b.Mean}, {d.Var, &b.Var}, {d.Stats, &b.Stats}} {
		if o.op != nil {
			cut(o.buf, o.op.Strides, o.op.DT)
		}
	}
	if res := d.Residual; res != nil {
		cut(&b.X, res.X.Strides, res.X.DT)
		cut(&b.Skip, res.Skip.Strides, res.Skip.DT)
		if res.Bias != nil {
			cut(&b.Bias, res.Bias.Strides, res.Bias.DT)
		}
	}
}

// checkStats refuses statistics outputs that vary along a normalized
// dim (of the split dims, for GroupNorm): one value per row.
func checkStats(d *Desc) error {
	for _, o := range []struct {
		name string
		op   *Operand
	}{{"mean", d.Mean}, {"variance", d.Var}, {"stats", d.Stats}} {
		if o.op == nil {
			continue
		}
		for i, s := range o.op.Strides {
			if d.Norm[i] && s != 0 && d.Dims[i] > 1 {
				return status.Errorf(status.InvalidArguments, "normprog: %s stride %d along normalized dim %d, want 0: one value per row",
					o.name, s, i)
			}
		}
	}
	return nil
}

// splitGroups returns GroupNorm d as the LayerNorm it computes: dim
// ChanDim split into [Groups, channels per group], the channels and the
// Norm dims normalized; every stride of the split dim split alike. Mean
// and Var are already over the split dims.
func splitGroups(d *Desc) Desc {
	c := cloneDesc(d)
	g, k := d.Groups, d.ChanDim
	per := d.Dims[k] / g
	split := func(s []int64) []int64 {
		out := append([]int64(nil), s[:k]...)
		out = append(out, s[k]*per, s[k])
		return append(out, s[k+1:]...)
	}
	c.Kind = LayerNorm
	c.Dims = split(d.Dims)
	c.Dims[k], c.Dims[k+1] = g, per
	c.SrcStrides, c.DstStrides = split(d.SrcStrides), split(d.DstStrides)
	norm := append([]bool(nil), d.Norm[:k]...)
	c.Norm = append(append(norm, false, true), d.Norm[k+1:]...)
	for _, o := range []*Operand{c.Gamma, c.Beta} {
		if o != nil {
			o.Strides = split(o.Strides)
		}
	}
	for i := range c.PostOps {
		if c.PostOps[i].Kind.IsBinary() {
			c.PostOps[i].BinStrides = split(c.PostOps[i].BinStrides)
		}
	}
	c.Groups, c.ChanDim = 0, 0
	return c
}
