package normprog

import (
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// The fused kernel: where the normalized dims are one contiguous run of
// src and dst (the innermost dims of a row-major tensor, say) and every
// operand of the map is contiguous along that run or broadcast along
// it, a chunk is one call of a kernel that reads each row for its
// statistics and then maps it (kernelshape.NormRows), with no scratch:
// src is read from memory once and no f32 copy is written. A
// normalization over one dim that is not innermost has a kernel of its
// own (column.go), GroupNorm on channels last its kernels (chanlast.go);
// everything else (other normalized dims elsewhere, GroupNorm on NCHW,
// statistics kept by anything but a layer norm or softmax over rows, the
// interpreter) runs as the program of passes.
//
// A residual sum's operands lead the kernel's binary operands; the
// kernel forms the sum in its first sweep and writes it to src (the
// caller's sum, or one row of scratch that every row reuses), from
// where its later sweeps read it while it is in cache. A layer norm's
// kept mean and variance, or a softmax's log-sum-exp, end them: its
// statistics sweeps write them, one f32 a row.

// useFused is false in tests that compare the fused kernels (and
// GroupNorm's on channels last, chanlast.go) with the passes.
var useFused = true

// fusedKinds maps the kinds the fused kernel computes.
var fusedKinds = map[Kind]kernelshape.NormKind{Softmax: kernelshape.NormSoftmax, LogSoftmax: kernelshape.NormLogSoftmax,
	LayerNorm: kernelshape.NormLayer, RMSNorm: kernelshape.NormRMS, L2Norm: kernelshape.NormL2, L1Norm: kernelshape.NormL1}

// fused compiles the fused kernel of one chunk of dims, or returns nil
// when the description or the ISA has none (then the passes run).
func (p *Program) fused(dims []int64) (*jit.NormKernel, error) {
	d := &p.d
	kind, ok := fusedKinds[p.kind]
	if !ok || !useFused || slices.Contains(dims, 0) || (d.Mean != nil || d.Var != nil) && p.kind != LayerNorm ||
		p.kind == LogSoftmax && d.InfAsZero {
		return nil, nil
	}
	run := normRun(d, dims)
	if run == nil || !alongRun(d.DstStrides, run, dims, false) {
		return nil, nil
	}
	// The residual sum's operands, then the map's post-ops, as the
	// passes' last one has them.
	var post []plan.PostOp
	nres := 0
	if res := d.Residual; res != nil {
		post = append(post, plan.PostOp{Kind: ops.Add, BinDT: res.X.DT, BinStrides: res.X.Strides},
			plan.PostOp{Kind: ops.Add, BinDT: res.Skip.DT, BinStrides: res.Skip.Strides})
		if res.Bias != nil {
			post = append(post, plan.PostOp{Kind: ops.Add, BinDT: res.Bias.DT, BinStrides: res.Bias.Strides})
		}
		nres = len(post)
	}
	if d.Gamma != nil {
		post = append(post, plan.PostOp{Kind: ops.Multiply, BinDT: d.Gamma.DT, BinStrides: d.Gamma.Strides})
	}
	if d.Beta != nil {
		post = append(post, plan.PostOp{Kind: ops.Add, BinDT: d.Beta.DT, BinStrides: d.Beta.Strides})
	}
	post = append(post, d.PostOps...)
	// The kept statistics' operands end the list (kernelshape.Norm's
	// KeepMean, KeepVar and KeepLogSumExp): the kernel writes them, one a row
	// (checkStats: stride 0 along the row).
	nmapped := binaries(post)
	for _, st := range []*Operand{d.Mean, d.Var, d.Stats} {
		if st != nil {
			post = append(post, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: st.Strides})
		}
	}
	if binaries(post) > plan.MaxBinary {
		return nil, nil
	}
	// The operands' strides along the run: 1 (contiguous) or 0.
	var along []int64
	for _, op := range post {
		if !op.Kind.IsBinary() {
			continue
		}
		switch {
		case len(along) >= nmapped:
			along = append(along, 0)
		case alongRun(op.BinStrides, run, dims, false):
			along = append(along, 1)
		case alongRun(op.BinStrides, run, dims, true):
			along = append(along, 0)
		default:
			return nil, nil
		}
	}
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: d.SrcDT, DstDT: d.DstDT, Dims: dims,
		SrcStrides: d.SrcStrides, Reduce: d.Norm, DstStrides: d.DstStrides, PostOps: post})
	if err == nil && len(run) == 0 && len(pl.Reduced) == 0 {
		// Rows of one element: a row loop of 1, the rows all kept loops.
		if pl.HasInner {
			pl.Outer, pl.HasInner = append(pl.Outer, pl.Inner), false
		}
		pl.Reduced = []plan.Loop{{Size: 1, SrcStride: 1}}
	}
	if err != nil || len(pl.Reduced) != 1 || pl.HasInner || pl.Reduced[0].SrcStride != 1 {
		return nil, nil
	}
	pl.Reduced[0].DstStride = 1
	pl.Reduced[0].BinStrides = along
	if res := d.Residual; res != nil && !res.KeepSum {
		// A sum nobody keeps needs only the row being normalized: one
		// row of scratch, which every row reuses while it is in L1.
		for i := range pl.Outer {
			pl.Outer[i].SrcStride = 0
		}
	}
	k, _, err := jit.CompileNorm(&kernelshape.Norm{Kind: kind, Plan: pl, Epsilon: d.Epsilon, InfAsZero: d.InfAsZero,
		EpsArg: d.EpsDT != dtypes.Undef, EpsAdded: d.EpsAdded, Residual: nres, KeepMean: d.Mean != nil, KeepVar: d.Var != nil, KeepLogSumExp: d.Stats != nil, StreamDst: streamsDst(d),
		PrefetchRows: prefetchesRows(d), Dequant: d.Dequant})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// memoryMinBytes is the size, half the L3 of the fleet's cores, from
// which a problem's tensors are taken to live in memory, not the caches
// (a variable: tests lower it).
var memoryMinBytes int64 = 16 << 20

// fromMemory reports whether d's src and dst together are at least
// memoryMinBytes: a call reads src and writes dst through the same L3,
// which other cores share, so it is their sum that the L3 does not keep
// from one call to the next, not either alone.
func fromMemory(d *Desc) bool { return ioBytes(d) >= memoryMinBytes }

// streamsDst reports whether d's fused kernel over rows stores dst
// non-temporally (kernelshape.Norm.StreamDst): where src and dst
// together reach rowStreamMinBytes. From memory, a regular store reads
// each line of dst before writing it (a third stream beside src's read
// and dst's write), and the lines it leaves in the caches evict src's
// and are not read again in the call.
func streamsDst(d *Desc) bool { return ioBytes(d) >= rowStreamMinBytes }

// rowStreamMinBytes is the size of src and dst together from which a
// fused kernel over rows streams dst (a variable: tests lower it). Where
// the L3 keeps src and dst from one call to the next, regular stores
// find dst's lines there and leave them for the next reader, and rows
// run faster so; streamed, each call sends dst to memory. A CPU that
// reports a large L3 shares it with other cores (and, under a
// hypervisor, other tenants): rows keep to regular stores up to a sixth
// of it, up to 80 MiB (docs/PERFORMANCE-log.md, "Intel Xeon, a 480 MiB
// L3: rows stream dst from 80 MiB"). The column kernels (column.go)
// stream from memoryMinBytes on every CPU: there they lost time without
// it.
var rowStreamMinBytes = rowStreamMin(jit.L3Bytes())

// rowStreamMin is rowStreamMinBytes on a CPU whose L3 holds l3 bytes
// (0: unknown).
func rowStreamMin(l3 int64) int64 { return max(memoryMinBytes, min(l3/6, 80<<20)) }

// ioBytes is the size of d's src and dst together.
func ioBytes(d *Desc) int64 {
	return span(d.Dims, d.SrcStrides, int64(d.SrcDT.Size())) + span(d.Dims, d.DstStrides, int64(d.DstDT.Size()))
}

// prefetchesRows reports whether d's fused kernel prefetches the next
// row while it maps one (kernelshape.Norm.PrefetchRows): where d is
// fromMemory.
func prefetchesRows(d *Desc) bool { return fromMemory(d) }

// binaries counts the binary post-ops of post.
func binaries(post []plan.PostOp) int {
	n := 0
	for _, op := range post {
		if op.Kind.IsBinary() {
			n++
		}
	}
	return n
}

// normRun returns the normalized dims of size > 1 from the outermost to
// the innermost when they are one dense run of src ending in stride 1
// (empty, not nil, when every one has size 1), else nil.
func normRun(d *Desc, dims []int64) []int {
	run := []int{}
	for _, i := range srcOrder(d) {
		if d.Norm[i] && dims[i] > 1 {
			run = append(run, i)
		}
	}
	if !alongRun(d.SrcStrides, run, dims, false) {
		return nil
	}
	return run
}

// alongRun reports whether strides are dense over run (innermost 1), or,
// with zero, all 0 there.
func alongRun(strides []int64, run []int, dims []int64, zero bool) bool {
	want := int64(1)
	for k := len(run) - 1; k >= 0; k-- {
		i := run[k]
		switch {
		case zero && strides[i] != 0:
			return false
		case !zero && strides[i] != want:
			return false
		}
		want *= dims[i]
	}
	return true
}
