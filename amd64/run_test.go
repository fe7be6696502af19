package amd64

import (
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/jit/kerneltest"
	"github.com/gdnn/gdnn/jit/plan"
	"golang.org/x/sys/cpu"
)

// Test plumbing: which ISAs this machine can run, and emitting code ready
// to call (package kerneltest calls it on byte buffers).

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

// compile emits pl for o and maps it.
func compile(t testing.TB, pl *plan.Plan, o Options) *kerneltest.Kernel {
	t.Helper()
	b, err := Emit(pl, o)
	if err != nil {
		t.Fatalf("Emit(%v, %+v): %v", pl, o, err)
	}
	return kerneltest.Map(t, b)
}
