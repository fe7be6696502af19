// Package execmem maps machine code into executable memory and calls it.
//
// Code is written into a fresh anonymous read-write mapping, made
// coherent with the instruction cache where the CPU needs that, and then
// flipped to read+execute. No mapping is ever writable and executable at
// once (W^X), so gdnn runs on kernels that forbid such mappings.
//
// Where: linux/amd64, linux/arm64, darwin/amd64, darwin/arm64 and
// freebsd/amd64 through mmap and mprotect (sys_unix.go), windows/amd64
// through VirtualAlloc and VirtualProtect (sys_windows.go). Elsewhere New
// fails with Unimplemented; where the OS refuses executable memory
// (macOS's hardened runtime without the entitlement for unsigned
// executable memory, codesign.go; Windows's Arbitrary Code Guard;
// SELinux or PaX on Linux) it fails with RuntimeError, saying why. The
// callers then run the interpreter.
//
// A kernel is called through a few lines of per-GOARCH assembly (the
// trampoline) with a single argument: a pointer to the plan.Args block
// (amd64: in DI; arm64: in R0). The kernel contract (registers it may
// clobber, no stack use) is in package internal/plan.
package execmem

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gdnn/gdnn/internal/status"
)

// Code is one block of machine code mapped read+execute.
//
// Call and Len may run concurrently from many goroutines. Release must not
// run concurrently with a Call of the same Code (the kernel cache in
// package jit reference-counts kernels for that); a Call after Release
// returns without running anything.
type Code struct {
	mem      []byte         // the whole mapping, page-rounded; nil once released
	entry    unsafe.Pointer // first byte of the code (== &mem[0])
	n        int            // code bytes, without the page rounding
	released atomic.Bool
	mu       sync.Mutex // serialises Release with itself
}

// mapped counts the bytes of all live executable mappings.
var mapped atomic.Int64

// MappedBytes returns how many bytes of executable memory are mapped by
// all live Code objects (whole pages, as the kernel accounts them).
func MappedBytes() int64 { return mapped.Load() }

// failHook, when set, is asked before each system call New makes; a
// non-nil answer makes that step fail as if the kernel had refused it.
var failHook atomic.Pointer[func(op string) error]

// SetFailHook installs f as the fault-injection hook: New calls f("mmap")
// before mapping and f("mprotect") before making the mapping executable
// (the steps are named so on every OS; on Windows they are VirtualAlloc
// and VirtualProtect),
// and fails with f's error when it returns one. It exists so that tests can
// show the callers' fallbacks work when executable memory is refused (for
// example by a hardened kernel). f == nil removes the hook. The returned
// function restores the hook that was installed before.
func SetFailHook(f func(op string) error) (restore func()) {
	var p *func(op string) error
	if f != nil {
		p = &f
	}
	old := failHook.Swap(p)
	return func() { failHook.Store(old) }
}

// injected returns the fail hook's answer for op, or nil.
func injected(op string) error {
	if p := failHook.Load(); p != nil {
		return (*p)(op)
	}
	return nil
}

// New maps a copy of code as executable memory. The bytes are copied, so
// the caller may reuse its slice. It fails with graph.InvalidArguments for
// empty code, graph.OutOfMemory when the mapping cannot be had,
// graph.RuntimeError when it cannot be made executable, and
// graph.Unimplemented on platforms without executable-memory support.
func New(code []byte) (*Code, error) {
	if len(code) == 0 {
		return nil, status.Errorf(status.InvalidArguments, "execmem: code is empty (0 bytes)")
	}
	mem, err := mapCode(code)
	if err != nil {
		return nil, err
	}
	mapped.Add(int64(len(mem)))
	return &Code{mem: mem, entry: unsafe.Pointer(&mem[0]), n: len(code)}, nil
}

// Call runs the code with args (a *plan.Args) as its only argument and
// reports whether it ran: false for a nil or released Code, which runs
// nothing. The code runs to completion on the calling goroutine's thread;
// it cannot be preempted, which is why callers keep each call short.
func (c *Code) Call(args unsafe.Pointer) bool {
	if c == nil || c.released.Load() {
		return false
	}
	call(c.entry, args)
	return true
}

// Release unmaps the code. It is idempotent; Calls after it run nothing
// and return false.
func (c *Code) Release() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mem == nil {
		return nil
	}
	c.released.Store(true)
	mem := c.mem
	c.mem = nil
	if err := unmap(mem); err != nil {
		return err
	}
	mapped.Add(-int64(len(mem)))
	return nil
}

// Len returns the number of code bytes (not rounded to pages).
func (c *Code) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}
