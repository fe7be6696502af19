// Package kerneltest runs emitted kernels on byte buffers for the
// emitters' tests (packages amd64 and arm64): it maps the code
// executable and calls it with the argument block of internal/plan/abi.go.
// It also holds what the two emitters' tests share: exact data and
// buffers (data.go), the reference and the comparisons with it
// (expect.go, compare.go), the checks of a plan's kernels on each of an
// emitter's configurations (Target: target.go, sweeps.go, lse.go), guard
// pages (fence.go), hand-built and concurrent plans (emit.go), the
// anchors' benchmarks and the objdump runner. It is imported only by
// tests.
package kerneltest

import (
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/plan"
)

// Kernel is emitted code mapped executable.
type Kernel struct {
	t      testing.TB
	code   *execmem.Code
	totals bool

	// Count, when not nil, is incremented by every Call: the tests count
	// the calls of AVX-512 code this way (see AVX512Calls).
	Count *atomic.Int64
}

// Map maps code executable; a failure fails t.
func Map(t testing.TB, code plan.Code) *Kernel {
	t.Helper()
	c, err := execmem.New(code.Text)
	if err != nil {
		t.Fatalf("execmem.New: %v", err)
	}
	return &Kernel{t: t, code: c, totals: code.Totals}
}

// poison is a signalling-NaN pattern the totals area is filled with
// before each call: a kernel that keeps totals must set them before it
// reads them (else NaN comes out), and one that does not must leave them
// alone.
const poison = 0x7fa5a5a5

// Release unmaps the code.
func (k *Kernel) Release() { _ = k.code.Release() }

// addr is the address of b's first byte (0 for an empty buffer).
func addr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// alwaysFalse is never set. Call stores its buffers in sink under it, so
// that they escape to the heap: the argument block holds their addresses
// as integers, and a buffer on a goroutine's stack (Go allocates a small
// make that does not escape there) may move before the kernel writes it,
// which would leave dst as it was. The runtime's own buffers escape the
// same way (jit.Kernel.Run keeps them).
var (
	alwaysFalse bool
	//lint:ignore U1000 written, never read: the store is what makes Call's buffers escape
	sink any
)

// Call runs the kernel once with Count count, starting at the given byte
// offsets into the buffers.
//
// Every call gets a LongArgs block, its totals poisoned: a kernel that
// says it keeps no totals (plan.Code.Totals) and writes there fails the
// test, since the runtime gives it a plain Args.
func (k *Kernel) Call(src, dst []byte, bins [][]byte, count int64, srcOff, dstOff int64, binOff []int64) {
	if alwaysFalse {
		sink = []any{src, dst, bins}
	}
	var a plan.LongArgs
	a.Src = addr(src) + uintptr(srcOff)
	a.Dst = addr(dst) + uintptr(dstOff)
	a.Count = count
	for i, b := range bins {
		a.Bins[i] = addr(b) + uintptr(binOff[i])
	}
	for i := range a.Totals {
		a.Totals[i] = math.Float32frombits(poison)
	}
	if !k.code.Call(unsafe.Pointer(&a)) {
		k.t.Errorf("kernel not called: its code was released")
	}
	if k.Count != nil {
		k.Count.Add(1)
	}
	if !k.totals {
		for i, v := range a.Totals {
			if math.Float32bits(v) != poison {
				k.t.Errorf("kernel wrote totals[%d] (%#x) but says it keeps no totals", i, math.Float32bits(v))
				break
			}
		}
	}
	// The argument block holds the buffers' addresses as integers: keep
	// the buffers alive until the call has returned.
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(bins)
}

// RunBlocks runs the whole plan as consecutive calls of block iterations
// of the outermost Outer loop each (block <= 0: one call), as the
// runtime splits a problem.
func (k *Kernel) RunBlocks(pl *plan.Plan, src, dst []byte, bins [][]byte, block int64) {
	if len(pl.Outer) == 0 {
		k.Call(src, dst, bins, 1, 0, 0, make([]int64, len(bins)))
		return
	}
	o := pl.Outer[0]
	n := o.Size
	if block <= 0 || block > n {
		block = n
	}
	var bsz []int64
	for _, op := range pl.PostOps {
		if op.Kind.IsBinary() {
			bsz = append(bsz, int64(op.BinDT.Size()))
		}
	}
	for start := int64(0); start < n; start += block {
		offs := make([]int64, len(bins))
		for i := range bins {
			offs[i] = start * o.BinStrides[i] * bsz[i]
		}
		k.Call(src, dst, bins, min(block, n-start),
			start*o.SrcStride*int64(pl.SrcDT.Size()), start*o.DstStride*int64(pl.DstDT.Size()), offs)
	}
}
