//go:build windows && amd64

package execmem

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/gdnn/gdnn/internal/status"
)

// flushInstructionCache is kernel32's FlushInstructionCache, which
// golang.org/x/sys/windows does not wrap.
var flushInstructionCache = windows.NewLazySystemDLL("kernel32.dll").NewProc("FlushInstructionCache")

// mapCode commits fresh read-write pages with VirtualAlloc, copies code
// in, flushes the instruction cache for them and flips them to
// execute+read with VirtualProtect. On any failure the pages are freed
// again, so nothing leaks. x86 keeps instruction fetch coherent with
// stores, but FlushInstructionCache is what Windows documents for code
// written at run time, and it costs one call per kernel.
//
// VirtualAlloc reserves address space in 64 KiB granules, so each kernel
// holds that much of it; only the committed pages take memory, and
// MappedBytes counts those, as on the other OSes.
//
// A process under Arbitrary Code Guard (the ProcessDynamicCodePolicy
// mitigation) may not make memory executable: VirtualProtect fails with
// ERROR_DYNAMIC_CODE_BLOCKED, and the error says so.
func mapCode(code []byte) ([]byte, error) {
	// A handler that cannot be installed costs only the recovery of a
	// faulting kernel, not the machine code.
	_ = catchKernelFaults()
	page := os.Getpagesize()
	size := (len(code) + page - 1) / page * page
	if err := injected("mmap"); err != nil {
		return nil, status.Errorf(status.OutOfMemory, "execmem: VirtualAlloc of %d bytes refused: %v", size, err)
	}
	p, err := windows.VirtualAlloc(0, uintptr(size), windows.MEM_COMMIT|windows.MEM_RESERVE, windows.PAGE_READWRITE)
	if err != nil {
		return nil, status.Errorf(status.OutOfMemory, "execmem: VirtualAlloc of %d bytes: %v", size, err)
	}
	// The pages are outside the Go heap: the GC never moves or frees
	// them, so the address may become a pointer.
	mem := unsafe.Slice((*byte)(unsafe.Add(nil, p)), size)
	copy(mem, code)
	// Coherence first, then the flip: the bytes are final before any thread
	// can execute them.
	if err := flushICacheWindows(p, len(code)); err != nil {
		_ = windows.VirtualFree(p, 0, windows.MEM_RELEASE)
		return nil, err
	}
	if err := injected("mprotect"); err != nil {
		_ = windows.VirtualFree(p, 0, windows.MEM_RELEASE)
		return nil, status.Errorf(status.RuntimeError, "execmem: VirtualProtect(PAGE_EXECUTE_READ) of %d bytes refused: %v", size, err)
	}
	var old uint32
	if err := windows.VirtualProtect(p, uintptr(size), windows.PAGE_EXECUTE_READ, &old); err != nil {
		_ = windows.VirtualFree(p, 0, windows.MEM_RELEASE)
		why := ""
		if errors.Is(err, windows.ERROR_DYNAMIC_CODE_BLOCKED) {
			why = " (Arbitrary Code Guard: this process may not create executable memory)"
		}
		return nil, status.Errorf(status.RuntimeError, "execmem: VirtualProtect(PAGE_EXECUTE_READ) of %d bytes: %v%s", size, err, why)
	}
	return mem, nil
}

// flushICacheWindows calls FlushInstructionCache for n bytes at p. A
// kernel32 without it (no Windows lacks it) is an error, not a panic.
func flushICacheWindows(p uintptr, n int) error {
	if err := flushInstructionCache.Find(); err != nil {
		return status.Errorf(status.RuntimeError, "execmem: %v", err)
	}
	if ok, _, err := flushInstructionCache.Call(uintptr(windows.CurrentProcess()), p, uintptr(n)); ok == 0 {
		return status.Errorf(status.RuntimeError, "execmem: FlushInstructionCache of %d bytes: %v", n, err)
	}
	return nil
}

// unmap releases pages committed by mapCode.
func unmap(mem []byte) error {
	if err := windows.VirtualFree(uintptr(unsafe.Pointer(unsafe.SliceData(mem))), 0, windows.MEM_RELEASE); err != nil {
		return status.Errorf(status.RuntimeError, "execmem: VirtualFree of %d bytes: %v", len(mem), err)
	}
	return nil
}
