package arm64

import (
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// Test plumbing: emitting code ready to call (package kerneltest calls
// it on byte buffers). Emitted code runs only on arm64 (natively or under
// qemu-aarch64-static via go test -exec); elsewhere the execution tests
// skip and the disassembly tests still run.

// needARM64 skips t unless the test binary runs on arm64.
func needARM64(t testing.TB) {
	t.Helper()
	if runtime.GOARCH != "arm64" {
		t.Skip("emitted AArch64 code runs only on arm64 (GOARCH=arm64 go test -exec qemu-aarch64-static)")
	}
}

// compile emits pl and maps it.
func compile(t testing.TB, pl *plan.Plan) *kerneltest.Kernel {
	t.Helper()
	b, err := Emit(pl)
	if err != nil {
		t.Fatalf("Emit(%v): %v", pl, err)
	}
	return kerneltest.Map(t, b)
}

// targets is NEON as kerneltest's only target, for the checks shared
// with package amd64; it skips t unless the binary runs on arm64.
func targets(t testing.TB) []kerneltest.Target {
	t.Helper()
	needARM64(t)
	return []kerneltest.Target{neon}
}

// neon is the emitter's target: its kernels, compiled.
var neon = kerneltest.Target{Name: "neon", Compile: compile}
