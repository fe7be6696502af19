package jit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

// hasRequired reports whether this CPU runs the configuration req (a
// kerneltest.RequireEnv value).
func hasRequired(req string) bool {
	f := cpuFeatures()
	switch req {
	case kerneltest.RequireAVX512:
		return f.avx512
	case kerneltest.RequireAVX512BF16:
		return f.avx512bf16
	}
	return false
}

// TestMain fails the package at once when GDNN_TEST_REQUIRE_ISA asks for
// what this CPU lacks; under it, it counts the calls of AVX-512 code and
// reports them after the tests (the marker .ci/avx512 reads), and under
// GDNN_TEST_COUNT_CALLS=1 the calls of every ISA (kerneltest.ReportCalls).
func TestMain(m *testing.M) {
	err := kerneltest.CheckRequired(hasRequired)
	if err == nil {
		_, err = kerneltest.F32OutputsOnly()
	}
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	if req, _ := kerneltest.Required(); req != "" || kerneltest.CountCalls() {
		SetCallCounting(true)
	}
	SetShareBytes(kerneltest.SmallShare)
	code := m.Run()
	kerneltest.Report("jit", CallCount(AVX512))
	kerneltest.ReportCalls("jit", implCalls()...)
	os.Exit(code)
}

// implCalls are the calls counted per JIT ISA, for ReportCalls.
func implCalls() []kerneltest.ImplCalls {
	var out []kerneltest.ImplCalls
	for _, isa := range []ISA{AVX512, AVX2, NEON} {
		out = append(out, kerneltest.ImplCalls{Impl: "jit:" + isa.String(), N: CallCount(isa)})
	}
	return out
}

// testISAs are the ISAs the differential tests run under: every one this
// machine has under GDNN_MAX_CPU_ISA, the interpreter included (AVX-512
// without AVX2 under the race detector, kerneltest.RaceDetector); under
// GDNN_TEST_REQUIRE_ISA only AVX-512 (TestMain has checked that the CPU
// runs it).
func testISAs() []ISA {
	if req, _ := kerneltest.Required(); req != "" {
		return []ISA{AVX512}
	}
	var out []ISA
	for _, isa := range []ISA{AVX512, AVX2, NEON, None} {
		if !supported(isa) || !underEnvCap(isa) || isa == AVX2 && kerneltest.RaceDetector && slices.Contains(out, AVX512) {
			continue
		}
		out = append(out, isa)
	}
	return out
}

// underEnvCap reports whether GDNN_MAX_CPU_ISA lets SetMaxISA(isa) run
// isa: SetMaxISA cannot lift the environment's cap.
func underEnvCap(isa ISA) bool {
	initCap()
	return rank(isa) <= rank(ISA(envCap.Load()))
}

// TestCallCounting checks the per-ISA call counter: off, calls leave it
// alone; on, every call of machine code adds one to its ISA and the
// interpreter adds nothing.
func TestCallCounting(t *testing.T) {
	if CallCount(ISA(-1)) != 0 || CallCount(ISA(len(isaNames))) != 0 {
		t.Fatal("CallCount of an unknown ISA is not 0")
	}
	r := rand.New(rand.NewPCG(9, 10))
	c := spec{dims: []int64{8, 64}, reduce: []bool{false, true}, sdt: f32t, ddt: f32t}.build(t, r)
	for _, isa := range testISAs() {
		t.Run(isa.String(), func(t *testing.T) {
			prev := SetMaxISA(isa)
			defer SetMaxISA(prev)
			k := c.compile(t)
			before := CallCount(isa)
			was := SetCallCounting(false)
			defer SetCallCounting(was)
			if err := k.Run(c.src, c.newDst(), c.bins); err != nil {
				t.Fatal(err)
			}
			if got := CallCount(isa); got != before {
				t.Fatalf("counting off: count went from %d to %d", before, got)
			}
			SetCallCounting(true)
			for range 3 {
				if err := k.Run(c.src, c.newDst(), c.bins); err != nil {
					t.Fatal(err)
				}
			}
			want := before + 3 // one call per Run: 2 KiB is far below the budget
			if isa == None {
				want = before
			}
			if got := CallCount(isa); got != want {
				t.Fatalf("counting on, 3 Runs (%s): count %d, want %d", k.Impl(), got, want)
			}
		})
	}
}
