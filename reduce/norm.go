package reduce

import (
	"errors"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/normprog"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Float is the element types of normalization data (src, dst, gamma,
// beta): f32 as ~float32, and bf16 or f16 as ~uint16 (their bits), whose
// data type an option names: Type, SrcType and DstType as for the
// reductions, ParamType for gamma and beta.
type Float interface {
	~float32 | ~uint16
}

// ParamType names the data type of ~uint16 gamma and beta slices of a
// normalization: dtypes.BF16 or dtypes.F16 (a ~float32 slice is f32).
func ParamType(dt dtypes.DataType) Option { return Option{what: optParamType, dt: dt} }

// InfAsZero makes Softmax give 0s for a row whose elements are all -Inf
// (a fully masked attention row), where it gives NaN by default: oneDNN
// Graph's SoftMax mode "inf_as_zero".
func InfAsZero(on bool) Option { return Option{what: optInfAsZero, b: on} }

// Stats has LayerNorm and GroupNorm also write each row's mean and
// (biased) variance, in f32: mean and variance hold one value per row,
// dense, in the order of the dims before the normalized ones (LayerNorm)
// or [N, groups] (GroupNorm). Either slice may be nil, for an output that
// is not wanted. The slices are written during the call only.
func Stats(mean, variance []float32) Option {
	return Option{what: optStats, stats: [2][]float32{mean, variance}}
}

// SoftmaxStats has Softmax also write each row's log-sum-exp, m + log(sum
// exp(x - m)) in f32 (oneDNN Graph's SoftMax "stats", which attention's
// backward pass reads): lse holds one value per row, dense, in the order
// of src's dims without the axis. A row of -Inf gives NaN, or 0 with
// InfAsZero. The slice is written during the call only.
func SoftmaxStats(lse []float32) Option {
	return Option{what: optSoftmaxStats, stats: [2][]float32{lse}}
}

// Softmax writes exp(x - m) / sum exp(x - m) over axis to dst, m the
// largest element along it, so that nothing overflows: a row of 1000s
// gives equal shares, and -Inf elements (masked out) give exactly 0. A
// row of -Inf only gives NaN, or 0s with InfAsZero; a NaN gives a row of
// NaN. dims are src's, which dst has too; axis may be negative. Options:
// Type, SrcType and DstType (naming 16-bit slices), SrcStrides,
// DstStrides, InfAsZero and SoftmaxStats. dst may be src itself (in
// place: the same slice, type and strides), and must not otherwise
// overlap it.
//
// The normalizations run as programs of compiled reduction kernels:
// machine code wherever the reductions have it, threads over chunks of
// rows (jit.SetThreads) and results bit-identical for any thread count;
// each call compiles its program and allocates its scratch.
func Softmax[D, S Float](dst []D, src []S, dims []int, axis int, opts ...Option) error {
	return runNorm("Softmax", norm.Softmax, dst, src, []float32(nil), nil, dims, axis, 0, 0, opts)
}

// LogSoftmax writes x - m - log(sum exp(x - m)) over axis to dst, m the
// largest element along it (a -Inf element gives -Inf, a row of -Inf
// only NaN). See Softmax for dims, axis and the options (InfAsZero
// excepted).
func LogSoftmax[D, S Float](dst []D, src []S, dims []int, axis int, opts ...Option) error {
	return runNorm("LogSoftmax", norm.LogSoftmax, dst, src, []float32(nil), nil, dims, axis, 0, 0, opts)
}

// LayerNorm writes (x - mean) / sqrt(variance + eps) * gamma + beta to
// dst, with the mean and the biased variance of each row: the elements of
// src's dims from beginNormAxis (which may be negative) to the last.
// gamma and beta hold one value per element of those dims, dense; either
// may be nil (no scale, no shift), and otherwise must hold exactly that
// many values. eps must be finite and non-negative. Stats also writes the
// rows' means and variances. Options: as Softmax's (InfAsZero
// excepted), ParamType and Stats.
func LayerNorm[D, S, P Float](dst []D, src []S, gamma, beta []P, dims []int, beginNormAxis int, eps float32, opts ...Option) error {
	return runNorm("LayerNorm", norm.LayerNorm, dst, src, gamma, beta, dims, beginNormAxis, 0, eps, opts)
}

// RMSNorm writes x / sqrt(mean(x²) + eps) * gamma to dst, over the rows of
// src's dims from beginNormAxis to the last (see LayerNorm; RMSNorm has
// no beta and no Stats).
func RMSNorm[D, S, P Float](dst []D, src []S, gamma []P, dims []int, beginNormAxis int, eps float32, opts ...Option) error {
	return runNorm("RMSNorm", norm.RMSNorm, dst, src, gamma, nil, dims, beginNormAxis, 0, eps, opts)
}

// GroupNorm writes LayerNorm's formula to dst over each group of
// channels: dim 0 is the batch, chanAxis the channels (1 for NCHW, -1 for
// NHWC; never 0), split into groups consecutive groups (groups must
// divide the channels); a row is one batch element's group of channels
// with every other dim. gamma and beta hold one value per channel (or
// are nil). See LayerNorm for eps and the options.
func GroupNorm[D, S, P Float](dst []D, src []S, gamma, beta []P, dims []int, groups, chanAxis int, eps float32, opts ...Option) error {
	return runNorm("GroupNorm", norm.GroupNorm, dst, src, gamma, beta, dims, chanAxis, groups, eps, opts)
}

// normSettings is a normalization call's options, resolved.
type normSettings struct {
	srcDT, dstDT, paramDT  dtypes.DataType
	srcByType, dstByType   bool
	srcStrides, dstStrides []int
	hasSrcStr, hasDstStr   bool
	infAsZero              bool
	mean, variance         []float32
	hasStats               bool
	lse                    []float32
	hasLSE                 bool
}

func (s *normSettings) apply(fn string, k norm.Kind, opts []Option) error {
	for i := range opts {
		o := &opts[i]
		if o.namesNoType() {
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d names no data type (dtypes.Undef)", fn, i)
		}
		switch o.what {
		case optType:
			s.srcDT, s.dstDT = o.dt, o.dt
			s.srcByType, s.dstByType = true, true
		case optSrcType:
			s.srcDT, s.srcByType = o.dt, false
		case optDstType:
			s.dstDT, s.dstByType = o.dt, false
		case optParamType:
			if k == norm.Softmax || k == norm.LogSoftmax {
				return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: ParamType names gamma and beta; %s has none", fn, i, fn)
			}
			s.paramDT = o.dt
		case optSrcStrides:
			s.srcStrides, s.hasSrcStr = o.ints, true
		case optDstStrides:
			s.dstStrides, s.hasDstStr = o.ints, true
		case optInfAsZero:
			if k != norm.Softmax {
				return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: InfAsZero is Softmax's", fn, i)
			}
			s.infAsZero = o.b
		case optStats:
			if !k.HasStats() {
				return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: Stats is LayerNorm's and GroupNorm's", fn, i)
			}
			s.mean, s.variance, s.hasStats = o.stats[0], o.stats[1], true
		case optSoftmaxStats:
			if k != norm.Softmax {
				return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: SoftmaxStats is Softmax's", fn, i)
			}
			s.lse, s.hasLSE = o.stats[0], true
		case optKeepDims:
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: KeepDims is the reductions'; a normalization's dst has src's dims", fn, i)
		case optPost:
			return status.Errorf(status.Unimplemented, "reduce.%s: option %d: post-ops after a normalization are not implemented", fn, i)
		case optSelectLast:
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d is an index reduction's (SelectLastIndex)", fn, i)
		default:
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d is the zero Option; make options with Type, SrcStrides, ...", fn, i)
		}
	}
	return nil
}

// statsSlices checks Stats' slices against the n rows and returns them,
// a nil one replaced by scratch of n values: the kernels write both. The
// other slice holds at least n values, so the scratch is no larger.
func statsSlices(fn string, mean, variance []float32, n int64) ([]float32, []float32, error) {
	if (mean != nil && int64(len(mean)) < n) || (variance != nil && int64(len(variance)) < n) {
		return nil, nil, status.Errorf(status.InvalidArguments, "reduce.%s: Stats: mean holds %d values and variance %d; there are %d rows",
			fn, len(mean), len(variance), n)
	}
	if mean == nil {
		mean = make([]float32, n)
	}
	if variance == nil {
		variance = make([]float32, n)
	}
	return mean, variance, nil
}

// normType is the data type of a Float slice: f32 for ~float32 (named
// f32 or not at all), bf16 or f16 for ~uint16 as named.
func normType[E Float](fn, what, opt string, named dtypes.DataType) (dtypes.DataType, error) {
	var z E
	if unsafe.Sizeof(z) == 4 {
		if named != dtypes.Undef && named != dtypes.F32 {
			return 0, status.Errorf(status.InvalidDataType, "reduce.%s: %s is a 32-bit float slice but its type is named %v", fn, what, named)
		}
		return dtypes.F32, nil
	}
	switch named {
	case dtypes.BF16, dtypes.F16:
		return named, nil
	case dtypes.Undef:
		return 0, status.Errorf(status.InvalidDataType, "reduce.%s: %s is a 16-bit slice: name its type bf16 or f16 (reduce.%s)", fn, what, opt)
	}
	return 0, status.Errorf(status.InvalidDataType, "reduce.%s: %s is a 16-bit slice but its type is named %v, not bf16 or f16", fn, what, named)
}

// runNorm is every normalization call's path: resolve the options, data
// types and layouts into a norm.Problem, check the slices, and run it.
func runNorm[D, S, P Float](fn string, k norm.Kind, dst []D, src []S, gamma, beta []P, dims []int, axis, groups int, eps float32, opts []Option) error {
	var s normSettings
	if err := s.apply(fn, k, opts); err != nil {
		return err
	}
	// Type names the ~uint16 side: a float32 slice beside one is f32.
	srcNamed, dstNamed := s.srcDT, s.dstDT
	if s.srcByType && !is16[S]() {
		srcNamed = dtypes.Undef
	}
	if s.dstByType && !is16[D]() {
		dstNamed = dtypes.Undef
	}
	srcDT, err := normType[S](fn, "src", "SrcType", srcNamed)
	if err != nil {
		return err
	}
	dstDT, err := normType[D](fn, "dst", "DstType", dstNamed)
	if err != nil {
		return err
	}
	rank := len(dims)
	if rank > norm.MaxRank {
		return status.Errorf(status.InvalidShape, "reduce.%s: %d dims, more than %d", fn, rank, norm.MaxRank)
	}
	var a callInts
	d64 := a.make(rank)
	// Negative dims and more than 2^63 elements are refused here, before
	// the dense strides are derived from dims: past 2^63 those products
	// wrap around, and the executor would blame the wrapped strides.
	if _, err := checkDims(fn, dims, d64); err != nil {
		return err
	}
	// A value, not a pointer: fields set through a pointer would move
	// it and a's slices to the heap.
	p := norm.Problem{Kind: k, Dims: d64, Axis: int64(axis), Groups: int64(groups), Eps: eps, InfAsZero: s.infAsZero}
	if p.Src.Strides, err = stridesOf(&a, fn, "src", s.srcStrides, s.hasSrcStr, d64); err != nil {
		return err
	}
	if p.Dst.Strides, err = stridesOf(&a, fn, "dst", s.dstStrides, s.hasDstStr, d64); err != nil {
		return err
	}
	p.Src.DT, p.Dst.DT = srcDT, dstDT
	buf := norm.Buffers{Src: bytesOf(src), Dst: bytesOf(dst)}
	statRows, lseRows := int64(-1), int64(-1) // the values of mean, variance and lse used
	if ax, ok := norm.AxisIn(p.Axis, rank); ok && (k != norm.GroupNorm || ax != 0) && groups >= 0 {
		if gamma != nil || beta != nil {
			pdims := norm.AppendParamDims(a.make(rank)[:0], k, d64, ax)
			n := elements(pdims)
			paramDT, err := normType[P](fn, "gamma", "ParamType", s.paramDT)
			if err != nil {
				return err
			}
			// Each set by assignment, not through pointers into p and
			// buf, which would make the compiler move both to the heap.
			param := func(name string, v []P) (norm.Operand, []byte, error) {
				if v == nil {
					return norm.Operand{}, nil, nil
				}
				if int64(len(v)) != n {
					return norm.Operand{}, nil, status.Errorf(status.InvalidShape, "reduce.%s: %s holds %d values; src dims %s want %d (%s)",
						fn, name, len(v), ints(dims), n, paramWhat(k, pdims))
				}
				return norm.Operand{DT: paramDT, Strides: a.dense(pdims, 0)}, bytesOf(v), nil
			}
			if p.Gamma, buf.Gamma, err = param("gamma", gamma); err != nil {
				return err
			}
			if p.Beta, buf.Beta, err = param("beta", beta); err != nil {
				return err
			}
		}
		if s.hasStats && (s.mean != nil || s.variance != nil) {
			sdims := norm.AppendStatsDims(a.make(rank)[:0], k, d64, ax, int64(groups))
			n := elements(sdims)
			mean, variance, err := statsSlices(fn, s.mean, s.variance, n)
			if err != nil {
				return err
			}
			statRows = n
			p.Mean = norm.Operand{DT: dtypes.F32, Strides: a.dense(sdims, 0)}
			p.Var = p.Mean
			buf.Mean, buf.Var = bytesOf(mean), bytesOf(variance)
		}
		if s.hasLSE {
			sdims := norm.AppendStatsDims(a.make(rank)[:0], k, d64, ax, 0)
			lseRows = elements(sdims)
			if int64(len(s.lse)) < lseRows {
				return status.Errorf(status.InvalidArguments, "reduce.%s: SoftmaxStats: lse holds %d values; there are %d rows", fn, len(s.lse), lseRows)
			}
			p.Stats = norm.Operand{DT: dtypes.F32, Strides: a.dense(sdims, 0)}
			buf.Stats = bytesOf(s.lse)
		}
	}
	e, err := normprog.Cached(&p)
	if err != nil {
		return inNormCall(fn, err)
	}
	// In place, dst is src itself: the same first element, data type and
	// strides, so that each row is read whole before it is written over.
	// Rows of two layouts are not the same rows, so nothing else written
	// may share memory with anything else.
	// Each compared over its span only: a slice may run on past it.
	inPlace := jit.SameTensor(buf.Dst, buf.Src, dstDT, srcDT, p.Dims, p.Dst.Strides, p.Src.Strides)
	dstV := spanView(buf.Dst, sliceSpan(p.Dims, p.Dst.Strides), dstDT.Size())
	srcV := spanView(buf.Src, sliceSpan(p.Dims, p.Src.Strides), srcDT.Size())
	meanV, varV, lseV := spanView(buf.Mean, statRows, 4), spanView(buf.Var, statRows, 4), spanView(buf.Stats, lseRows, 4)
	named := []struct {
		name string
		b    []byte
	}{{"dst", dstV}, {"mean", meanV}, {"variance", varV}, {"lse", lseV}, {"src", srcV}, {"gamma", buf.Gamma}, {"beta", buf.Beta}}
	for i := range 4 {
		for j := range named {
			if j != i && jit.Overlap(named[i].b, named[j].b) && !(i == 0 && j == 4 && inPlace) {
				return status.Errorf(status.InvalidArguments, "reduce.%s: %s overlaps %s in memory "+
					"(in place, dst must be src itself: the same first element, type and strides)", fn, named[i].name, named[j].name)
			}
		}
	}
	return inNormCall(fn, e.Run(buf, nil, jit.Threads()))
}

// paramWhat says what gamma and beta scale.
func paramWhat(k norm.Kind, pdims []int64) string {
	if k == norm.GroupNorm {
		return "one per channel"
	}
	return "one per element of the normalized dims " + int64s(pdims)
}

// inNormCall names the call in an executor's error, keeping its status.
func inNormCall(fn string, err error) error {
	if err == nil {
		return nil // before e, which errors.As moves to the heap
	}
	var e *status.Error
	if !errors.As(err, &e) {
		return err
	}
	return status.Errorf(e.Status, "reduce.%s: %s", fn, e.Msg)
}

// stridesOf is a tensor's strides, from a: the option's (one per dim,
// in elements), or dense row-major.
func stridesOf(a *callInts, fn, what string, given []int, has bool, dims []int64) ([]int64, error) {
	if !has {
		return a.dense(dims, 0), nil
	}
	if len(given) != len(dims) {
		return nil, status.Errorf(status.InvalidShape, "reduce.%s: %d %s strides for %d dims", fn, len(given), what, len(dims))
	}
	out := a.make(len(given))
	for i, s := range given {
		out[i] = int64(s)
	}
	return out, nil
}

func normDense(dims []int64) []int64 { return denseStridesInto(make([]int64, len(dims)), dims) }

// denseStridesInto writes the dense row-major strides of dims to the
// start of s and returns s.
func denseStridesInto(s, dims []int64) []int64 {
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= max(dims[i], 1)
	}
	return s
}

// elements is the number of elements of dims: 0 if a dim is 0, else
// their product, or math.MaxInt64 where that overflows, so that no count
// of rows or parameters wraps past a length check (dims with a 0 pass
// checkDims whatever their other dims).
func elements(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		if d == 0 {
			return 0
		}
		n = plan.MulSat(n, d)
	}
	return n
}
