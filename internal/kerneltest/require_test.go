package kerneltest

import (
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
