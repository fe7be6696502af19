package partition

import (
	"fmt"
	"os"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"

	"github.com/gdnn/gdnn/internal/jit"
)

// isaCaps are the ISA caps to run the end-to-end tests under: every JIT
// ISA this machine has under GDNN_MAX_CPU_ISA (AVX-512 without AVX2
// under the race detector, kerneltest.RaceDetector), and none (the
// interpreter); under GDNN_TEST_REQUIRE_ISA only AVX-512 (TestMain has
// checked that the CPU runs it).
func isaCaps() []jit.ISA {
	if req, _ := kerneltest.Required(); req != "" {
		return []jit.ISA{jit.AVX512}
	}
	caps := []jit.ISA{jit.None}
	switch jit.EffectiveISA() {
	case jit.AVX512:
		if !kerneltest.RaceDetector {
			caps = append(caps, jit.AVX2)
		}
		caps = append(caps, jit.AVX512)
	case jit.AVX2:
		caps = append(caps, jit.AVX2)
	case jit.NEON:
		caps = append(caps, jit.NEON)
	}
	return caps
}

// forEachISA runs f as a subtest under each ISA cap.
func forEachISA(t *testing.T, f func(t *testing.T, isa jit.ISA)) {
	t.Helper()
	for _, isa := range isaCaps() {
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			f(t, isa)
		})
	}
}

// wantImpl checks that a compiled partition runs on the capped ISA's JIT
// (or the interpreter when capped to none).
func wantImpl(t *testing.T, c *CompiledPartition, isa jit.ISA) {
	t.Helper()
	want := "interp"
	if isa != jit.None {
		want = "jit:" + isa.String()
	}
	if got := c.Impl(); got != want {
		t.Errorf("implementation %s, want %s", got, want)
	}
}

// TestMain fails the package at once when GDNN_TEST_REQUIRE_ISA asks for
// what this CPU lacks; under it, it counts the calls of AVX-512 code and
// reports them after the tests (the marker .ci/avx512 reads), and under
// GDNN_TEST_COUNT_CALLS=1 the calls of every ISA. Only
// "avx512" applies here: the runtime picks AVX512_BF16 rounding by
// itself where the CPU has it, so the bf16 configuration is proven by
// the emitter tests (package amd64).
func TestMain(m *testing.M) {
	req, err := kerneltest.Required()
	if err == nil && req == kerneltest.RequireAVX512BF16 {
		err = fmt.Errorf("%s=%s applies to the emitter tests (package amd64) only", kerneltest.RequireEnv, req)
	}
	if err == nil {
		err = kerneltest.CheckRequired(func(string) bool { return jit.DetectedISA() == jit.AVX512 })
	}
	if err == nil {
		_, err = kerneltest.F32OutputsOnly()
	}
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	if req != "" || kerneltest.CountCalls() {
		jit.SetCallCounting(true)
	}
	jit.SetShareBytes(kerneltest.SmallShare)
	code := m.Run()
	kerneltest.Report("partition", jit.CallCount(jit.AVX512))
	kerneltest.ReportCalls("partition", implCalls()...)
	os.Exit(code)
}

// implCalls are the calls counted per JIT ISA, for
// kerneltest.ReportCalls.
func implCalls() []kerneltest.ImplCalls {
	var out []kerneltest.ImplCalls
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.NEON} {
		out = append(out, kerneltest.ImplCalls{Impl: "jit:" + isa.String(), N: jit.CallCount(isa)})
	}
	return out
}
