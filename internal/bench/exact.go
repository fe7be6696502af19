package bench

import (
	"bytes"
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// Integer and boolean data wider than 8 bits (gdnn extensions) are
// reduced exactly, and checked so: the reference is the exact oracle
// (internal/oracle's ReduceExact, on mathematical integers), and every
// output must hold its bytes. The exact fill puts each type's extremes
// and their neighbours among small values, so sums and products wrap
// around; the random fill draws small values of both signs.

// exactCase reports whether c reduces exactly, and its reduction.
func exactCase(c redCase) (plan.Reduction, bool) {
	r, ok := exactReduction(c.alg)
	return r, ok && plan.IsExact(c.sdt, r)
}

// fillExactSrc fills src (the whole buffer, padding too) with elements of
// its type: in the exact mode a fifth are the type's extremes or their
// neighbours, the rest in [-8, 8] (unsigned: [0, 8]).
func fillExactSrc(b buffer, mode fillMode, seed uint64) {
	raw, dt := b.bytes(), b.dt
	sz := dt.Size()
	top := uint64(1)<<(8*sz-1) - 1
	if !dt.IsSigned() {
		top = top<<1 | 1
	}
	for i := 0; i*sz < len(raw); i++ {
		x := splitmix64(seed + uint64(i))
		var u uint64
		switch {
		case dt == dtypes.Boolean:
			u = x & 1
		case mode == fillExact && x%10 == 0:
			u = top - x>>8&1 // the largest value or the one below
		case mode == fillExact && x%10 == 1 && dt.IsSigned():
			u = top + 1 + x>>8&1 // the least value or the one above
		case dt.IsSigned():
			u = uint64(int64(x>>8%17) - 8)
		default:
			u = x >> 8 % 9
		}
		for k := range sz {
			raw[i*sz+k] = byte(u >> (8 * k))
		}
	}
}

// checkExact fills src as mode says, executes, and compares every output
// with the exact oracle's bytes.
func (r *runner) checkExact(b *built, c redCase, red plan.Reduction, mode fillMode, seed uint64, exec func(int) error) *result {
	fillExactSrc(b.src, mode, seed)
	if err := exec(0); err != nil {
		return &result{state: stateOf(err), reason: reasonOf(err)}
	}
	// A graph's reduction without keep_dims has a dst of lower rank: the
	// oracle walks the keep-dims dst, whose reduced axes have size 1.
	p := &plan.Problem{Reduction: red, SrcDT: c.sdt, DstDT: c.ddt, Dims: b.srcLT.Dims, SrcStrides: b.srcLT.Strides,
		Reduce: b.reduced, DstStrides: keepDimsView(b.outLT.Strides, b.reduced)}
	outs := oracle.ReduceExact(p, b.src.bytes())
	got, sz := b.outs[0].bytes(), int64(c.ddt.Size())
	var lines []string
	bad := 0
	for _, o := range outs {
		if g := got[o.Dst*sz : (o.Dst+1)*sz]; !bytes.Equal(g, o.Want) {
			if bad++; bad <= 10 {
				lines = append(lines, fmt.Sprintf("[%6d][DST] exp: % x got: % x", o.Dst, o.Want, g))
			}
		}
	}
	if r.g.verbose >= 1 {
		fmt.Fprintf(r.out, "[%s fill] outputs:%d exact errors:%d\n", fillName(mode), len(outs), bad)
	}
	if bad > 0 {
		return &result{state: "FAILED", reason: fmt.Sprintf("%s fill: errors:%d total:%d", fillName(mode), bad, len(outs)), detail: lines}
	}
	return nil
}
