package arm64

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/jit/execmem"
	"github.com/gdnn/gdnn/jit/plan"
)

// Test plumbing: mapping emitted code and calling it on byte buffers.
// Emitted code runs only on arm64 (natively or under
// qemu-aarch64-static via go test -exec); elsewhere the execution tests
// skip and the disassembly tests still run.

// needARM64 skips t unless the test binary runs on arm64.
func needARM64(t testing.TB) {
	t.Helper()
	if runtime.GOARCH != "arm64" {
		t.Skip("emitted AArch64 code runs only on arm64 (GOARCH=arm64 go test -exec qemu-aarch64-static)")
	}
}

// kernel is emitted code mapped executable.
type kernel struct {
	code *execmem.Code
}

// compile emits pl and maps it.
func compile(t testing.TB, pl *plan.Plan) *kernel {
	t.Helper()
	b, err := Emit(pl)
	if err != nil {
		t.Fatalf("Emit(%v): %v", pl, err)
	}
	c, err := execmem.New(b)
	if err != nil {
		t.Fatalf("execmem.New: %v", err)
	}
	return &kernel{code: c}
}

func (k *kernel) release() { _ = k.code.Release() }

// addr is the address of b's first byte (0 for an empty buffer).
func addr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// call runs the kernel once with Count count, starting at the given byte
// offsets into the buffers.
func (k *kernel) call(src, dst []byte, bins [][]byte, count int64, srcOff, dstOff int64, binOff []int64) {
	var a plan.Args
	a.Src = addr(src) + uintptr(srcOff)
	a.Dst = addr(dst) + uintptr(dstOff)
	a.Count = count
	for i, b := range bins {
		a.Bins[i] = addr(b) + uintptr(binOff[i])
	}
	k.code.Call(unsafe.Pointer(&a))
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(bins)
}

// runBlocks runs the whole plan as consecutive calls of `block`
// iterations of the outermost Outer loop each (block <= 0: one call).
func (k *kernel) runBlocks(pl *plan.Plan, src, dst []byte, bins [][]byte, block int64) {
	if len(pl.Outer) == 0 {
		k.call(src, dst, bins, 1, 0, 0, make([]int64, len(bins)))
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
		k.call(src, dst, bins, min(block, n-start),
			start*o.SrcStride*int64(pl.SrcDT.Size()), start*o.DstStride*int64(pl.DstDT.Size()), offs)
	}
}
