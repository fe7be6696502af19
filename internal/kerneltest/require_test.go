package kerneltest

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

func TestRequired(t *testing.T) {
	for _, v := range []string{"", RequireAVX512, RequireAVX512BF16} {
		t.Setenv(RequireEnv, v)
		if got, err := Required(); got != v || err != nil {
			t.Errorf("%s=%q: Required() = %q, %v", RequireEnv, v, got, err)
		}
	}
	t.Setenv(RequireEnv, "avx2")
	if _, err := Required(); err == nil || !strings.Contains(err.Error(), `"avx2"`) {
		t.Errorf("avx2: Required() error %v, want one naming the value", err)
	}
}

func TestCheckRequired(t *testing.T) {
	yes := func(string) bool { return true }
	no := func(string) bool { return false }
	t.Setenv(RequireEnv, "")
	if err := CheckRequired(no); err != nil {
		t.Errorf("unset: %v, want nil (nothing is required)", err)
	}
	t.Setenv(RequireEnv, RequireAVX512)
	if err := CheckRequired(yes); err != nil {
		t.Errorf("avx512 on a CPU that has it: %v", err)
	}
	if err := CheckRequired(no); err == nil || !strings.Contains(err.Error(), "cannot run") {
		t.Errorf("avx512 on a CPU without it: %v, want a refusal", err)
	}
	t.Setenv(RequireEnv, "sse2")
	if err := CheckRequired(yes); err == nil {
		t.Error("an unknown value passed")
	}
}

func TestF32OutputsOnly(t *testing.T) {
	for v, want := range map[string]bool{"": false, "f32": true} {
		t.Setenv(OutputsEnv, v)
		if got, err := F32OutputsOnly(); got != want || err != nil {
			t.Errorf("%s=%q: %v, %v; want %v", OutputsEnv, v, got, err, want)
		}
	}
	t.Setenv(OutputsEnv, "f32")
	if got := OutputDT(dtypes.BF16); got != dtypes.F32 {
		t.Errorf("f32 outputs only: OutputDT(bf16) = %v", got)
	}
	t.Setenv(OutputsEnv, "")
	if got := OutputDT(dtypes.BF16); got != dtypes.BF16 {
		t.Errorf("every output type: OutputDT(bf16) = %v", got)
	}
	t.Setenv(OutputsEnv, "f16")
	if _, err := F32OutputsOnly(); err == nil || !strings.Contains(err.Error(), `"f16"`) {
		t.Errorf("f16: error %v, want one naming the value", err)
	}
}

// TestReportCalls checks the marker CI's wine stage reads: one line
// under GDNN_TEST_COUNT_CALLS=1, nothing without it.
func TestReportCalls(t *testing.T) {
	capture := func() string {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout := os.Stdout
		os.Stdout = w
		ReportCalls("pkg", ImplCalls{"jit:avx512", 12}, ImplCalls{"jit:avx2", 0})
		os.Stdout = stdout
		w.Close()
		b, _ := io.ReadAll(r)
		return string(b)
	}
	t.Setenv(CountEnv, "")
	if out := capture(); out != "" {
		t.Errorf("without %s: printed %q", CountEnv, out)
	}
	t.Setenv(CountEnv, "1")
	want := "gdnn-calls: pkg " + runtime.GOOS + "/" + runtime.GOARCH + " jit:avx512 12 jit:avx2 0\n"
	if out := capture(); out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
}
