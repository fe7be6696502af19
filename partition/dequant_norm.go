package partition

import (
	"fmt"
	"slices"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/status"
)

// oneDNN Graph's int8 softmax, layernorm and groupnorm patterns put a
// Dequantize (s8/u8 -> f32) before the normalization:
//
//	x = Dequantize(q)        (per_tensor: (q - zp) * scale)
//	y = SoftMax(x)           (or LogSoftmax, LayerNorm, RMSNorm, GroupNorm)
//	[post-ops, Quantize]
//
// The Dequantize joins the normalization's partition, so the kernel reads
// the 8-bit src itself and dequantizes it in registers as it loads it
// (normprog.Desc.Dequant): x never reaches memory. A normalization is not
// linear in x (softmax's exp, the variance's epsilon), so unlike before a
// reduction the map cannot move behind it; it runs on each element. A
// per-channel Dequantize is not fused: oneDNN's normalization primitives
// take one src scale per tensor (mask 0), and the partition of the
// Dequantize says so.

// dequantNorm returns the normalization whose src a Dequantize dq
// produces and which it fuses into, or nil; and, where dq feeds a
// normalization it does not fuse into, why.
func dequantNorm(g *graph.Graph, dq *graph.Op, taken *sched) (*graph.Op, string) {
	if dq.Kind != graph.Dequantize || len(dq.Outputs) != 1 {
		return nil, ""
	}
	out := dq.Outputs[0]
	cons := uniqueOps(g.Consumers(out.ID))
	var nrm *graph.Op
	for _, c := range cons {
		if c.Kind.IsNormalization() {
			nrm = c
			break
		}
	}
	if nrm == nil {
		return nil, ""
	}
	not := func(format string, args ...any) (*graph.Op, string) {
		return nil, fmt.Sprintf("not fused before %s: ", nrm) + fmt.Sprintf(format, args...)
	}
	if len(cons) != 1 {
		return not("its output has %d consumers; a fused Dequantize feeds only the normalization", len(cons))
	}
	for i, in := range nrm.Inputs {
		if (i == 0) != (in.ID == out.ID) {
			return not("it feeds an input other than the normalization's src")
		}
	}
	q, err := graph.QuantParamsOf(dq, max(len(dq.Inputs[0].Dims), 1))
	switch {
	case err != nil:
		return not("%v", err)
	case q.PerChannel:
		return not("its scales are per channel; oneDNN's normalizations take one src scale per tensor, and gdnn fuses that Dequantize only")
	}
	for _, in := range nrm.Inputs[1:] {
		p := g.Producer(in.ID)
		if why := taken.wait(p, dq.String()); why != "" {
			return not("its input %d is produced by %s, %s", in.ID, p, why)
		}
	}
	return nrm, ""
}

// dequantPattern returns the decomposed normalization (pattern.go,
// pattern_norm.go) whose x a Dequantize dq produces, or nil; and, where
// dq feeds one it does not fuse into, why. Every consumer of x must be
// an op of the pattern, which then reads the 8-bit src itself, as a
// normalization op does after a fused Dequantize.
func dequantPattern(g *graph.Graph, dq *graph.Op, taken *sched) (*normPattern, string) {
	if dq.Kind != graph.Dequantize || len(dq.Outputs) != 1 {
		return nil, ""
	}
	x := dq.Outputs[0]
	cons := uniqueOps(g.Consumers(x.ID))
	for _, c := range cons {
		pat := matchPattern(g, c, taken)
		if pat == nil || pat.op.Inputs[0].ID != x.ID {
			continue
		}
		not := func(why string) (*normPattern, string) {
			return nil, fmt.Sprintf("not fused before the %s: %s", pat.name, why)
		}
		for _, c := range cons {
			if !slices.Contains(pat.ops, c) {
				return not(fmt.Sprintf("its output is read by %s, outside the pattern", c))
			}
		}
		q, err := graph.QuantParamsOf(dq, max(len(dq.Inputs[0].Dims), 1))
		switch {
		case err != nil:
			return not(err.Error())
		case q.PerChannel:
			return not("its scales are per channel; gdnn fuses a per-tensor Dequantize before a normalization")
		}
		return pat, ""
	}
	return nil, ""
}

// setDequant makes p, newPartition's group of a Dequantize, its
// normalization and the post-ops, the normalization partition with the
// Dequantize in front.
func (p *Partition) setDequant() {
	p.dq, p.norm, p.post = p.ops[0], p.ops[1], 2
	p.pattern = "Dequantize before " + p.norm.Kind.String()
	p.supported, p.reason = true, ""
}

// dequantOf is p's fused Dequantize as normprog takes it: a per-tensor
// scale and zero point.
func (p *Partition) dequantOf() (*kernelshape.Dequant, error) {
	q, err := graph.QuantParamsOf(p.dq, max(len(p.dq.Inputs[0].Dims), 1))
	if err != nil {
		return nil, err
	}
	if q.PerChannel {
		return nil, status.Errorf(status.Unimplemented, "%s: per-channel scales before a normalization", p.dq)
	}
	return &kernelshape.Dequant{Scale: q.Scales[0], Zero: int32(q.Zps[0])}, nil
}
