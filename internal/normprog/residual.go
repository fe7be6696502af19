package normprog

import (
	"slices"
	"sort"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Residual is a sum computed before a LayerNorm or RMSNorm, the
// transformer's residual connection: the normalization's src is
// X + Skip [+ Bias] (ONNX Runtime's SkipLayerNormalization). Each
// operand is over the src's dims; X and Skip usually have the same
// layout, Bias is broadcast (0 strides) along the kept dims.
//
// The sum is computed in f32 and rounded once to the Desc's SrcDT. With
// KeepSum it goes to Buffers.Src at the Desc's SrcStrides (the graph
// reads it again, as the next residual); otherwise it lives only in a
// chunk's scratch and the Desc's SrcStrides are not used.
//
// Each chunk computes its part of the sum first, then runs the
// statistics and map passes on it while it is in cache: X and Skip are
// read from memory once, and the sum is never read back from memory.
type Residual struct {
	X, Skip Operand
	Bias    *Operand // nil: none
	KeepSum bool
}

// validateResidual checks d.Residual's operands against d.
func validateResidual(d *Desc) error {
	res := d.Residual
	if res == nil {
		return nil
	}
	if d.Kind != LayerNorm && d.Kind != RMSNorm {
		return status.Errorf(status.InvalidArguments, "normprog: %s takes no residual sum (LayerNorm and RMSNorm do)", d.Kind)
	}
	for _, o := range []struct {
		name string
		op   *Operand
	}{{"residual x", &res.X}, {"residual skip", &res.Skip}, {"residual bias", res.Bias}} {
		if o.op == nil {
			continue
		}
		if len(o.op.Strides) != len(d.Dims) {
			return status.Errorf(status.InvalidArguments, "normprog: %s: %s has %d strides for %d dims", d.Kind, o.name, len(o.op.Strides), len(d.Dims))
		}
		if slices.ContainsFunc(o.op.Strides, func(s int64) bool { return s < 0 }) {
			return status.Errorf(status.InvalidArguments, "normprog: %s: %s has a negative stride", d.Kind, o.name)
		}
		if o.op.DT != dtypes.F32 && o.op.DT != dtypes.BF16 && o.op.DT != dtypes.F16 {
			return status.Errorf(status.Unimplemented, "normprog: %s %s of %v data, want f32, bf16 or f16", d.Kind, o.name, o.op.DT)
		}
	}
	return nil
}

// sumLayout makes the Desc's SrcStrides those of the sum's scratch when
// the caller does not keep the sum: dense, in the order of X's strides,
// so that the chunk dim (chooseChunks' pick, the largest stride) is the
// outermost and a chunk's sum fills its scratch from the start.
func sumLayout(d *Desc) {
	if d.Residual == nil || d.Residual.KeepSum {
		return
	}
	x := d.Residual.X.Strides
	order := make([]int, len(d.Dims))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return x[order[a]] > x[order[b]] })
	d.SrcStrides = dense(d.Dims, order, func(int) bool { return true })
}

// addResidual prepends to a chunk's passes the one that writes its sum
// (a copy of X with post-ops Add Skip [, Add Bias]) where the passes
// after it read src: the caller's sum buffer, or a scratch of one f32
// per element (ps.sum).
func (p *Program) addResidual(ps *passes, dims []int64, add func(*plan.Problem, ref, ref, ...ref) error) error {
	d := &p.d
	res := d.Residual
	ps.sum = -1
	if res == nil {
		return nil
	}
	if !res.KeepSum {
		ps.scratch = append(ps.scratch, plan.MulSat(elements(dims), 4))
		ps.sum = len(ps.scratch) - 1
	}
	post := []plan.PostOp{{Kind: ops.Add, BinDT: res.Skip.DT, BinStrides: res.Skip.Strides}}
	bins := []ref{{rSkip, 0}}
	if res.Bias != nil {
		post = append(post, plan.PostOp{Kind: ops.Add, BinDT: res.Bias.DT, BinStrides: res.Bias.Strides})
		bins = append(bins, ref{rResBias, 0})
	}
	return add(&plan.Problem{Reduction: plan.Copy, SrcDT: res.X.DT, DstDT: d.SrcDT, Dims: dims, SrcStrides: res.X.Strides,
		Reduce: make([]bool, len(dims)), DstStrides: d.SrcStrides, PostOps: post}, ref{rX, 0}, ref{rSrc, 0}, bins...)
}

// residualBuf is the buffer of a residual ref in chunk c's passes ps
// (at offsets a chunk's operand from its first element), and whether r
// is one.
func (p *Program) residualBuf(r ref, ps *passes, scratch [][]byte, b *Buffers, at func([]byte, []int64, dtypes.DataType) []byte) ([]byte, bool) {
	res := p.d.Residual
	if res == nil {
		return nil, false
	}
	switch r.kind {
	case rSrc:
		if ps.sum >= 0 {
			return scratch[ps.sum], true
		}
	case rX:
		return at(b.X, res.X.Strides, res.X.DT), true
	case rSkip:
		return at(b.Skip, res.Skip.Strides, res.Skip.DT), true
	case rResBias:
		return at(b.Bias, res.Bias.Strides, res.Bias.DT), true
	}
	return nil, false
}

// checkResidual refuses residual operand buffers shorter than their
// spans (checkAliasing, outputs that overlap them).
func (p *Program) checkResidual(b *Buffers, short func(string, []byte, []int64, dtypes.DataType) error) error {
	res := p.d.Residual
	if res == nil {
		return nil
	}
	ins := []struct {
		name string
		op   *Operand
		buf  []byte
	}{{"residual x", &res.X, b.X}, {"residual skip", &res.Skip, b.Skip}, {"residual bias", res.Bias, b.Bias}}
	for _, in := range ins {
		if in.op == nil {
			continue
		}
		if err := short(in.name, in.buf, in.op.Strides, in.op.DT); err != nil {
			return err
		}
	}
	return nil
}
