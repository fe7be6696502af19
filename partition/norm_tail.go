package partition

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// After a normalization's post-op chain, as in oneDNN Graph's softmax,
// layer norm and group norm patterns, a TypeCast between float types
// (f32, bf16, f16), the post-ops after it, and last a per-tensor
// Quantize to s8 or u8 join the partition. The chain computes in f32
// throughout: a TypeCast is no step of the program (its rounding to a
// 16-bit type is not done mid-way, the result is rounded once, to the
// partition's output type), and the Quantize is the post-ops
// Divide(scale) and Add(zero point) with constants the compiled
// partition holds, then the rounding to nearest even and saturation of
// the s8 or u8 output.

// normTail extends a normalization's chain (the normalization op, or the
// op a pattern computes, then its post-ops) with the TypeCasts, post-ops
// and Quantize after it, and records in notFused why an op right after
// it did not join.
func normTail(g *graph.Graph, chain []*graph.Op, taken *sched, notFused map[uint64]string) []*graph.Op {
	head := chain[0]
	for {
		last := chain[len(chain)-1]
		tc := onlyConsumer(g, last.Outputs[0].ID)
		if tc == nil || tc.Kind != graph.TypeCast || taken.has(tc) || len(tc.Outputs) != 1 {
			break
		}
		if in, out := tc.Inputs[0].DataType, tc.Outputs[0].DataType; !in.IsFloat() || !out.IsFloat() {
			notFused[tc.ID] = fmt.Sprintf("not fused after %s: a TypeCast from %s to %s (a fused chain casts between f32, bf16 and f16)", head, in, out)
			break
		}
		more, stop, why := fuseChain(g, tc, taken)
		for _, s := range stop {
			notFused[s.ID] = why
		}
		more, cut, why := normChain(more)
		if cut != nil {
			notFused[cut.ID] = why
		}
		if len(chain)+len(more) > maxPostOps+1 {
			notFused[tc.ID] = fmt.Sprintf("not fused after %s: the chain would hold more than %d post-ops", head, maxPostOps)
			break
		}
		chain = append(chain, more...)
	}
	q := quantizeTail(g, chain[len(chain)-1])
	if q == nil || taken.has(q) {
		return chain
	}
	if why := normQuantizeProblem(q); why != "" {
		notFused[q.ID] = fmt.Sprintf("not fused after %s: %s", head, why)
		return chain
	}
	return append(chain, q)
}

// normQuantizeProblem says why a Quantize does not fuse after a
// normalization's chain, or "".
func normQuantizeProblem(q *graph.Op) string {
	in := q.Inputs[0]
	p, err := graph.QuantParamsOf(q, max(len(in.Dims), 1))
	switch {
	case err != nil:
		return err.Error()
	case p.PerChannel:
		return "its scales are per channel; after a normalization gdnn fuses a per-tensor Quantize"
	case in.DataType != dtypes.F32:
		return fmt.Sprintf("its input is %s, and a Quantize takes f32", in.DataType)
	}
	return ""
}

// tailPostOps lowers the ops after a normalization (post-ops, TypeCasts
// and a final Quantize) to post-ops: binary operands from input ports
// (ports[i] >= 0) or, for the Quantize's scale and zero point,
// constants (ports[i] = -1 - their index in consts), cur the tensor the
// first op reads.
func (p *Partition) tailPostOps(tail []*graph.Op, cur uint64) (post []plan.PostOp, ports []int, consts [][]byte, err error) {
	start := 0
	flush := func(end int) error {
		po, pp, err := p.chainPostOps(tail[start:end], cur)
		post, ports = append(post, po...), append(ports, pp...)
		return err
	}
	for i, op := range tail {
		switch op.Kind {
		case graph.TypeCast:
			if err := flush(i); err != nil {
				return nil, nil, nil, err
			}
			start, cur = i+1, op.Outputs[0].ID
		case graph.Quantize:
			if err := flush(i); err != nil {
				return nil, nil, nil, err
			}
			start = len(tail)
			if why := normQuantizeProblem(op); why != "" {
				return nil, nil, nil, status.Errorf(status.Unimplemented, "%s: %s", op, why)
			}
			q, _ := graph.QuantParamsOf(op, max(len(op.Inputs[0].Dims), 1))
			for _, c := range []struct {
				kind ops.Kind
				v    float32
				id   float32
			}{{ops.Divide, q.Scales[0], 1}, {ops.Add, float32(q.Zps[0]), 0}} {
				if c.v == c.id {
					continue
				}
				consts = append(consts, bytesOf([]float32{c.v}))
				post = append(post, plan.PostOp{Kind: c.kind, BinDT: dtypes.F32})
				ports = append(ports, -len(consts))
			}
		}
	}
	if err := flush(len(tail)); err != nil {
		return nil, nil, nil, err
	}
	return post, ports, consts, nil
}

// floatDst is the type of a normalization's result before a fused
// Quantize to dt (f32), or dt where none is fused.
func floatDst(dt dtypes.DataType) dtypes.DataType {
	if dt.IsInt8() {
		return dtypes.F32
	}
	return dt
}
