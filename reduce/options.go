package reduce

import (
	"fmt"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/status"
)

// Option changes one setting of a call. Options are plain values (no
// closures), so passing them allocates nothing; a zero Option is an error.
// A later option overrides an earlier one of the same setting, except
// that post-ops add up.
type Option struct {
	what  optKind
	b     bool
	dt    dtypes.DataType
	ints  []int
	post  postKey
	stats [2][]float32
}

type optKind uint8

const (
	optKeepDims optKind = iota + 1
	optType
	optSrcType
	optDstType
	optSrcStrides
	optDstStrides
	optPost
	optParamType
	optInfAsZero
	optStats
	optSoftmaxStats
)

// MaxPostOps is how many post-ops (Post) one call may carry.
const MaxPostOps = 4

// KeepDims keeps the reduced dims in dst, with size 1 (default false, as
// oneDNN Graph; ONNX nodes take keepdims from the node).
func KeepDims(keep bool) Option { return Option{what: optKeepDims, b: keep} }

// Type names the data type of whichever of src and dst are ~uint16
// slices: dtypes.BF16 or dtypes.F16. A ~float32 slice is always f32, a
// ~float64 slice f64, and an integer slice its Go type's: Type leaves
// them alone, whether or not the call has a ~uint16 slice (SrcType and
// DstType, which name one slice, must name its own type).
func Type(dt dtypes.DataType) Option { return Option{what: optType, dt: dt} }

// SrcType names src's data type (bf16 or f16 for a ~uint16 slice).
func SrcType(dt dtypes.DataType) Option { return Option{what: optSrcType, dt: dt} }

// DstType names dst's data type (bf16 or f16 for a ~uint16 slice; it
// must then be src's type).
func DstType(dt dtypes.DataType) Option { return Option{what: optDstType, dt: dt} }

// SrcStrides gives src's strides in elements, one per src dim (default:
// dense row-major). The slice is read during the call only.
func SrcStrides(strides []int) Option { return Option{what: optSrcStrides, ints: strides} }

// DstStrides gives dst's strides in elements, one per dst dim: the kept
// dims, or every dim under keep_dims (default: dense row-major). The
// layout must nest, as row-major and permuted layouts do, padded or not:
// ordered by stride, each dim's stride at least the extent (size times
// stride) of those with smaller strides. Other strides are an error,
// even where no two outputs would share an element.
func DstStrides(strides []int) Option { return Option{what: optDstStrides, ints: strides} }

// Post applies the unary eltwise op kind to each result before it is
// rounded to dst's type, with kind's parameters alpha and beta (see
// PostKind; kinds without parameters ignore them). Post-ops apply in the
// order given, after the reduction (after the log of LogSum). Binary
// post-ops (an operand tensor) are offered by the graph API only.
// Parameters that leave the op without a meaning are refused with
// InvalidArguments, as the graph API refuses them: a NaN parameter the
// kind uses, Clamp with alpha above beta, SoftPlus with beta 0 or
// infinite.
func Post(kind PostKind, alpha, beta float32) Option {
	return Option{what: optPost, post: postKey{kind: int32(kind), alpha: math.Float32bits(alpha), beta: math.Float32bits(beta)}}
}

// PostKind names a unary post-op: oneDNN Graph's eltwise ops that fuse
// with a reduction, with their parameters.
type PostKind uint8

const (
	PostAbs         PostKind = iota + 1 // |x|
	PostClamp                           // min(max(x, alpha), beta)
	PostElu                             // x > 0 ? x : alpha*(exp(x)-1)
	PostExp                             // exp(x)
	PostGELU                            // x/2 * (1 + erf(x/sqrt 2))
	PostGELUTanh                        // GELU's tanh approximation
	PostHardSigmoid                     // max(0, min(1, alpha*x + beta))
	PostHardSwish                       // x * max(0, min(1, x/6 + 1/2))
	PostLeakyReLU                       // x >= 0 ? x : alpha*x
	PostLog                             // log(x)
	PostMish                            // x * tanh(log(1 + exp(x)))
	PostSigmoid                         // 1 / (1 + exp(-x))
	PostSoftPlus                        // log(1 + exp(beta*x)) / beta
	PostReLU                            // max(x, 0)
	PostRound                           // to nearest, ties to even
	PostSqrt                            // sqrt(x)
	PostSquare                          // x*x
	PostTanh                            // tanh(x)
	PostPow                             // x^beta, for beta 0, 1, 2, 3, -1, -2, 0.5 or -0.5
)

// postKinds maps each PostKind to the plan's kind.
var postKinds = [...]ops.Kind{
	PostAbs: ops.Abs, PostClamp: ops.Clamp, PostElu: ops.Elu, PostExp: ops.Exp,
	PostGELU: ops.GELUErf, PostGELUTanh: ops.GELUTanh, PostHardSigmoid: ops.HardSigmoid,
	PostHardSwish: ops.HardSwish, PostLeakyReLU: ops.LeakyReLU, PostLog: ops.Log, PostMish: ops.Mish,
	PostSigmoid: ops.Sigmoid, PostSoftPlus: ops.SoftPlus, PostReLU: ops.ReLU, PostRound: ops.Round,
	PostSqrt: ops.Sqrt, PostSquare: ops.Square, PostTanh: ops.Tanh, PostPow: ops.Pow,
}

// planKind returns k's plan kind, or false for a value that names none.
func (k PostKind) planKind() (ops.Kind, bool) {
	if k == 0 || int(k) >= len(postKinds) {
		return 0, false
	}
	return postKinds[k], true
}

// String returns oneDNN Graph's op name for k ("Abs", "GELU", ...).
func (k PostKind) String() string {
	if pk, ok := k.planKind(); ok {
		return pk.String()
	}
	return fmt.Sprintf("PostKind(%d)", int(k))
}

// paramsProblem describes what leaves post-op k with parameters alpha and
// beta without a meaning, as the graph API's AddOp refuses it (package
// ops's rules), or "" for usable parameters.
func (k PostKind) paramsProblem(alpha, beta float32) string {
	pk, _ := k.planKind()
	return pk.ParamsProblem(alpha, beta, true)
}

// postKey is a post-op as a key field: float parameters as bits, so that
// the key is hashed and compared as plain memory.
type postKey struct {
	kind        int32
	alpha, beta uint32
}

// settings is a call's options, resolved.
type settings struct {
	keep                   bool
	srcDT, dstDT           dtypes.DataType
	srcByType, dstByType   bool // named by Type, which names ~uint16 slices only
	srcStrides, dstStrides []int
	hasSrcStr, hasDstStr   bool
	post                   [MaxPostOps + 1]postKey // +1: LogSum's own Log
	npost                  uint8
	allIfEmpty             bool // ONNX: empty axes reduce every dim
	index                  bool // an index reduction's, which takes SelectLastIndex
	last                   bool // SelectLastIndex(true)
}

// namesNoType reports whether o is a type option without a type.
func (o *Option) namesNoType() bool {
	switch o.what {
	case optType, optSrcType, optDstType, optParamType:
		return o.dt == dtypes.Undef
	}
	return false
}

// apply resolves opts for op into s; onnx refuses KeepDims (the node's
// attribute decides).
func (s *settings) apply(op Op, opts []Option, onnx bool) error {
	if op >= opEnd {
		return status.Errorf(status.InvalidArguments, "reduce: unknown op %v", op)
	}
	if _, post := op.reduction(); post != 0 {
		s.post[0] = postKey{kind: int32(post)}
		s.npost = 1
	}
	user := 0
	for i := range opts {
		o := &opts[i]
		if o.namesNoType() {
			return status.Errorf(status.InvalidArguments, "reduce.%v: option %d names no data type (dtypes.Undef)", op, i)
		}
		switch o.what {
		case optKeepDims:
			if onnx {
				return status.Errorf(status.InvalidArguments, "reduce.%v: option %d: KeepDims with an ONNX node: keepdims is the node's attribute", op, i)
			}
			s.keep = o.b
		case optType:
			s.srcDT, s.dstDT = o.dt, o.dt
			s.srcByType, s.dstByType = true, true
		case optSrcType:
			s.srcDT, s.srcByType = o.dt, false
		case optDstType:
			s.dstDT, s.dstByType = o.dt, false
		case optSrcStrides:
			s.srcStrides, s.hasSrcStr = o.ints, true
		case optDstStrides:
			s.dstStrides, s.hasDstStr = o.ints, true
		case optPost:
			k, ok := PostKind(o.post.kind).planKind()
			if !ok {
				return status.Errorf(status.InvalidArguments, "reduce.%v: option %d: unknown post-op kind %d", op, i, o.post.kind)
			}
			if msg := PostKind(o.post.kind).paramsProblem(math.Float32frombits(o.post.alpha), math.Float32frombits(o.post.beta)); msg != "" {
				return status.Errorf(status.InvalidArguments, "reduce.%v: option %d: %v post-op: %s", op, i, PostKind(o.post.kind), msg)
			}
			if beta := math.Float32frombits(o.post.beta); PostKind(o.post.kind) == PostPow && !ops.IsPowBeta(beta) {
				return status.Errorf(status.Unimplemented, "reduce.%v: option %d: Pow post-op with beta %v; %s", op, i, beta, ops.PowBetasText)
			}
			if user == MaxPostOps {
				return status.Errorf(status.Unimplemented, "reduce.%v: option %d: more than %d post-ops", op, i, MaxPostOps)
			}
			user++
			s.post[s.npost] = postKey{kind: int32(k), alpha: o.post.alpha, beta: o.post.beta}
			s.npost++
		case optParamType, optInfAsZero, optStats, optSoftmaxStats:
			return status.Errorf(status.InvalidArguments, "reduce.%v: option %d is a normalization's (ParamType, InfAsZero, Stats, SoftmaxStats)", op, i)
		case optSelectLast:
			if !s.index {
				return status.Errorf(status.InvalidArguments, "reduce.%v: option %d is an index reduction's (SelectLastIndex)", op, i)
			}
			s.last = o.b
		default:
			return status.Errorf(status.InvalidArguments, "reduce.%v: option %d is the zero Option; make options with KeepDims, Type, ...", op, i)
		}
	}
	return nil
}
