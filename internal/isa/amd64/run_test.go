package amd64

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
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
// floor; tests skip when even that is missing. Under
// GDNN_TEST_REQUIRE_ISA (kerneltest.RequireEnv) it returns only the
// configuration named there, and fails the test where the CPU cannot run
// it: CI's AVX-512 stage must not pass by skipping.
func isas(t testing.TB) []isaCase {
	t.Helper()
	req, err := kerneltest.Required()
	if err != nil {
		t.Fatal(err)
	}
	if req != "" {
		if runtime.GOARCH != "amd64" || !hasRequired(req) {
			t.Fatalf("%s=%s: this CPU cannot run it", kerneltest.RequireEnv, req)
		}
		if req == kerneltest.RequireAVX512BF16 {
			return []isaCase{{"avx512bf16", Options{AVX512: true, BF16: true}}}
		}
		return []isaCase{{"avx512", Options{AVX512: true}}}
	}
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

// targets are the configurations of isas as kerneltest's targets, for
// the checks shared with package arm64.
func targets(t testing.TB) []kerneltest.Target {
	t.Helper()
	return targetsOf(isas(t))
}

// targetsOf is targets for the configurations isaList.
func targetsOf(isaList []isaCase) []kerneltest.Target {
	var out []kerneltest.Target
	for _, isa := range isaList {
		out = append(out, kerneltest.Target{Name: isa.name, Options: isa.o,
			Compile: func(t testing.TB, pl *plan.Plan) *kerneltest.Kernel { return compile(t, pl, isa.o) }})
	}
	return out
}

// hasRequired reports whether this CPU runs the configuration req
// (a kerneltest.RequireEnv value).
func hasRequired(req string) bool {
	avx512 := cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
	switch req {
	case kerneltest.RequireAVX512:
		return avx512
	case kerneltest.RequireAVX512BF16:
		return avx512 && cpu.X86.HasAVX512BF16
	}
	return false
}

// TestMain fails the package at once when GDNN_TEST_REQUIRE_ISA asks for
// what this CPU lacks, narrows the data type pairs to f32 and integer
// outputs under GDNN_TEST_OUTPUTS=f32, and reports the AVX-512 calls made under
// GDNN_TEST_REQUIRE_ISA.
func TestMain(m *testing.M) {
	if err := kerneltest.CheckRequired(func(req string) bool { return runtime.GOARCH == "amd64" && hasRequired(req) }); err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	f32Only, err := kerneltest.F32OutputsOnly()
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	if f32Only {
		// 8-bit and s32 outputs stay: none of the instructions that
		// store them is one Bochs gets wrong.
		dtPairs = f32Outputs(dtPairs)
		int8Pairs = noHalfOutputs(int8Pairs)
		allPairs = append(append([][2]dtypes.DataType(nil), dtPairs...), int8Pairs...)
	}
	code := m.Run()
	kerneltest.Report("amd64", kerneltest.AVX512Calls.Load())
	os.Exit(code)
}

// compile emits pl for o and maps it; calls of AVX-512 code are counted
// for the report of TestMain.
func compile(t testing.TB, pl *plan.Plan, o Options) *kerneltest.Kernel {
	t.Helper()
	b, err := Emit(pl, o)
	if err != nil {
		t.Fatalf("Emit(%v, %+v): %v", pl, o, err)
	}
	k := kerneltest.Map(t, b)
	if o.AVX512 {
		k.Count = &kerneltest.AVX512Calls
	}
	return k
}

// noHalfOutputs returns the pairs of pairs whose dst is not a 16-bit
// float.
func noHalfOutputs(pairs [][2]dtypes.DataType) [][2]dtypes.DataType {
	var out [][2]dtypes.DataType
	for _, p := range pairs {
		if p[1].Size() != 2 {
			out = append(out, p)
		}
	}
	return out
}

// f32Outputs returns the pairs of pairs whose dst is f32.
func f32Outputs(pairs [][2]dtypes.DataType) [][2]dtypes.DataType {
	var out [][2]dtypes.DataType
	for _, p := range pairs {
		if p[1] == dtypes.F32 {
			out = append(out, p)
		}
	}
	return out
}
