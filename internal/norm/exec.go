package norm

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// MaxRank bounds a problem's rank (graph.MaxRank, which this package
// cannot import).
const MaxRank = 12

// Operand is one tensor of a problem: its data type (dtypes.Undef when
// the problem has no such tensor) and its strides in elements, one per
// dim of the tensor's own dims (Problem.Dims for src and dst, ParamDims
// for gamma and beta, StatsDims for mean, variance and stats).
type Operand struct {
	DT      dtypes.DataType
	Strides []int64
}

// Present reports whether the problem has the operand.
func (o Operand) Present() bool { return o.DT != dtypes.Undef }

// Problem is one normalization over concrete tensors.
type Problem struct {
	Kind Kind
	Dims []int64
	// Axis is the softmax axis, LayerNorm's and RMSNorm's begin_norm_axis,
	// or GroupNorm's channel dim (never dim 0, the batch), each counted
	// from the end when negative.
	Axis      int64
	Groups    int64   // GroupNorm's groups, which must divide the channels
	Eps       float32 // LayerNorm, RMSNorm, GroupNorm
	InfAsZero bool    // SoftMax: a row of -Inf gives 0s, not NaN

	Src, Dst    Operand
	Gamma, Beta Operand // per element of ParamDims; absent: 1 and 0
	Mean, Var   Operand // per element of StatsDims; both or neither
	// Stats is SoftMax's optional output (oneDNN Graph's "stats"): per
	// element of StatsDims, the row's max + log(sum exp(x - max)).
	Stats Operand
}

// Clone is a copy of p that shares no memory with it. (Field by field:
// a copy of *p whose slices were then replaced would, to the compiler's
// escape analysis, keep p's.)
func (p *Problem) Clone() *Problem {
	op := func(o Operand) Operand { return Operand{DT: o.DT, Strides: slices.Clone(o.Strides)} }
	return &Problem{Kind: p.Kind, Dims: slices.Clone(p.Dims), Axis: p.Axis, Groups: p.Groups, Eps: p.Eps, InfAsZero: p.InfAsZero,
		Src: op(p.Src), Dst: op(p.Dst), Gamma: op(p.Gamma), Beta: op(p.Beta), Mean: op(p.Mean), Var: op(p.Var), Stats: op(p.Stats)}
}

// ParamDims returns the dims of gamma and beta: the normalized dims for
// LayerNorm and RMSNorm, the channels for GroupNorm, none for the
// softmaxes. The axis must be in range.
func ParamDims(k Kind, dims []int64, axis int) []int64 { return AppendParamDims(nil, k, dims, axis) }

// AppendParamDims appends ParamDims to b.
func AppendParamDims(b []int64, k Kind, dims []int64, axis int) []int64 {
	switch k {
	case LayerNorm, RMSNorm:
		return append(b, dims[axis:]...)
	case GroupNorm:
		return append(b, dims[axis])
	}
	return b
}

// StatsDims returns the dims of the statistics outputs: the dims before
// the normalized ones for LayerNorm's mean and variance, [N, groups] for
// GroupNorm's, src's dims with the axis 1 for SoftMax's stats, none for
// the other kinds.
func StatsDims(k Kind, dims []int64, axis int, groups int64) []int64 {
	if k != LayerNorm && k != GroupNorm && k != Softmax {
		return nil
	}
	return AppendStatsDims([]int64{}, k, dims, axis, groups) // LayerNorm's over axis 0: empty, not nil

}

// AppendStatsDims appends StatsDims to b.
func AppendStatsDims(b []int64, k Kind, dims []int64, axis int, groups int64) []int64 {
	switch k {
	case LayerNorm:
		return append(b, dims[:axis]...)
	case GroupNorm:
		return append(b, dims[0], groups)
	case Softmax:
		b = append(b, dims...)
		b[len(b)-len(dims)+axis] = 1
	}
	return b
}

// Operand indexes into a vdim's strides and a row's offsets.
const (
	oSrc = iota
	oDst
	oGamma
	oBeta
	oMean
	oVar
	oStats
	nOperands
)

// vdim is one dim of the problem as the executor walks it: GroupNorm's
// channel dim is two (the group, outer, and the channel within it,
// inner). inner dims make up a row; outer ones enumerate rows.
type vdim struct {
	n int64
	s [nOperands]int64
}

// Exec runs one Problem. It is immutable and safe for concurrent Runs.
type Exec struct {
	p            Problem
	outer, inner []vdim
	rows, rowLen int64
	need         [nOperands]int64 // bytes each buffer must hold
}

// Buffers are a Run's tensors, little-endian elements of each operand's
// data type; those the problem does not have are ignored.
type Buffers struct {
	Src, Dst, Gamma, Beta, Mean, Var, Stats []byte
}

// New checks p and prepares its execution. Every problem without a
// meaning is an error (never a panic), with a status and a message that
// names the value; callers prefix it with the op.
func New(p *Problem) (*Exec, error) {
	if p == nil || p.Kind < Softmax || p.Kind > GroupNorm {
		return nil, status.Errorf(status.InvalidArguments, "unknown normalization kind")
	}
	k := p.Kind
	rank := len(p.Dims)
	if rank > MaxRank {
		return nil, status.Errorf(status.InvalidShape, "rank %d is more than %d", rank, MaxRank)
	}
	for i, d := range p.Dims {
		if d < 0 {
			return nil, status.Errorf(status.InvalidShape, "dim %d is %d (negative)", i, d)
		}
	}
	axis, ok := AxisIn(p.Axis, rank)
	what := map[Kind]string{Softmax: "axis", LogSoftmax: "axis", LayerNorm: "begin_norm_axis", RMSNorm: "begin_norm_axis", GroupNorm: "channel axis"}[k]
	if !ok {
		return nil, status.Errorf(status.InvalidArguments, "%s %d is out of range [%d, %d] for src of rank %d", what, p.Axis, -rank, rank-1, rank)
	}
	if k == GroupNorm {
		if axis == 0 {
			return nil, status.Errorf(status.InvalidArguments, "the channel axis is dim 0, the batch; the channels must be another dim")
		}
		if msg := GroupsProblem(p.Groups, p.Dims[axis]); msg != "" {
			return nil, status.Errorf(status.InvalidArguments, "%s", msg)
		}
	}
	if k.HasEpsilon() {
		if msg := EpsilonProblem(p.Eps); msg != "" {
			return nil, status.Errorf(status.InvalidArguments, "%s", msg)
		}
	}
	if err := checkTypes(p); err != nil {
		return nil, err
	}
	paramDims := ParamDims(k, p.Dims, axis)
	statsDims := StatsDims(k, p.Dims, axis, p.Groups)
	ops := [nOperands]struct {
		name string
		o    Operand
		dims []int64
	}{
		{"src", p.Src, p.Dims}, {"dst", p.Dst, p.Dims}, {"gamma", p.Gamma, paramDims},
		{"beta", p.Beta, paramDims}, {"mean", p.Mean, statsDims}, {"variance", p.Var, statsDims},
		{"stats", p.Stats, statsDims},
	}
	for _, op := range ops {
		if !op.o.Present() {
			continue
		}
		if len(op.o.Strides) != len(op.dims) {
			return nil, status.Errorf(status.InvalidShape, "%s has %d strides for its %d dims", op.name, len(op.o.Strides), len(op.dims))
		}
		for i, s := range op.o.Strides {
			if s < 0 {
				return nil, status.Errorf(status.InvalidShape, "%s stride %d is %d (negative)", op.name, i, s)
			}
		}
	}
	for _, i := range []int{oDst, oMean, oVar, oStats} {
		if ops[i].o.Present() && plan.SelfOverlaps(ops[i].dims, ops[i].o.Strides) {
			return nil, status.Errorf(status.InvalidArguments, "%s strides %v %s", ops[i].name, ops[i].o.Strides, plan.NestRule)
		}
	}
	e := &Exec{p: *p, rows: 1, rowLen: 1}
	e.p.Dims = append([]int64(nil), p.Dims...)
	// The virtual dims: each src dim, its strides in every operand that
	// runs along it (0 in those that do not), outer or inner.
	for d := range rank {
		var v vdim
		v.n = p.Dims[d]
		v.s[oSrc], v.s[oDst] = p.Src.Strides[d], p.Dst.Strides[d]
		inner := false
		switch k {
		case Softmax, LogSoftmax:
			inner = d == axis
			if !inner {
				v.s[oStats] = strideOf(p.Stats, d)
			}
		case LayerNorm, RMSNorm:
			inner = d >= axis
			if inner {
				v.s[oGamma], v.s[oBeta] = strideOf(p.Gamma, d-axis), strideOf(p.Beta, d-axis)
			} else {
				v.s[oMean], v.s[oVar] = strideOf(p.Mean, d), strideOf(p.Var, d)
			}
		case GroupNorm:
			switch d {
			case 0:
				v.s[oMean], v.s[oVar] = strideOf(p.Mean, 0), strideOf(p.Var, 0)
			case axis:
				// Channel c = g*cg + i: the group is an outer dim, the
				// channel within it an inner one.
				cg := v.n / p.Groups
				g := vdim{n: p.Groups}
				for _, o := range []int{oSrc, oDst} {
					g.s[o] = v.s[o] * cg
				}
				g.s[oGamma], g.s[oBeta] = strideOf(p.Gamma, 0)*cg, strideOf(p.Beta, 0)*cg
				g.s[oMean], g.s[oVar] = strideOf(p.Mean, 1), strideOf(p.Var, 1)
				e.outer = append(e.outer, g)
				v.n = cg
				v.s[oGamma], v.s[oBeta] = strideOf(p.Gamma, 0), strideOf(p.Beta, 0)
				inner = true
			default:
				inner = true
			}
		}
		if inner {
			e.inner = append(e.inner, v)
		} else {
			e.outer = append(e.outer, v)
		}
	}
	for _, v := range e.outer {
		e.rows = plan.MulSat(e.rows, v.n)
	}
	for _, v := range e.inner {
		e.rowLen = plan.MulSat(e.rowLen, v.n)
	}
	// Rows of no elements, or no rows, hold nothing however many of the
	// other there are (the statistics of empty rows are checked below).
	if plan.MulSat(e.rows, e.rowLen) == math.MaxInt64 {
		return nil, status.Errorf(status.InvalidShape, "dims %v hold more than 2^63 elements", p.Dims)
	}
	if e.rows > 0 && e.rowLen > 0 {
		for i, op := range ops {
			if !op.o.Present() {
				continue
			}
			sp := int64(1)
			for j, d := range op.dims {
				sp += plan.MulSat(d-1, op.o.Strides[j])
				if sp < 0 || sp == math.MaxInt64 {
					return nil, status.Errorf(status.InvalidShape, "%s dims %v with strides %v address more than 2^63 elements", op.name, op.dims, op.o.Strides)
				}
			}
			e.need[i] = plan.MulSat(sp, int64(op.o.DT.Size()))
		}
	} else if len(statsDims) > 0 && e.rows > 0 {
		// Rows of no elements still have statistics (0, as oneDNN).
		for _, i := range []int{oMean, oVar, oStats} {
			if !ops[i].o.Present() {
				continue
			}
			sp := int64(1)
			for j, d := range ops[i].dims {
				sp += plan.MulSat(d-1, ops[i].o.Strides[j])
				if sp < 0 || sp == math.MaxInt64 {
					return nil, status.Errorf(status.InvalidShape, "%s dims %v with strides %v address more than 2^63 elements", ops[i].name, ops[i].dims, ops[i].o.Strides)
				}
			}
			e.need[i] = plan.MulSat(sp, 4)
		}
	}
	return e, nil
}

// GroupsProblem says why groups cannot split c channels, or "".
func GroupsProblem(groups, c int64) string {
	switch {
	case groups < 1:
		return "groups is " + itoa(groups) + "; want at least 1"
	case c >= 0 && c%groups != 0:
		return "groups " + itoa(groups) + " does not divide the " + itoa(c) + " channels"
	}
	return ""
}

func itoa(v int64) string {
	return string(appendInt(nil, v))
}

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		if v == math.MinInt64 {
			return append(b, "9223372036854775808"...)
		}
		v = -v
	}
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

func strideOf(o Operand, i int) int64 {
	if !o.Present() || i >= len(o.Strides) {
		return 0
	}
	return o.Strides[i]
}

// checkTypes checks which operands the kind has and their data types.
func checkTypes(p *Problem) error {
	for _, c := range []struct {
		name string
		dt   dtypes.DataType
	}{{"src", p.Src.DT}, {"dst", p.Dst.DT}} {
		if !c.dt.IsFloat() {
			return status.Errorf(status.InvalidDataType, "%s is %v, want f32, bf16 or f16", c.name, c.dt)
		}
	}
	k := p.Kind
	for _, c := range []struct {
		name   string
		o      Operand
		allow  bool
		wantDT string
		ok     func(dtypes.DataType) bool
	}{
		{"gamma", p.Gamma, k.HasEpsilon(), "f32, bf16 or f16", dtypes.DataType.IsFloat},
		{"beta", p.Beta, k == LayerNorm || k == GroupNorm, "f32, bf16 or f16", dtypes.DataType.IsFloat},
		{"mean", p.Mean, k.HasStats(), "f32", func(dt dtypes.DataType) bool { return dt == dtypes.F32 }},
		{"variance", p.Var, k.HasStats(), "f32", func(dt dtypes.DataType) bool { return dt == dtypes.F32 }},
		{"stats", p.Stats, k == Softmax, "f32", func(dt dtypes.DataType) bool { return dt == dtypes.F32 }},
	} {
		switch {
		case !c.o.Present():
		case !c.allow:
			return status.Errorf(status.InvalidArguments, "%v has no %s", k, c.name)
		case !c.ok(c.o.DT):
			return status.Errorf(status.InvalidDataType, "%s is %v, want %s", c.name, c.o.DT, c.wantDT)
		}
	}
	if p.Mean.Present() != p.Var.Present() {
		return status.Errorf(status.InvalidArguments, "mean and variance are written together: give both or neither")
	}
	return nil
}

// Rows returns the number of rows and the elements of each.
func (e *Exec) Rows() (rows, rowLen int64) { return e.rows, e.rowLen }

// minParallel is the elements below which a Run stays on the caller:
// starting goroutines costs more than the work.
const minParallel = 1 << 15

// Run computes the problem on b, with up to threads goroutines (the
// caller among them) over contiguous blocks of rows. Each row is
// computed alone, in one order, so the results do not depend on threads.
// A buffer shorter than the span its strides address is an error and
// nothing is written.
func (e *Exec) Run(b Buffers, threads int) error {
	if err := e.Check(b); err != nil {
		return err
	}
	bufs := [nOperands][]byte{b.Src, b.Dst, b.Gamma, b.Beta, b.Mean, b.Var, b.Stats}
	if e.rows == 0 || e.rowLen == 0 && !e.p.Mean.Present() && !e.p.Var.Present() && !e.p.Stats.Present() {
		// Rows of no element write nothing but their statistics: with
		// none kept, the call is done whatever the count of rows, which
		// the empty dim leaves unbounded by any buffer.
		return nil
	}
	workers := int64(max(threads, 1))
	if plan.MulSat(e.rows, max(e.rowLen, 1)) < minParallel {
		workers = 1
	}
	workers = min(workers, e.rows)
	if workers == 1 {
		e.runRows(0, e.rows, &bufs)
		return nil
	}
	var wg sync.WaitGroup
	for w := int64(1); w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.runRows(e.rows*w/workers, e.rows*(w+1)/workers, &bufs)
		}()
	}
	e.runRows(0, e.rows/workers, &bufs)
	wg.Wait()
	return nil
}

// Check refuses buffers shorter than the spans the problem addresses,
// as Run does first; other executors of the same problem call it too, so
// that every one refuses in the same words.
func (e *Exec) Check(b Buffers) error {
	bufs := [nOperands][]byte{b.Src, b.Dst, b.Gamma, b.Beta, b.Mean, b.Var, b.Stats}
	names := [nOperands]string{"src", "dst", "gamma", "beta", "mean", "variance", "stats"}
	for i, buf := range bufs {
		if int64(len(buf)) < e.need[i] {
			return status.Errorf(status.InvalidArguments, "%s holds %d bytes; its dims and strides address %d", names[i], len(buf), e.need[i])
		}
	}
	return nil
}

// runRows computes rows [lo, hi).
func (e *Exec) runRows(lo, hi int64, b *[nOperands][]byte) {
	p := &e.p
	x := make([]float64, e.rowLen)
	var g, bt []float64
	lastG, lastB := int64(-1), int64(-1)
	if p.Gamma.Present() {
		g = make([]float64, e.rowLen)
	}
	if p.Beta.Present() {
		bt = make([]float64, e.rowLen)
	}
	eps := float64(p.Eps)
	for r := lo; r < hi; r++ {
		base := e.rowBase(r)
		e.gather(oSrc, b[oSrc], p.Src.DT, base[oSrc], x)
		// gamma and beta are read once per place: a LayerNorm's are the
		// same for every row, a GroupNorm's for every row of a group.
		if g != nil && base[oGamma] != lastG {
			e.gather(oGamma, b[oGamma], p.Gamma.DT, base[oGamma], g)
			lastG = base[oGamma]
		}
		if bt != nil && base[oBeta] != lastB {
			e.gather(oBeta, b[oBeta], p.Beta.DT, base[oBeta], bt)
			lastB = base[oBeta]
		}
		var mean, variance, lse float64
		switch p.Kind {
		case Softmax:
			lse = softmax(x, p.InfAsZero)
		case LogSoftmax:
			logSoftmax(x)
		case LayerNorm, GroupNorm:
			mean, variance = meanVar(x)
			d := math.Sqrt(variance + eps)
			for i, v := range x {
				x[i] = (v - mean) / d
			}
			affine(x, g, bt)
		case RMSNorm:
			ms := 0.0
			for _, v := range x {
				ms += v * v
			}
			d := math.Sqrt(ms/float64(len(x)) + eps)
			for i, v := range x {
				x[i] = v / d
			}
			affine(x, g, nil)
		}
		e.scatter(b[oDst], p.Dst.DT, base[oDst], x)
		if p.Mean.Present() {
			binary.LittleEndian.PutUint32(b[oMean][4*base[oMean]:], math.Float32bits(float32(mean)))
			binary.LittleEndian.PutUint32(b[oVar][4*base[oVar]:], math.Float32bits(float32(variance)))
		}
		if p.Stats.Present() {
			binary.LittleEndian.PutUint32(b[oStats][4*base[oStats]:], math.Float32bits(float32(lse)))
		}
	}
}

// rowBase returns the offset of row r's first element in each operand.
func (e *Exec) rowBase(r int64) [nOperands]int64 {
	var base [nOperands]int64
	for k := len(e.outer) - 1; k >= 0; k-- {
		v := &e.outer[k]
		i := r % v.n
		r /= v.n
		for o := range base {
			base[o] += i * v.s[o]
		}
	}
	return base
}

// lines calls f for each run of the row's innermost dim, in the row's
// order (its dims as the tensor lists them, the last fastest): j is the
// run's first index in the row, off its first element in operand o, then
// o's stride along the run and the run's length.
func (e *Exec) lines(o int, base int64, f func(j, off, stride, n int64)) {
	in := e.inner
	if e.rowLen == 0 {
		return
	}
	if len(in) == 0 {
		f(0, base, 0, 1)
		return
	}
	last := in[len(in)-1]
	var idx [MaxRank + 1]int64
	off, j := base, int64(0)
	for {
		f(j, off, last.s[o], last.n)
		j += last.n
		k := len(in) - 2
		for ; k >= 0; k-- {
			idx[k]++
			off += in[k].s[o]
			if idx[k] < in[k].n {
				break
			}
			off -= in[k].s[o] * in[k].n
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// gather reads the row at base of operand o into x, widened exactly.
func (e *Exec) gather(o int, b []byte, dt dtypes.DataType, base int64, x []float64) {
	e.lines(o, base, func(j, off, stride, n int64) {
		out := x[j : j+n]
		switch dt {
		case dtypes.F32:
			for i := range out {
				out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*(off+int64(i)*stride):])))
			}
		case dtypes.BF16:
			for i := range out {
				out[i] = float64(dtypes.BF16ToF32(binary.LittleEndian.Uint16(b[2*(off+int64(i)*stride):])))
			}
		default:
			for i := range out {
				out[i] = float64(dtypes.F16ToF32(binary.LittleEndian.Uint16(b[2*(off+int64(i)*stride):])))
			}
		}
	})
}

// scatter writes the row y to dst at base, each value rounded to f32 and
// then to dt (ties to even, as dtypes.StoreF32).
func (e *Exec) scatter(b []byte, dt dtypes.DataType, base int64, y []float64) {
	e.lines(oDst, base, func(j, off, stride, n int64) {
		in := y[j : j+n]
		switch dt {
		case dtypes.F32:
			for i, v := range in {
				binary.LittleEndian.PutUint32(b[4*(off+int64(i)*stride):], math.Float32bits(float32(v)))
			}
		case dtypes.BF16:
			for i, v := range in {
				binary.LittleEndian.PutUint16(b[2*(off+int64(i)*stride):], dtypes.F32ToBF16(float32(v)))
			}
		default:
			for i, v := range in {
				binary.LittleEndian.PutUint16(b[2*(off+int64(i)*stride):], dtypes.F32ToF16(float32(v)))
			}
		}
	})
}

// rowMax is the largest element, NaN if any is, -Inf for an empty row.
func rowMax(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		switch {
		case v != v:
			return v
		case v > m:
			m = v
		}
	}
	return m
}

// softmax maps the row x to exp(x - m) / sum exp(x - m), m its largest
// element, so nothing overflows; -Inf elements give exactly 0. A row of
// -Inf only has no finite sum: NaN, or 0 with infAsZero. It returns the
// row's stats, m + log(sum exp(x - m)): NaN for a row of -Inf (as its
// dst), 0 with infAsZero and for an empty row (as oneDNN's).
func softmax(x []float64, infAsZero bool) (stats float64) {
	if len(x) == 0 {
		return 0
	}
	m := rowMax(x)
	if math.IsInf(m, -1) {
		fill := math.NaN()
		if infAsZero {
			fill = 0
		}
		for i := range x {
			x[i] = fill
		}
		return fill
	}
	s := 0.0
	for i, v := range x {
		x[i] = math.Exp(v - m)
		s += x[i]
	}
	for i, v := range x {
		x[i] = v / s
	}
	return m + math.Log(s)
}

// logSoftmax maps the row x to x - m - log(sum exp(x - m)).
func logSoftmax(x []float64) {
	m := rowMax(x)
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	ls := math.Log(s)
	for i, v := range x {
		x[i] = v - m - ls
	}
}

// meanVar returns the row's mean and its biased variance, computed in two
// passes (the mean, then the squares of the distances to it), so that a
// large mean does not cancel the variance away as E[x²] - E[x]² would.
// An empty row gives 0 for both, as oneDNN does (benchdnn checks it),
// not 0/0.
func meanVar(x []float64) (mean, variance float64) {
	if len(x) == 0 {
		return 0, 0
	}
	n := float64(len(x))
	s := 0.0
	for _, v := range x {
		s += v
	}
	mean = s / n
	q := 0.0
	for _, v := range x {
		d := v - mean
		q += d * d
	}
	return mean, q / n
}

// affine applies y*gamma + beta, each where given.
func affine(y, g, b []float64) {
	if g != nil {
		for i := range y {
			y[i] *= g[i]
		}
	}
	if b != nil {
		for i := range y {
			y[i] += b[i]
		}
	}
}
