package amd64

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/jit/execmem"
	"github.com/gdnn/gdnn/jit/plan"
	"golang.org/x/sys/cpu"
)

// Test plumbing: which ISAs this machine can run, and calling emitted
// code on byte buffers.

// isaCase is one instruction-set configuration under test.
type isaCase struct {
	name string
	o    Options
}

// isas returns the configurations this CPU can execute. AVX2 is the
// floor; tests skip when even that is missing.
func isas(t testing.TB) []isaCase {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("emitted x86-64 code runs only on amd64")
	}
	var out []isaCase
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		out = append(out, isaCase{"avx2", Options{}})
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL {
		out = append(out, isaCase{"avx512", Options{AVX512: true}})
		if cpu.X86.HasAVX512BF16 {
			out = append(out, isaCase{"avx512bf16", Options{AVX512: true, BF16: true}})
		}
	}
	if len(out) == 0 {
		t.Skip("CPU has neither AVX2+FMA nor AVX-512")
	}
	return out
}

// kernel is emitted code mapped executable.
type kernel struct {
	code *execmem.Code
}

// compile emits pl for o and maps it.
func compile(t testing.TB, pl *plan.Plan, o Options) *kernel {
	t.Helper()
	b, err := Emit(pl, o)
	if err != nil {
		t.Fatalf("Emit(%v, %+v): %v", pl, o, err)
	}
	c, err := execmem.New(b)
	if err != nil {
		t.Fatalf("execmem.New: %v", err)
	}
	return &kernel{code: c}
}

func (k *kernel) release() { _ = k.code.Release() }

// ptr is the address of b's first byte (0 for an empty buffer).
func ptr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// call runs the kernel with byte offsets into the buffers and a Count.
func (k *kernel) call(src, dst []byte, bins [][]byte, count int64, srcOff, dstOff int64, binOff []int64) {
	var a plan.Args
	a.Src = ptr(src) + uintptr(srcOff)
	a.Dst = ptr(dst) + uintptr(dstOff)
	a.Count = count
	for i, b := range bins {
		a.Bins[i] = ptr(b) + uintptr(binOff[i])
	}
	k.code.Call(unsafe.Pointer(&a))
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(bins)
}

// runAll runs the whole plan, in blocks of `block` iterations of the
// outermost Outer loop (block <= 0: one call).
func (k *kernel) runAll(pl *plan.Plan, src, dst []byte, bins [][]byte, block int64) {
	if len(pl.Outer) == 0 {
		k.call(src, dst, bins, 1, 0, 0, make([]int64, len(bins)))
		return
	}
	o := pl.Outer[0]
	n := o.Size
	if block <= 0 || block > n {
		block = n
	}
	binDT := binTypes(pl)
	for start := int64(0); start < n; start += block {
		cnt := min(block, n-start)
		offs := make([]int64, len(bins))
		for i := range bins {
			offs[i] = start * o.BinStrides[i] * int64(binDT[i].Size())
		}
		k.call(src, dst, bins, cnt, start*o.SrcStride*int64(pl.SrcDT.Size()), start*o.DstStride*int64(pl.DstDT.Size()), offs)
	}
}
