package normprog

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/chunk"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Kind is a normalization.
type Kind uint8

// The normalizations.
const (
	// Softmax is exp(x - max) / sum(exp(x - max)) over the normalized
	// dims: a row with some -Inf gives exact 0s there, an all -Inf row
	// NaN.
	Softmax Kind = iota + 1
	// LogSoftmax is x - max - log(sum(exp(x - max))).
	LogSoftmax
	// LayerNorm is (x - mean) / sqrt(variance + Epsilon) [* gamma]
	// [+ beta], the variance the mean of (x - mean)^2: no cancellation.
	LayerNorm
	// RMSNorm is x / sqrt(mean(x^2) + Epsilon) [* gamma] [+ beta].
	RMSNorm
	// L2Norm is x / max(sqrt(sum(x^2)), Epsilon), as PyTorch's
	// normalize; Epsilon 0 divides by the norm itself.
	L2Norm
	// GroupNorm is LayerNorm over each group of Groups consecutive
	// channels of dim ChanDim and the dims marked Norm (the spatial
	// ones), gamma and beta per channel.
	GroupNorm
	// L1Norm is x / max(sum(|x|), Epsilon): L2Norm with p = 1.
	L1Norm
)

var kindNames = [...]string{Softmax: "softmax", LogSoftmax: "logsoftmax", LayerNorm: "layernorm", RMSNorm: "rmsnorm",
	L2Norm: "l2norm", GroupNorm: "groupnorm", L1Norm: "l1norm"}

func (k Kind) String() string {
	if k >= Softmax && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Operand is a tensor read over the src's index space: strides in
// elements, one per dim, 0 where it is broadcast.
type Operand struct {
	DT      dtypes.DataType
	Strides []int64
}

// Desc is one normalization of a strided tensor into dst.
type Desc struct {
	Kind Kind
	// SrcDT is f32, bf16 or f16; DstDT too, or s8 or u8 (the post-ops'
	// f32 result rounded to nearest even and saturated, as after a
	// Quantize whose scale and zero point are post-ops).
	SrcDT, DstDT dtypes.DataType
	Dims         []int64
	SrcStrides   []int64 // elements, one per dim, none negative
	DstStrides   []int64
	Norm         []bool  // per dim: normalized over (softmax's axis, layer norm's trailing dims)
	Epsilon      float32 // LayerNorm, RMSNorm, GroupNorm, L1Norm and L2Norm
	// InfAsZero is softmax's "inf_as_zero" mode: a row whose every
	// element is -Inf gives 0s, not NaN.
	InfAsZero bool
	// EpsDT, when not Undef, makes epsilon a run-time operand: one
	// element of this type (f32, bf16 or f16) in Buffers.Eps, which
	// every Run reads in place of Epsilon (a graph that spells a
	// normalization out in ops has its epsilon as a tensor). Run
	// refuses a NaN, infinite or negative value.
	EpsDT dtypes.DataType
	// EpsAdded makes L2Norm divide by norm + epsilon (an exporter's
	// spelling), not by max(norm, epsilon).
	EpsAdded bool
	// Groups and ChanDim are GroupNorm's: ChanDim's size is a multiple
	// of Groups.
	Groups  int64
	ChanDim int
	// Mean and Var, when not nil, receive LayerNorm's and GroupNorm's
	// statistics as f32 (oneDNN's keep_stats): strides over the dims,
	// 0 along the normalized ones (GroupNorm: over the dims with
	// ChanDim split into [Groups, channels per group], see Split).
	Mean, Var *Operand
	// Stats, when not nil, receives a softmax's log-sum-exp as f32,
	// max + log(sum(exp(x - max))) a row (oneDNN Graph's SoftMax
	// "stats"): strides over the dims, 0 along the normalized ones. An
	// all -Inf row's is NaN, as its dst, or with InfAsZero 0, as
	// oneDNN's.
	Stats *Operand
	// Gamma and Beta scale and shift the result (LayerNorm and RMSNorm;
	// nil: none).
	Gamma, Beta *Operand
	// PostOps follow the normalization, their binary operands over the
	// src's index space as in plan.Problem.
	PostOps []plan.PostOp
	// Residual, when not nil, is the sum src is computed from (LayerNorm
	// and RMSNorm; see Residual).
	Residual *Residual
	// Dequant, when not nil, is a Dequantize fused before the
	// normalization: SrcDT is s8 or u8, and each element x is
	// normalized as (x - Zero) * Scale in f32 (see dequant.go).
	Dequant *kernelshape.Dequant
}

// chunkBytes is about how much src one chunk reads: with its f32 copy Y
// and dst it stays in a core's L2.
const chunkBytes = 256 << 10

// Program is a compiled Desc, ready to Run; safe for concurrent use.
type Program struct {
	kind     Kind // d.Kind, but GroupNorm's: d is its LayerNorm over split dims
	d        Desc
	chunkDim int   // the dim cut into chunks; -1: one chunk
	chunk    int64 // its iterations per chunk
	full     *passes
	last     *passes // the last, shorter chunk (nil: none)
	nChunks  int64
	eps      []byte                // Epsilon as one f32, the operand that adds it
	dq       []byte                // a fused Dequantize's -Zero and Scale as f32s, the passes' operands
	scratch  chunk.Stash[[][]byte] // a worker's scratch buffers, kept between Runs
	cl       *chanLast             // GroupNorm on channels-last data, in place of the chunks (chanlast.go)
}

// passes are one chunk's kernels in order, and its scratch; or its one
// fused kernel (see fused.go), which reads src, gamma, beta and the
// caller's operands and writes dst.
type passes struct {
	steps   []step
	scratch []int64 // bytes of each scratch buffer
	fused   *jit.NormKernel
	sum     int // the scratch buffer holding a residual sum (-1: none)
}

// ref names a buffer of Run: the caller's, a scratch one, or eps.
type ref struct {
	kind refKind
	i    int
}

type refKind uint8

const (
	rSrc refKind = iota
	rDst
	rGamma
	rBeta
	rBin // the caller's binary post-op operand i
	rScratch
	rEps
	rMean
	rVar
	rStats
	rX // a Residual's operands
	rSkip
	rResBias
	rDqZero // a fused Dequantize's -Zero and Scale, one f32 each
	rDqScale
)

// step is one kernel and the buffers it reads and writes, or where k is
// nil a function of them and two bins.
type step struct {
	k    *jit.Kernel
	fn   func(dst, src, bin0, bin1 []byte) error
	src  ref
	dst  ref
	bins []ref
}

// Compile validates d and compiles its passes.
func Compile(d *Desc) (*Program, error) {
	if d == nil {
		return nil, status.Errorf(status.InvalidArguments, "normprog: Compile of a nil description")
	}
	if err := validate(d); err != nil {
		return nil, err
	}
	if err := validateResidual(d); err != nil {
		return nil, err
	}
	p := &Program{kind: d.Kind, d: cloneDesc(d), chunkDim: -1}
	if d.Kind == GroupNorm {
		p.d = splitGroups(d)
	}
	if err := checkStats(&p.d); err != nil {
		return nil, err
	}
	if d.Kind == GroupNorm {
		cl, err := compileChanLast(d)
		if err != nil {
			return nil, err
		}
		if cl != nil {
			p.cl = cl
			return p, nil
		}
	}
	mergeKept(&p.d)
	sumLayout(&p.d)
	p.eps = make([]byte, 4)
	dtypes.StoreF32(dtypes.F32, p.eps, 0, d.Epsilon)
	if dq := d.Dequant; dq != nil {
		p.dq = make([]byte, 8)
		dtypes.StoreF32(dtypes.F32, p.dq, 0, -float32(dq.Zero))
		dtypes.StoreF32(dtypes.F32, p.dq, 1, dq.Scale)
	}
	p.chooseChunks()
	p.chooseColumnChunks()
	var err error
	dims := append([]int64(nil), p.d.Dims...)
	if p.chunkDim >= 0 {
		dims[p.chunkDim] = p.chunk
	}
	if p.full, err = p.build(dims); err != nil {
		return nil, err
	}
	if p.chunkDim >= 0 {
		if rem := p.d.Dims[p.chunkDim] % p.chunk; rem > 0 {
			dims[p.chunkDim] = rem
			if p.last, err = p.build(dims); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// chooseChunks cuts a kept dim into chunks of about chunkBytes of src:
// the outermost in memory, or, where one of its iterations alone is over
// that, an inner one (chunk.Choose).
func (p *Program) chooseChunks() {
	d := &p.d
	size := int64(d.SrcDT.Size())
	if d.Dequant != nil {
		size = 4 // the passes' f32 copy of the chunk is what stays in cache
	}
	ct := chunk.Choose(d.Dims, d.SrcStrides, func(i int) bool { return !d.Norm[i] }, size, chunkBytes)
	p.chunkDim, p.chunk, p.nChunks = ct.Dim, ct.Size, ct.N
}

// build compiles the passes of one chunk of dims.
func (p *Program) build(dims []int64) (*passes, error) {
	d := &p.d
	if k, err := p.fusedKernel(dims); k != nil || err != nil {
		ps := &passes{fused: k, sum: -1}
		if d.Residual != nil && !d.Residual.KeepSum {
			row := int64(1)
			for i, n := range dims {
				if d.Norm[i] {
					row = plan.MulSat(row, n)
				}
			}
			ps.scratch, ps.sum = []int64{plan.MulSat(row, int64(d.SrcDT.Size()))}, 0
		}
		return ps, err
	}
	ps := &passes{}
	order := srcOrder(d)
	rowStr := dense(dims, order, func(i int) bool { return !d.Norm[i] }) // one f32 per row
	allStr := dense(dims, order, func(int) bool { return true })         // one f32 per element
	none := make([]bool, len(dims))
	rows, elems := int64(1), int64(1)
	for i, n := range dims {
		elems = plan.MulSat(elems, n)
		if !d.Norm[i] {
			rows = plan.MulSat(rows, n)
		}
	}
	scratch := func(n int64) ref {
		ps.scratch = append(ps.scratch, plan.MulSat(n, 4))
		return ref{rScratch, len(ps.scratch) - 1}
	}
	add := func(pr *plan.Problem, src, dst ref, bins ...ref) error {
		pl, err := plan.Canonicalize(pr)
		if err != nil {
			return err
		}
		k, err := jit.Compile(pl)
		if err != nil {
			return err
		}
		ps.steps = append(ps.steps, step{k: k, src: src, dst: dst, bins: bins})
		return nil
	}
	stat := func(s []int64) plan.PostOp { return plan.PostOp{Kind: ops.Subtract, BinDT: dtypes.F32, BinStrides: s} }
	bin := func(k ops.Kind, s []int64) plan.PostOp { return plan.PostOp{Kind: k, BinDT: dtypes.F32, BinStrides: s} }
	src := ref{rSrc, 0}
	f32 := dtypes.F32
	// rowDims are dims with the normalized ones of size 1: a row buffer
	// as a tensor of its own.
	rowDims := append([]int64(nil), dims...)
	for i := range rowDims {
		if d.Norm[i] {
			rowDims[i] = 1
		}
	}
	// finish maps src (or Y) into dst with the leading post-ops lead and
	// their operands, then gamma, beta and the caller's post-ops.
	finish := func(from ref, fromDT dtypes.DataType, fromStr []int64, lead []plan.PostOp, bins []ref) error {
		post := append([]plan.PostOp(nil), lead...)
		if d.Gamma != nil {
			post = append(post, plan.PostOp{Kind: ops.Multiply, BinDT: d.Gamma.DT, BinStrides: d.Gamma.Strides})
			bins = append(bins, ref{rGamma, 0})
		}
		if d.Beta != nil {
			post = append(post, plan.PostOp{Kind: ops.Add, BinDT: d.Beta.DT, BinStrides: d.Beta.Strides})
			bins = append(bins, ref{rBeta, 0})
		}
		nb := 0
		for _, op := range d.PostOps {
			post = append(post, op)
			if op.Kind.IsBinary() {
				bins = append(bins, ref{rBin, nb})
				nb++
			}
		}
		// A kernel takes plan.MaxBinary operands: the post-ops past them
		// map an f32 scratch copy of the chunk in further passes (from
		// the core's cache, as Y is).
		for len(bins) > plan.MaxBinary {
			cut, nb := 0, 0
			for nb < plan.MaxBinary || !post[cut].Kind.IsBinary() {
				if post[cut].Kind.IsBinary() {
					nb++
				}
				cut++
			}
			y := scratch(elems)
			if err := add(&plan.Problem{Reduction: plan.Copy, SrcDT: fromDT, DstDT: f32, Dims: dims, SrcStrides: fromStr,
				Reduce: none, DstStrides: allStr, PostOps: post[:cut]}, from, y, bins[:nb]...); err != nil {
				return err
			}
			from, fromDT, fromStr, post, bins = y, f32, allStr, post[cut:], bins[nb:]
		}
		return add(&plan.Problem{Reduction: plan.Copy, SrcDT: fromDT, DstDT: d.DstDT, Dims: dims, SrcStrides: fromStr,
			Reduce: none, DstStrides: d.DstStrides, PostOps: post}, from, ref{rDst, 0}, bins...)
	}
	if err := p.addResidual(ps, dims, add); err != nil {
		return nil, err
	}
	// With a fused Dequantize the passes read the chunk's f32 copy.
	src, srcDT, srcStr, err := p.addDequant(dims, allStr, func() ref { return scratch(elems) }, add)
	if err != nil {
		return nil, err
	}
	switch d.Kind {
	case Softmax, LogSoftmax:
		m, y, s := scratch(rows), scratch(elems), scratch(rows)
		steps := []func() error{
			func() error {
				pr := &plan.Problem{Reduction: plan.AlgMax.Reduction(0, 0), SrcDT: srcDT, DstDT: f32, Dims: dims,
					SrcStrides: srcStr, Reduce: d.Norm, DstStrides: rowStr}
				if d.InfAsZero {
					// An all -Inf row's max made finite: its exps are
					// then 0, not NaN.
					pr.PostOps = []plan.PostOp{{Kind: ops.Clamp, Alpha: -math.MaxFloat32, Beta: float32(math.Inf(1))}}
				}
				return add(pr, src, m)
			},
			func() error {
				return add(&plan.Problem{Reduction: plan.Copy, SrcDT: srcDT, DstDT: f32, Dims: dims, SrcStrides: srcStr,
					Reduce: none, DstStrides: allStr, PostOps: []plan.PostOp{stat(rowStr), {Kind: ops.Exp}}}, src, y, m)
			},
			func() error {
				pr := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: f32, DstDT: f32, Dims: dims,
					SrcStrides: allStr, Reduce: d.Norm, DstStrides: rowStr}
				switch {
				case d.Kind == LogSoftmax:
					pr.PostOps = []plan.PostOp{{Kind: ops.Log}}
				case d.InfAsZero && d.Stats == nil:
					// A row with a finite max sums at least exp(0) = 1;
					// an all -Inf row sums 0, made 1 so that its 0s
					// divide to 0.
					pr.PostOps = []plan.PostOp{{Kind: ops.Clamp, Alpha: 1, Beta: float32(math.Inf(1))}}
				}
				return add(pr, y, s)
			},
			func() error {
				if d.Stats == nil {
					return nil
				}
				var err error
				s, err = p.addLogSumExp(add, rowDims, rowStr, s, m, scratch(rows))
				return err
			},
			func() error {
				if d.Kind == Softmax {
					return finish(y, f32, allStr, []plan.PostOp{bin(ops.Divide, rowStr)}, []ref{s})
				}
				return finish(src, srcDT, srcStr, []plan.PostOp{stat(rowStr), stat(rowStr)}, []ref{m, s})
			},
		}
		err = run(steps)
	case LayerNorm:
		// Y = x - mu0, the distances to the summed mean mu0, and the
		// variance v0, their mean square; then, where mu0's rounding may
		// be most of v0 (kernelshape.NearConstant), the mean m1 of Y corrects them
		// (correctNearConstant), else m1 is 0. The map takes Y - m1.
		mu0, y, v0, m1, sd := scratch(rows), scratch(elems), scratch(rows), scratch(rows), scratch(rows)
		copyRows := func(from, to ref, toStr []int64) error {
			return add(&plan.Problem{Reduction: plan.Copy, SrcDT: f32, DstDT: f32, Dims: rowDims, SrcStrides: rowStr,
				Reduce: none, DstStrides: toStr}, from, to)
		}
		squares := plan.AlgMean.Reduction(0, 0)
		squares.Transform = plan.TransformSquare
		err = run([]func() error{
			func() error {
				return add(&plan.Problem{Reduction: plan.AlgMean.Reduction(0, 0), SrcDT: srcDT, DstDT: f32, Dims: dims,
					SrcStrides: srcStr, Reduce: d.Norm, DstStrides: rowStr}, src, mu0)
			},
			func() error {
				return add(&plan.Problem{Reduction: plan.Copy, SrcDT: srcDT, DstDT: f32, Dims: dims, SrcStrides: srcStr,
					Reduce: none, DstStrides: allStr, PostOps: []plan.PostOp{stat(rowStr)}}, src, y, mu0)
			},
			func() error {
				return add(&plan.Problem{Reduction: squares, SrcDT: f32, DstDT: f32, Dims: dims,
					SrcStrides: allStr, Reduce: d.Norm, DstStrides: rowStr}, y, v0)
			},
			func() error {
				pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgMean.Reduction(0, 0), SrcDT: f32, DstDT: f32, Dims: dims,
					SrcStrides: allStr, Reduce: d.Norm, DstStrides: rowStr})
				if err != nil {
					return err
				}
				k, err := jit.Compile(pl)
				if err != nil {
					return err
				}
				ps.steps = append(ps.steps, step{fn: correctNearConstant(k), src: y, dst: m1, bins: []ref{v0, mu0}})
				return nil
			},
			func() error {
				// The statistics the caller keeps.
				if d.Mean == nil {
					return nil
				}
				return copyRows(mu0, ref{rMean, 0}, d.Mean.Strides)
			},
			func() error {
				if d.Var == nil {
					return nil
				}
				return copyRows(v0, ref{rVar, 0}, d.Var.Strides)
			},
			func() error { return p.rootPlusEps(add, rowDims, rowStr, rowStr, v0, sd) },
			func() error {
				return finish(y, f32, allStr, []plan.PostOp{bin(ops.Subtract, rowStr), bin(ops.Divide, rowStr)}, []ref{m1, sd})
			},
		})
	case RMSNorm:
		ms, r := scratch(rows), scratch(rows)
		err = run([]func() error{
			func() error {
				red := plan.AlgMean.Reduction(0, 0)
				red.Transform = plan.TransformSquare
				return add(&plan.Problem{Reduction: red, SrcDT: srcDT, DstDT: f32, Dims: dims,
					SrcStrides: srcStr, Reduce: d.Norm, DstStrides: rowStr}, src, ms)
			},
			func() error { return p.rootPlusEps(add, rowDims, rowStr, rowStr, ms, r) },
			func() error {
				return finish(src, srcDT, srcStr, []plan.PostOp{bin(ops.Divide, rowStr)}, []ref{r})
			},
		})
	case L1Norm, L2Norm:
		n, lp := scratch(rows), float32(2)
		if d.Kind == L1Norm {
			lp = 1
		}
		err = run([]func() error{
			func() error {
				pr := &plan.Problem{Reduction: plan.AlgNormLpMax.Reduction(lp, 0), SrcDT: srcDT, DstDT: f32, Dims: dims,
					SrcStrides: srcStr, Reduce: d.Norm, DstStrides: rowStr,
					PostOps: []plan.PostOp{{Kind: ops.Clamp, Alpha: d.Epsilon, Beta: float32(math.Inf(1))}}}
				if d.EpsDT == dtypes.Undef && !d.EpsAdded {
					return add(pr, src, n)
				}
				// The run-time epsilon, or the one added to the norm, is
				// a binary operand broadcast to every row.
				k := ops.Maximum
				if d.EpsAdded {
					k = ops.Add
				}
				pr.PostOps = []plan.PostOp{{Kind: k, BinDT: p.epsDT(), BinStrides: make([]int64, len(dims))}}
				return add(pr, src, n, ref{rEps, 0})
			},
			func() error {
				return finish(src, srcDT, srcStr, []plan.PostOp{bin(ops.Divide, rowStr)}, []ref{n})
			},
		})
	}
	if err != nil {
		return nil, err
	}
	return ps, nil
}

// addLogSumExp adds the passes that write a softmax's Stats from its
// rows' max m and raw sum of exps s (row buffers of strides rowStr over
// rowDims), as the fused kernel computes them (kernelshape.Norm's
// KeepLogSumExp): log(s) + m, or with InfAsZero, where m is clamped to
// the finite range and an all -Inf row sums 0, log(max(s, 1)) +
// min(s, 1) * m, so that row's is 0. It returns the sum the softmax
// divides by: s, or with InfAsZero max(s, 1) (see the sum's pass) in l,
// a row buffer.
func (p *Program) addLogSumExp(add func(*plan.Problem, ref, ref, ...ref) error, rowDims, rowStr []int64, s, m, l ref) (ref, error) {
	d := &p.d
	f32 := dtypes.F32
	none := make([]bool, len(rowDims))
	copyRows := func(from, to ref, toStr []int64, post []plan.PostOp, bins ...ref) error {
		return add(&plan.Problem{Reduction: plan.Copy, SrcDT: f32, DstDT: f32, Dims: rowDims, SrcStrides: rowStr,
			Reduce: none, DstStrides: toStr, PostOps: post}, from, to, bins...)
	}
	bin := func(k ops.Kind) plan.PostOp { return plan.PostOp{Kind: k, BinDT: f32, BinStrides: rowStr} }
	stats := ref{rStats, 0}
	inf := float32(math.Inf(1))
	if !d.InfAsZero {
		return s, copyRows(s, stats, d.Stats.Strides, []plan.PostOp{{Kind: ops.Log}, bin(ops.Add)}, m)
	}
	atLeast1 := plan.PostOp{Kind: ops.Clamp, Alpha: 1, Beta: inf}
	return l, run([]func() error{
		func() error { return copyRows(s, l, rowStr, []plan.PostOp{atLeast1, {Kind: ops.Log}}) },
		func() error {
			return copyRows(s, stats, d.Stats.Strides,
				[]plan.PostOp{{Kind: ops.Clamp, Alpha: 0, Beta: 1}, bin(ops.Multiply), bin(ops.Add)}, m, l)
		},
		func() error { return copyRows(s, l, rowStr, []plan.PostOp{atLeast1}) },
	})
}

// rootPlusEps adds the pass sqrt(x + Epsilon) from the row values at
// from (strides fromStr) into the row buffer to (strides toStr).
func (p *Program) rootPlusEps(add func(*plan.Problem, ref, ref, ...ref) error, rowDims, fromStr, toStr []int64, from, to ref) error {
	zero := make([]int64, len(rowDims))
	post := []plan.PostOp{{Kind: ops.Add, BinDT: p.epsDT(), BinStrides: zero}, {Kind: ops.Sqrt}}
	return add(&plan.Problem{Reduction: plan.Copy, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: rowDims, SrcStrides: fromStr,
		Reduce: make([]bool, len(rowDims)), DstStrides: toStr, PostOps: post}, from, to, ref{rEps, 0})
}

// epsDT is the type of the epsilon operand: the run-time one's, or f32
// for Epsilon held by the program.
func (p *Program) epsDT() dtypes.DataType {
	if p.d.EpsDT != dtypes.Undef {
		return p.d.EpsDT
	}
	return dtypes.F32
}

// run calls each of fs in order until one fails.
func run(fs []func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// srcOrder lists the dims from the largest src stride to the smallest
// (ties: the later dim inner), the order dense scratch follows so that
// it is written as src is read.
func srcOrder(d *Desc) []int {
	order := make([]int, len(d.Dims))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return d.SrcStrides[order[a]] > d.SrcStrides[order[b]] })
	return order
}

// dense returns dense strides over the dims keep accepts, in order
// (outermost first), and 0 for the others.
func dense(dims []int64, order []int, keep func(int) bool) []int64 {
	s := make([]int64, len(dims))
	n := int64(1)
	for k := len(order) - 1; k >= 0; k-- {
		if i := order[k]; keep(i) {
			s[i] = n
			n = plan.MulSat(n, dims[i])
		}
	}
	return s
}

// Impl names the implementation of the program's kernels: one impl, or
// several joined by "+" where passes differ.
func (p *Program) Impl() string {
	if p.cl != nil {
		return p.cl.impl()
	}
	if p.full.fused != nil {
		return p.full.fused.Impl()
	}
	var names []string
	for _, s := range p.full.steps {
		if s.k == nil {
			continue
		}
		if n := s.k.Impl(); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return joinNames(names)
}

// joinNames joins implementation names with "+".
func joinNames(names []string) string { return strings.Join(names, "+") }

// Why says why the interpreter runs some pass, or "".
func (p *Program) Why() string {
	if p.cl != nil {
		return p.cl.why()
	}
	for _, s := range p.full.steps {
		if s.k == nil {
			continue
		}
		if w := s.k.Why(); w != "" {
			return w
		}
	}
	return ""
}

// Buffers are a Run's tensors, each from its first element: Gamma,
// Beta, Mean, Var, Stats and Eps where the Desc has them (else ignored), Bins
// one per binary post-op. With a Residual, X, Skip and Bias are its
// operands, and Src receives the sum (where the Residual keeps it; else
// Src is not used).
type Buffers struct {
	Src, Dst      []byte
	Gamma, Beta   []byte
	Mean, Var     []byte
	Stats         []byte
	Eps           []byte // the run-time epsilon (Desc.EpsDT)
	Bins          [][]byte
	X, Skip, Bias []byte
}

// Run normalizes b.Src into b.Dst. Buffers shorter than their spans are
// an InvalidArguments error; dst may be src itself, but overlap it no
// other way (see inplace.go).
func (p *Program) Run(b Buffers) error {
	bins := b.Bins
	b.Bins = nil
	return p.run(b, bins)
}

// run is Run with the binary operands apart from b, whose Bins it does
// not read. The buffers in b go on to kernels that hold them in state on
// the heap, and escape analysis, which does not tell one field of a
// struct from another, would send the array of a Bins along with them:
// an allocation per call where a caller keeps its operand list in an
// array on its stack, as Exec's callers do.
func (p *Program) run(b Buffers, bins [][]byte) error {
	if p == nil || p.full == nil && p.cl == nil {
		return status.Errorf(status.InvalidArguments, "normprog: Run of a nil program")
	}
	if err := p.checkBuffers(&b, bins); err != nil {
		return err
	}
	if p.cl != nil {
		eps := p.d.Epsilon
		if p.d.EpsDT != dtypes.Undef {
			eps = dtypes.LoadF32(p.d.EpsDT, b.Eps, 0) // checked by checkBuffers
		}
		return p.cl.run(&b, bins, p.d.SrcDT, p.d.DstDT, eps)
	}
	if in, n := p.wholeCopy(&b); in != nil {
		return runOnWholeCopy(in, n, func() error { return p.runChunks(&b, bins) })
	}
	return p.runChunks(&b, bins)
}

// runChunks runs every chunk of the program over b, with bins the
// binary operands.
func (p *Program) runChunks(b *Buffers, bins [][]byte) error {
	cut := chunk.Cut{Dim: p.chunkDim, Size: p.chunk, N: p.nChunks}
	if threads := jit.Threads(); cut.Threads(threads) > 1 {
		// The workers read copies, which go to the heap with their
		// closure; b and bins, and a one-thread run's closure, stay on
		// the stack.
		hb, hbins := *b, slices.Clone(bins)
		return chunk.Run(cut, threads, &p.scratch, func(s *[][]byte, c int64) error { return p.runChunkOf(c, s, &hb, hbins) })
	}
	return chunk.Serial(cut, &p.scratch, func(s *[][]byte, c int64) error { return p.runChunkOf(c, s, b, bins) })
}

// runChunkOf runs chunk c with the passes it takes, the last chunk's
// where it is shorter.
func (p *Program) runChunkOf(c int64, s *[][]byte, b *Buffers, bins [][]byte) error {
	ps := p.full
	if p.last != nil && c == p.nChunks-1 {
		ps = p.last
	}
	*s = grow(*s, ps.scratch)
	return p.runChunk(ps, c, s, b, bins)
}

// grow returns scratch buffers of at least sizes bytes, reusing bufs.
func grow(bufs [][]byte, sizes []int64) [][]byte {
	if n := len(sizes) - len(bufs); n > 0 {
		bufs = append(bufs, make([][]byte, n)...) // one allocation, not one per doubling
	}
	for i, n := range sizes {
		if int64(cap(bufs[i])) < n {
			bufs[i] = make([]byte, n)
		}
		bufs[i] = bufs[i][:n]
	}
	return bufs
}

// runChunk runs chunk c's passes, with its worker's scratch buffers and
// bins the binary operands (b.Bins is not read: see run).
func (p *Program) runChunk(ps *passes, c int64, s *[][]byte, b *Buffers, bins [][]byte) error {
	scratch := *s
	d := &p.d
	start := int64(0)
	if p.chunkDim >= 0 {
		start = c * p.chunk
	}
	at := func(buf []byte, strides []int64, dt dtypes.DataType) []byte {
		if p.chunkDim < 0 || len(buf) == 0 {
			return buf
		}
		return buf[start*strides[p.chunkDim]*int64(dt.Size()):]
	}
	buf := func(r ref) []byte {
		if b, ok := p.residualBuf(r, ps, scratch, b, at); ok {
			return b
		}
		switch r.kind {
		case rSrc:
			return at(b.Src, d.SrcStrides, d.SrcDT)
		case rDst:
			return at(b.Dst, d.DstStrides, d.DstDT)
		case rGamma:
			return at(b.Gamma, d.Gamma.Strides, d.Gamma.DT)
		case rBeta:
			return at(b.Beta, d.Beta.Strides, d.Beta.DT)
		case rMean:
			return at(b.Mean, d.Mean.Strides, dtypes.F32)
		case rVar:
			return at(b.Var, d.Var.Strides, dtypes.F32)
		case rStats:
			return at(b.Stats, d.Stats.Strides, dtypes.F32)
		case rBin:
			op := binaryOp(d.PostOps, r.i)
			return at(bins[r.i], op.BinStrides, op.BinDT)
		case rScratch:
			return scratch[r.i]
		case rDqZero:
			return p.dq[:4]
		case rDqScale:
			return p.dq[4:]
		}
		if d.EpsDT != dtypes.Undef {
			return b.Eps
		}
		return p.eps
	}
	var opnds [plan.MaxBinary][]byte
	if ps.fused != nil {
		bs := opnds[:0]
		if d.Residual != nil {
			bs = append(bs, buf(ref{rX, 0}), buf(ref{rSkip, 0}))
			if d.Residual.Bias != nil {
				bs = append(bs, buf(ref{rResBias, 0}))
			}
		}
		if d.Gamma != nil {
			bs = append(bs, buf(ref{rGamma, 0}))
		}
		if d.Beta != nil {
			bs = append(bs, buf(ref{rBeta, 0}))
		}
		for i := range len(bins) {
			bs = append(bs, buf(ref{rBin, i}))
		}
		if d.Mean != nil {
			bs = append(bs, buf(ref{rMean, 0}))
		}
		if d.Var != nil {
			bs = append(bs, buf(ref{rVar, 0}))
		}
		if d.Stats != nil {
			bs = append(bs, buf(ref{rStats, 0}))
		}
		eps := d.Epsilon
		if d.EpsDT != dtypes.Undef {
			eps = dtypes.LoadF32(d.EpsDT, b.Eps, 0) // checked by Run
		}
		return ps.fused.Run(buf(ref{rSrc, 0}), buf(ref{rDst, 0}), bs, eps)
	}
	if in, cp, ok := p.inPlaceCopy(ps, c, s, buf); ok {
		orig := buf
		buf = func(r ref) []byte {
			if r == in {
				return cp
			}
			return orig(r)
		}
	}
	for _, st := range ps.steps {
		if st.k == nil {
			// Its operands are passed one by one: a slice of opnds
			// would take the array to the heap on every call.
			if err := st.fn(buf(st.dst), buf(st.src), buf(st.bins[0]), buf(st.bins[1])); err != nil {
				return err
			}
			continue
		}
		bs := opnds[:len(st.bins)]
		for i, r := range st.bins {
			bs[i] = buf(r)
		}
		if err := st.k.RunInline(buf(st.src), buf(st.dst), bs); err != nil {
			return err
		}
	}
	return nil
}

// correctNearConstant returns a pass over the distances Y of a chunk's
// rows to their summed means mu0 (src), with the rows' mean squares v0
// of Y and mu0 as its bins. It sets each row's m1 (dst) to 0, except
// for a row whose variance v0 is below (kernelshape.NearConstant·mu0)²
// and whose m1 is finite: there m1 is the mean of Y, taken with k, and
// corrects the row's statistics, mu0 + m1 for the mean and v0 - m1² (at
// least 0) for the variance. Only a chunk holding such a row reads Y
// again.
func correctNearConstant(k *jit.Kernel) func(m1, y, v0, mu0 []byte) error {
	return func(m1, y, v0, mu0 []byte) error {
		rows := int64(len(m1) / 4)
		near := func(i int64) bool {
			m := float64(dtypes.LoadF32(dtypes.F32, mu0, i)) * kernelshape.NearConstant
			return float64(dtypes.LoadF32(dtypes.F32, v0, i)) < m*m
		}
		some := false
		for i := int64(0); i < rows && !some; i++ {
			some = near(i)
		}
		if !some {
			clear(m1)
			return nil
		}
		if err := k.RunInline(y, m1, nil); err != nil {
			return err
		}
		for i := range rows {
			c := dtypes.LoadF32(dtypes.F32, m1, i)
			if !near(i) || math.IsInf(float64(c), 0) || math.IsNaN(float64(c)) {
				dtypes.StoreF32(dtypes.F32, m1, i, 0)
				continue
			}
			v := dtypes.LoadF32(dtypes.F32, v0, i) - c*c
			dtypes.StoreF32(dtypes.F32, v0, i, max(v, 0))
			dtypes.StoreF32(dtypes.F32, mu0, i, dtypes.LoadF32(dtypes.F32, mu0, i)+c)
		}
		return nil
	}
}

// binaryOp is the i-th binary post-op of ops.
func binaryOp(ops []plan.PostOp, i int) plan.PostOp {
	for _, op := range ops {
		if op.Kind.IsBinary() {
			if i == 0 {
				return op
			}
			i--
		}
	}
	return plan.PostOp{}
}
