package reduce

import (
	"os"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestMain counts the calls of machine code per ISA under
// GDNN_TEST_COUNT_CALLS=1 and reports them after the tests
// (kerneltest.ReportCalls), so that a run on another platform, such as
// CI's windows/amd64 run under wine, shows which code ran.
func TestMain(m *testing.M) {
	if kerneltest.CountCalls() {
		jit.SetCallCounting(true)
	}
	jit.SetShareBytes(kerneltest.SmallShare)
	code := m.Run()
	var calls []kerneltest.ImplCalls
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.NEON} {
		calls = append(calls, kerneltest.ImplCalls{Impl: "jit:" + isa.String(), N: jit.CallCount(isa)})
	}
	kerneltest.ReportCalls("reduce", calls...)
	os.Exit(code)
}
