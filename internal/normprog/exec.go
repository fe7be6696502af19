package normprog

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Exec runs a norm.Problem: as a compiled Program where this package
// takes the problem, else on package norm's reference executor, which
// also checks every problem first (so both refuse the same things with
// the same words). Safe for concurrent Runs.
type Exec struct {
	ref   *norm.Exec
	prog  *Program
	why   string // why the reference executor runs the problem ("": prog does)
	nbins int    // the fused post-ops' binary operands
	res   bool   // the src is a Residual sum (RunResidual)
}

// New checks p and compiles it, with post-ops fused after it (binary
// operands over src's dims, as in plan.Problem). The reference executor
// has no post-ops: a fused problem that no program takes is refused,
// unless it writes no dst element.
func New(p *norm.Problem, post []plan.PostOp) (*Exec, error) {
	return NewFused(p, nil, post, p.Dst.DT)
}

// NewFused is New with what may be fused around the normalization: res,
// the residual sum that is its src (nil: none; see Residual; p.Src is
// the sum's type and, where res keeps the sum, its layout; it runs with
// RunResidual), and dstDT, the type the post-ops' result is stored as:
// p.Dst.DT, or s8 or u8 after post-ops that quantize it (p is then the
// float problem before them, whose dst strides are the s8 or u8 dst's).
// The reference executor computes no sum and writes no integers: such a
// problem runs as a program, or not at all (unless it has no element).
func NewFused(p *norm.Problem, res *Residual, post []plan.PostOp, dstDT dtypes.DataType) (*Exec, error) {
	return newFused(p, res, nil, dtypes.Undef, post, dstDT)
}

// NewDequantized is NewFused with a Dequantize fused before the
// normalization: src is of srcDT (s8 or u8) at p.Src's strides, each
// element (x - dq.Zero) * dq.Scale, and p is the problem over that f32
// tensor (p.Src.DT f32). The reference executor dequantizes nothing:
// such a problem runs as a program, or not at all (unless it has no
// element).
func NewDequantized(p *norm.Problem, dq *kernelshape.Dequant, srcDT dtypes.DataType, post []plan.PostOp, dstDT dtypes.DataType) (*Exec, error) {
	if dq == nil {
		return nil, status.Errorf(status.InvalidArguments, "%s: NewDequantized without a Dequantize", p.Kind)
	}
	return newFused(p, nil, dq, srcDT, post, dstDT)
}

func newFused(p *norm.Problem, res *Residual, dq *kernelshape.Dequant, srcDT dtypes.DataType, post []plan.PostOp, dstDT dtypes.DataType) (*Exec, error) {
	ref, err := norm.New(p)
	if err != nil {
		return nil, err
	}
	e := &Exec{ref: ref, nbins: binaryCount(post), res: res != nil}
	d, why := descOf(p)
	if d != nil {
		d.PostOps, d.DstDT = post, dstDT
		d.Residual = res
		if dq != nil {
			d.SrcDT, d.Dequant = srcDT, dq
		}
		prog, err := Compile(d)
		if err == nil {
			e.prog = prog
			if dq != nil {
				e.ref = nil // its checks are of an f32 src
			}
			return e, nil
		}
		// What the reference executor accepts it runs, whatever a
		// program lacks.
		why = err.Error()
	}
	if res != nil && elements(p.Dims) > 0 {
		return nil, status.Errorf(status.Unimplemented, "%s after a fused residual sum: %s", p.Kind, why)
	}
	if dq != nil && elements(p.Dims) > 0 {
		return nil, status.Errorf(status.Unimplemented, "%s after a fused Dequantize: %s", p.Kind, why)
	}
	if (len(post) > 0 || dstDT != p.Dst.DT) && elements(p.Dims) > 0 {
		return nil, status.Errorf(status.Unimplemented, "%s with fused post-ops: %s", p.Kind, why)
	}
	// A problem of no element reaches here whatever is fused around it:
	// the reference executor writes no dst element then, only the
	// statistics of rows of no element (0), which it writes as it would
	// without the fused ops.
	e.why = why
	return e, nil
}

// FromDesc compiles d with post-ops fused after it, as an Exec with no
// reference executor: d must be one a Program takes. A d of no element
// compiles to an Exec that writes nothing.
func FromDesc(d *Desc, post []plan.PostOp) (*Exec, error) {
	e := &Exec{nbins: binaryCount(post)}
	if elements(d.Dims) == 0 {
		if err := validate(d); err != nil {
			return nil, err
		}
		e.why = "a problem with an empty dim writes nothing"
		return e, nil
	}
	c := *d
	c.PostOps = post
	prog, err := Compile(&c)
	if err != nil {
		return nil, err
	}
	e.prog = prog
	return e, nil
}

// binaryCount is how many of post are binary.
func binaryCount(post []plan.PostOp) int {
	n := 0
	for _, op := range post {
		if op.Kind.IsBinary() {
			n++
		}
	}
	return n
}

func elements(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n = plan.MulSat(n, d)
	}
	return n
}

// Run runs the problem over b, the fused post-ops' binary operands in
// bins, on up to threads goroutines where the reference executor runs it
// (a Program takes jit.Threads).
func (e *Exec) Run(b norm.Buffers, bins [][]byte, threads int) error {
	return e.RunEps(b, nil, bins, threads)
}

// RunEps is Run with the run-time epsilon of a Desc that has one
// (FromDesc).
func (e *Exec) RunEps(b norm.Buffers, eps []byte, bins [][]byte, threads int) error {
	if len(bins) != e.nbins {
		return status.Errorf(status.InvalidArguments, "%d binary operand buffers given, the fused post-ops have %d", len(bins), e.nbins)
	}
	if e.res {
		return status.Errorf(status.InvalidArguments, "the problem has a residual sum: run it with RunResidual")
	}
	switch {
	case e.prog == nil && e.ref == nil:
		return nil // FromDesc of no element
	case e.prog == nil:
		return e.ref.Run(b, threads)
	case e.ref != nil && e.prog.d.DstDT.IsFloat():
		// (An s8 or u8 dst is not the reference's f32 one: the
		// program's own checks cover it.)
		if err := e.ref.Check(b); err != nil {
			return err
		}
	}
	return e.prog.run(Buffers{Src: b.Src, Dst: b.Dst, Gamma: b.Gamma, Beta: b.Beta, Mean: b.Mean, Var: b.Var, Stats: b.Stats, Eps: eps}, bins)
}

// RunResidual runs a problem of NewResidual: b.Src receives the sum
// where the Residual keeps it, x, skip and bias are the sum's operands
// (bias nil where it has none). The program checks every buffer.
func (e *Exec) RunResidual(b norm.Buffers, x, skip, bias []byte, bins [][]byte) error {
	if !e.res {
		return status.Errorf(status.InvalidArguments, "the problem has no residual sum: run it with Run")
	}
	if len(bins) != e.nbins {
		return status.Errorf(status.InvalidArguments, "%d binary operand buffers given, the fused post-ops have %d", len(bins), e.nbins)
	}
	if e.prog == nil {
		// No element: the reference executor writes the statistics of
		// rows of no element, and nothing else.
		return e.ref.Run(b, 1)
	}
	return e.prog.run(Buffers{Src: b.Src, Dst: b.Dst, Gamma: b.Gamma, Beta: b.Beta, Mean: b.Mean, Var: b.Var, Stats: b.Stats,
		X: x, Skip: skip, Bias: bias}, bins)
}

// Impl names what runs the problem: the Program's kernels ("jit:avx512",
// ...) or "interp".
func (e *Exec) Impl() string {
	if e.prog == nil {
		return "interp"
	}
	return e.prog.Impl()
}

// Reason says why the interpreter runs the problem or part of it, or ""
// when machine code runs all of it.
func (e *Exec) Reason() string {
	switch {
	case e.prog == nil:
		return "interpreter: " + e.why
	case e.prog.Why() != "":
		return "interpreter: " + e.prog.Why()
	}
	return ""
}

// descOf is p (which norm.New accepted) as a Desc, or nil and why the
// reference executor runs it.
func descOf(p *norm.Problem) (*Desc, string) {
	for _, n := range p.Dims {
		if n == 0 {
			return nil, "a problem with an empty dim runs on the reference executor"
		}
	}
	for _, o := range []norm.Operand{p.Mean, p.Var, p.Stats} {
		if o.Present() && o.DT != dtypes.F32 {
			return nil, "statistics of " + o.DT.String() + " run on the reference executor"
		}
	}
	r := len(p.Dims)
	axis, _ := norm.AxisIn(p.Axis, r)
	d := &Desc{SrcDT: p.Src.DT, DstDT: p.Dst.DT, Dims: p.Dims, SrcStrides: p.Src.Strides, DstStrides: p.Dst.Strides,
		Norm: make([]bool, r), Epsilon: p.Eps, InfAsZero: p.InfAsZero}
	// over spreads an operand's strides over its own dims (those from
	// first on, or only dim at when single) to strides over every dim.
	over := func(s []int64, first int, single bool) []int64 {
		out := make([]int64, r)
		if single {
			out[axis] = s[0]
			return out
		}
		copy(out[first:], s)
		return out
	}
	switch p.Kind {
	case norm.Softmax, norm.LogSoftmax:
		d.Kind = Softmax
		if p.Kind == norm.LogSoftmax {
			d.Kind = LogSoftmax
		}
		d.Norm[axis] = true
		if p.Stats.Present() {
			// Its dims are src's with the axis 1: stride 0 there.
			s := append([]int64(nil), p.Stats.Strides...)
			s[axis] = 0
			d.Stats = &Operand{DT: dtypes.F32, Strides: s}
		}
	case norm.LayerNorm, norm.RMSNorm:
		d.Kind = LayerNorm
		if p.Kind == norm.RMSNorm {
			d.Kind = RMSNorm
		}
		for i := axis; i < r; i++ {
			d.Norm[i] = true
		}
		if p.Mean.Present() {
			d.Mean = &Operand{DT: dtypes.F32, Strides: append(append([]int64(nil), p.Mean.Strides...), make([]int64, r-axis)...)}
			d.Var = &Operand{DT: dtypes.F32, Strides: append(append([]int64(nil), p.Var.Strides...), make([]int64, r-axis)...)}
		}
	case norm.GroupNorm:
		d.Kind, d.Groups, d.ChanDim = GroupNorm, p.Groups, axis
		for i := 1; i < r; i++ {
			d.Norm[i] = i != axis
		}
		if p.Mean.Present() {
			// [N, groups] over the split dims: N is dim 0, the groups
			// sit where the channels were.
			for _, o := range []struct {
				from norm.Operand
				to   **Operand
			}{{p.Mean, &d.Mean}, {p.Var, &d.Var}} {
				s := make([]int64, r+1)
				s[0], s[axis] = o.from.Strides[0], o.from.Strides[1]
				*o.to = &Operand{DT: dtypes.F32, Strides: s}
			}
		}
	default:
		return nil, "no program for " + p.Kind.String()
	}
	single := p.Kind == norm.GroupNorm
	if p.Gamma.Present() {
		d.Gamma = &Operand{DT: p.Gamma.DT, Strides: over(p.Gamma.Strides, axis, single)}
	}
	if p.Beta.Present() {
		d.Beta = &Operand{DT: p.Beta.DT, Strides: over(p.Beta.Strides, axis, single)}
	}
	return d, ""
}
