package jit

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/isa/amd64"
	"github.com/gdnn/gdnn/internal/isa/arm64"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// NormKernel is a fused normalization's machine code (the shape
// kernelshape.NormRows, or NormColumns where the plan has an Inner
// loop): each call normalizes the rows of its plan, reading each row's
// src from memory once. It owns its code, which is
// unmapped once the kernel is unreachable. Safe for concurrent use.
type NormKernel struct {
	code *execmem.Code
	// streamed, where not nil, is the code whose map stores dst
	// non-temporally (kernelshape.Norm.StreamDst); a call runs it where
	// its dst is aligned to streamAlign bytes, which its rows' strides
	// keep.
	streamed    *execmem.Code
	streamAlign int64
	isa         ISA
	count       int64                // rows of the first Outer loop (1: none)
	spans       []int64              // bytes each call reads or writes: src, dst, then each binary operand
	staged      bool                 // the code keeps a tile's rows in plan.NormArgs.Stage
	pl          *plan.Plan           // the map plan, for the verbose lines
	kind        kernelshape.NormKind // for the verbose lines
}

// CompileNorm compiles n for the effective ISA. Where no emitter takes n
// (the interpreter, a post-op or type the emitter lacks, executable
// memory refused) it returns a nil kernel and says why; an error is a
// malformed n.
func CompileNorm(n *kernelshape.Norm) (*NormKernel, string, error) {
	var t0 time.Time
	if verboseLevel() > 0 {
		t0 = time.Now()
	}
	if n == nil || n.Plan == nil || len(n.Plan.Reduced) != 1 {
		return nil, "", status.Errorf(status.InvalidArguments, "jit: a fused normalization needs a plan with one row loop")
	}
	if err := n.Check(); err != nil {
		return nil, "", err
	}
	// CheckColumns refuses only what is malformed (InvalidArguments):
	// every normalization kind over columns is emitted.
	if n.Plan.HasInner {
		if err := n.CheckColumns(); err != nil {
			return nil, "", err
		}
	}
	isa := EffectiveISA()
	regular := *n
	regular.StreamDst = false
	code, why, err := emitNorm(&regular, isa)
	if code.Text == nil {
		return nil, why, err
	}
	// The code that streams, where it differs (a map that rewrites kept
	// exps streams nothing).
	var streamed []byte
	staged := code.Staged
	align := streamAlign(n, isa)
	if align > 0 {
		s, why, err := emitNorm(n, isa)
		if s.Text == nil {
			return nil, why, err
		}
		if !bytes.Equal(s.Text, code.Text) {
			streamed = s.Text
			staged = staged || s.Staged
		}
	}
	c, err := execmem.New(code.Text)
	if err != nil {
		return nil, fmt.Sprintf("executable memory: %v", err), nil
	}
	// Only code that stages its tiles takes a scratch a call.
	k := &NormKernel{code: c, isa: isa, count: 1, spans: normSpans(n.Plan), staged: staged,
		pl: n.Plan, kind: n.Kind}
	if len(n.Plan.Outer) > 0 {
		k.count = n.Plan.Outer[0].Size
	}
	runtime.AddCleanup(k, func(c *execmem.Code) { _ = c.Release() }, c)
	if streamed != nil {
		s, err := execmem.New(streamed)
		if err != nil {
			return nil, fmt.Sprintf("executable memory: %v", err), nil
		}
		k.streamed, k.streamAlign = s, align
		runtime.AddCleanup(k, func(c *execmem.Code) { _ = c.Release() }, s)
	}
	// Only a kernel that runs says so: where none is returned, the
	// caller's passes compile and report their own kernels.
	if verboseLevel() > 0 {
		verboseln(compileLine(k.Impl(), k.what(), k.schedule(), false, time.Since(t0), ""))
	}
	return k, "", nil
}

// what describes the kernel for the verbose lines: its map plan and the
// normalization whose statistics it computes.
func (k *NormKernel) what() string { return k.pl.String() + " norm=" + k.kind.String() }

// schedule is the kernel's schedule on its verbose lines: fused rows,
// or fused columns where the plan has an Inner loop.
func (k *NormKernel) schedule() string {
	if k.pl.HasInner {
		return "split:fused-columns"
	}
	return "split:fused-rows"
}

// emitNorm emits n's machine code for isa, or returns no Text and why
// not (see CompileNorm).
func emitNorm(n *kernelshape.Norm, isa ISA) (plan.Code, string, error) {
	var code plan.Code
	var err error
	switch {
	case isa == None:
		return plan.Code{}, noJITReason(), nil
	case (isa == AVX512 || isa == AVX2) && runtime.GOARCH == "amd64":
		code, err = amd64.EmitNorm(n, amd64Options(isa))
	case isa == NEON && runtime.GOARCH == "arm64":
		code, err = arm64.EmitNorm(n)
	default:
		return plan.Code{}, fmt.Sprintf("jit: no fused normalization emitter for %s on %s", isa, runtime.GOARCH), nil
	}
	if err != nil {
		if errors.Is(err, status.Unimplemented) {
			return plan.Code{}, fmt.Sprintf("%s emitter: %v", isa, err), nil
		}
		return plan.Code{}, "", err
	}
	return code, "", nil
}

// stageAlign is the alignment of plan.NormArgs.Stage: a cache line.
const stageAlign = 64

// streamAlign is the alignment of dst a call of n's streaming code
// needs, or 0 where n does not stream or isa streams nothing: amd64's
// non-temporal stores fault on an address not aligned to what they store
// (amd64.StreamAlign). The map stores whole vectors (pairs of them, where
// it pairs) at multiples of that from each row's (or, over columns, each
// channel's) start, so every dst stride between those starts must be a
// multiple of it too; then an aligned dst pointer aligns every store.
func streamAlign(n *kernelshape.Norm, isa ISA) int64 {
	pl := n.Plan
	if !n.StreamDst || (isa != AVX512 && isa != AVX2) || runtime.GOARCH != "amd64" {
		return 0
	}
	align := amd64.StreamAlign(pl.DstDT, amd64Options(isa))
	if align == 0 {
		return 0
	}
	strides := make([]int64, 0, len(pl.Outer)+1)
	for _, l := range pl.Outer {
		strides = append(strides, l.DstStride)
	}
	if pl.HasInner {
		strides = append(strides, pl.Reduced[0].DstStride)
	}
	for _, s := range strides {
		if s*int64(pl.DstDT.Size())%align != 0 {
			return 0
		}
	}
	return align
}

// normSpans are the bytes one call touches in src, dst and each binary
// operand: one past the last element, from the first.
func normSpans(pl *plan.Plan) []int64 {
	loops := append(append([]plan.Loop(nil), pl.Outer...), pl.Reduced...)
	if pl.HasInner {
		loops = append(loops, pl.Inner)
	}
	span := func(size int64, stride func(l *plan.Loop) int64) int64 {
		last := int64(0)
		for i := range loops {
			if loops[i].Size == 0 {
				return 0
			}
			last += (loops[i].Size - 1) * stride(&loops[i])
		}
		return (last + 1) * size
	}
	out := []int64{
		span(int64(pl.SrcDT.Size()), func(l *plan.Loop) int64 { return l.SrcStride }),
		span(int64(pl.DstDT.Size()), func(l *plan.Loop) int64 { return l.DstStride }),
	}
	b := 0
	for _, op := range pl.PostOps {
		if op.Kind.IsBinary() {
			i := b
			out = append(out, span(int64(op.BinDT.Size()), func(l *plan.Loop) int64 { return l.BinStrides[i] }))
			b++
		}
	}
	return out
}

// Streams reports whether the kernel stores dst non-temporally where a
// call's dst is aligned for it (kernelshape.Norm.StreamDst).
func (k *NormKernel) Streams() bool { return k.streamed != nil }

// codeFor is the code a call whose dst starts at dst runs.
func (k *NormKernel) codeFor(dst uintptr) *execmem.Code {
	if k.streamed != nil && int64(dst)%k.streamAlign == 0 {
		return k.streamed
	}
	return k.code
}

// ISA is the instruction set the kernel's code is for.
func (k *NormKernel) ISA() ISA { return k.isa }

// Impl names the implementation, as Kernel.Impl does.
func (k *NormKernel) Impl() string { return "jit:" + k.isa.String() }

// Run normalizes the kernel's rows of src into dst on the calling
// goroutine, bins one per binary post-op, each from its first element;
// eps is the epsilon of a kernel compiled to read it at run time
// (kernelshape.Norm.EpsArg), else unused. A buffer shorter than its
// span is an InvalidArguments error.
func (k *NormKernel) Run(src, dst []byte, bins [][]byte, eps float32) (err error) {
	if len(bins) != len(k.spans)-2 {
		return status.Errorf(status.InvalidArguments, "jit: %d binary operands given, the fused normalization has %d", len(bins), len(k.spans)-2)
	}
	// Indexed, not gathered into one slice: Run is called per chunk, and
	// a slice of src, dst and bins would be allocated each time.
	for i, span := range k.spans {
		b := src
		switch {
		case i == 1:
			b = dst
		case i > 1:
			b = bins[i-2]
		}
		if int64(len(b)) < span {
			return status.Errorf(status.InvalidArguments, "jit: buffer %d of a fused normalization has %d bytes, its span %d", i, len(b), span)
		}
	}
	if k.spans[0] == 0 {
		return nil
	}
	a := plan.NormArgs{Args: plan.Args{Src: addr(src, 0), Dst: addr(dst, 0), Count: k.count}, Eps: eps}
	code := k.codeFor(a.Dst)
	for i, b := range bins {
		a.Bins[i] = addr(b, 0)
	}
	if k.staged {
		// Pooled: the scratch is a call's own while it runs.
		buf, h := getScratch(plan.NormStageBytes + stageAlign)
		defer putScratch(h)
		a.Stage = addr(buf, 0)
		a.Stage += -a.Stage & (stageAlign - 1)
		defer runtime.KeepAlive(buf)
	}
	var t0 time.Time
	if verboseLevel() > 0 {
		t0 = time.Now()
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(&err)
	if !code.Call(unsafe.Pointer(&a)) {
		return status.Errorf(status.RuntimeError, "jit: the fused normalization's code was released")
	}
	runtime.KeepAlive(k)
	if verboseLevel() > 0 {
		// Run is one call on the calling goroutine.
		verboseln(execLine(k.Impl(), k.what(), k.schedule(), 1, time.Since(t0)))
	}
	return nil
}
