package jit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

func TestISANames(t *testing.T) {
	for _, i := range []ISA{None, AVX2, AVX512, NEON} {
		got, err := ParseISA(strings.ToUpper(i.String()))
		if err != nil || got != i {
			t.Errorf("ParseISA(%q) = %v, %v; want %v", strings.ToUpper(i.String()), got, err, i)
		}
	}
	for in, want := range map[string]ISA{"avx512_core_bf16": AVX512, "avx2_vnni": AVX2, "asimd": NEON, "interp": None,
		"all": topISA(runtime.GOARCH), "default": topISA(runtime.GOARCH), "SSE41": None, "avx": None, "avx10_1_512": AVX512} {
		if got, err := ParseISA(in); err != nil || got != want {
			t.Errorf("ParseISA(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseISA("avx2,"); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), `"avx2,"`) {
		t.Errorf("ParseISA(avx2,): %v, want InvalidArguments naming the value", err)
	}
	if s := ISA(9).String(); s != "isa(9)" {
		t.Errorf("ISA(9).String() = %q", s)
	}
	// oneDNN's avx512_core and avx512_core_vnni come below
	// avx512_core_bf16: they exclude its instructions, the caps above
	// it (and gdnn's own avx512) do not.
	for in, want := range map[string]bool{"avx512_core": false, " AVX512_Core_VNNI": false, "avx512_core_bf16": true,
		"avx512_core_fp16": true, "avx512_core_amx": true, "avx10_1_512": true, "avx512": true, "all": true, "default": true} {
		if got := allowsBF16(in); got != want {
			t.Errorf("allowsBF16(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestEnvCapAVX512CoreExcludesBF16 runs this test binary again under
// GDNN_MAX_CPU_ISA=avx512_core and avx512_core_bf16 (read once per
// process): the first keeps the AVX-512 code from AVX512_BF16's
// instructions, the second lets it use them where the CPU has them.
func TestEnvCapAVX512CoreExcludesBF16(t *testing.T) {
	if os.Getenv("GDNN_ENV_CHILD") == "bf16" {
		isa := EffectiveISA()
		os.Stdout.WriteString(fmt.Sprintf("child: isa %s bf16 %v\n", isa, amd64Options(isa).BF16))
		return
	}
	if runtime.GOARCH != "amd64" || DetectedISA() != AVX512 {
		t.Skipf("the cap is on AVX-512's instructions; this CPU's ISA is %s", DetectedISA())
	}
	for _, c := range []struct {
		env  string
		bf16 bool
	}{{"avx512_core", false}, {"avx512_core_vnni", false}, {"avx512_core_bf16", cpuFeatures().avx512bf16}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvCapAVX512CoreExcludesBF16$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GDNN_ENV_CHILD=bf16", "GDNN_MAX_CPU_ISA="+c.env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child under %s: %v\n%s", c.env, err, out)
		}
		if want := fmt.Sprintf("child: isa avx512 bf16 %v\n", c.bf16); !strings.Contains(string(out), want) {
			t.Errorf("GDNN_MAX_CPU_ISA=%s: child said %q, want %q", c.env, out, want)
		}
	}
}

// withEnvCap stands in for GDNN_MAX_CPU_ISA=i for the rest of the test.
func withEnvCap(t *testing.T, i ISA) {
	initCap()
	prev := envCap.Swap(int64(i))
	t.Cleanup(func() { envCap.Store(prev) })
}

func TestSetMaxISACaps(t *testing.T) {
	withEnvCap(t, topISA(runtime.GOARCH))
	prev := SetMaxISA(AVX512)
	defer SetMaxISA(prev)
	det := DetectedISA()
	if EffectiveISA() != det && runtime.GOARCH == "amd64" {
		t.Errorf("cap avx512: EffectiveISA %s, detected %s", EffectiveISA(), det)
	}
	if got := SetMaxISA(AVX2); got != AVX512 {
		t.Errorf("SetMaxISA returned %s, want the previous cap avx512", got)
	}
	switch det {
	case AVX512, AVX2:
		if EffectiveISA() != AVX2 {
			t.Errorf("cap avx2 on %s: EffectiveISA %s", det, EffectiveISA())
		}
	}
	SetMaxISA(None)
	if EffectiveISA() != None {
		t.Errorf("cap none: EffectiveISA %s", EffectiveISA())
	}
	// A cap never raises: with the top cap the effective ISA is what the
	// CPU has, nothing more.
	SetMaxISA(topISA(runtime.GOARCH))
	if EffectiveISA() != det {
		t.Errorf("top cap: EffectiveISA %s, detected %s", EffectiveISA(), det)
	}
	if det != None && !supported(det) {
		t.Errorf("detected %s is not supported", det)
	}
	// A value that names no ISA caps as None, whatever its low byte
	// (setCap keeps the cap in one), and is returned as None.
	for _, bad := range []ISA{ISA(256 + int(AVX512)), ISA(256 + int(AVX2)), -1, 77} {
		SetMaxISA(topISA(runtime.GOARCH))
		SetMaxISA(bad)
		if EffectiveISA() != None {
			t.Errorf("cap %d: EffectiveISA %s, want none", int(bad), EffectiveISA())
		}
		if got := SetMaxISA(AVX2); got != None {
			t.Errorf("cap %d: SetMaxISA returned %d, want none", int(bad), int(got))
		}
	}
}

// TestEnvCapIsACeiling checks that GDNN_MAX_CPU_ISA and SetMaxISA
// combine as the lower of the two: SetMaxISA lowers the ISA under the
// environment's cap but never lifts it.
func TestEnvCapIsACeiling(t *testing.T) {
	det := DetectedISA()
	prev := SetMaxISA(topISA(runtime.GOARCH))
	defer SetMaxISA(prev)
	for _, c := range []struct {
		env, set, want ISA
	}{
		{None, AVX512, None},
		{None, NEON, None},
		{AVX2, AVX512, min(det, AVX2)},
		{NEON, NEON, min(det, AVX2)},
		{AVX512, AVX2, min(det, AVX2)},
		{AVX512, None, None},
		{AVX2, None, None},
		{AVX512, AVX512, det},
	} {
		if runtime.GOARCH != "amd64" && c.want != None {
			c.want = det // NEON ranks with AVX2: any vector cap allows it
		}
		withEnvCap(t, c.env)
		SetMaxISA(c.set)
		if got := EffectiveISA(); got != c.want {
			t.Errorf("GDNN_MAX_CPU_ISA=%s, SetMaxISA(%s) on %s: EffectiveISA %s, want %s", c.env, c.set, det, got, c.want)
		}
		if got := SetMaxISA(c.set); got != c.set {
			t.Errorf("SetMaxISA returned %s, want the cap it set, %s", got, c.set)
		}
	}
}

// TestEnvironment runs this test binary again with GDNN_MAX_CPU_ISA and
// GDNN_VERBOSE set, since both are read once per process.
func TestEnvironment(t *testing.T) {
	if os.Getenv("GDNN_ENV_CHILD") == "1" {
		envChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GDNN_ENV_CHILD=1", "GDNN_MAX_CPU_ISA=none", "GDNN_VERBOSE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, syscall.ENOEXEC) {
		// A cross-built test binary run through a user-mode emulator
		// without binfmt registration cannot exec itself.
		t.Skipf("cannot re-exec the test binary here: %v", err)
	}
	if err != nil {
		t.Fatalf("child: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	if !strings.Contains(string(out), "child: isa none") {
		t.Errorf("child did not see the cap: %s", out)
	}
	if !strings.Contains(string(out), "child: after SetMaxISA(all): isa none") {
		t.Errorf("SetMaxISA lifted the environment's cap in the child: %s", out)
	}
	lines := stderr.String()
	if !strings.Contains(lines, "gdnn_verbose,compile,cpu,reduction,interp,f32:f32 outer[2:3:1] red[3:1] N=3 Outputs=2 Div=3,split:single calls:1 phases:1 cache:") ||
		!strings.Contains(lines, ",fallback: ISA capped to none") && DetectedISA() != None {
		t.Errorf("child verbose compile line missing or wrong:\n%s", lines)
	}
	if !strings.Contains(lines, "gdnn_verbose,exec,cpu,reduction,interp,f32:f32 outer[2:3:1] red[3:1] N=3 Outputs=2 Div=3,split:single calls:1 phases:1 threads:1,") {
		t.Errorf("child verbose exec line missing or wrong:\n%s", lines)
	}
}

// envChild is the child side of TestEnvironment.
func envChild() {
	println := func(s string) { os.Stdout.WriteString(s + "\n") }
	println("child: isa " + EffectiveISA().String())
	prev := SetMaxISA(topISA(runtime.GOARCH))
	println("child: after SetMaxISA(all): isa " + EffectiveISA().String())
	SetMaxISA(prev)
	pl, err := mkRowPlan(2, 3)
	if err != nil {
		println("child: plan: " + err.Error())
		return
	}
	k, err := Compile(pl)
	if err != nil {
		println("child: compile: " + err.Error())
		return
	}
	if err := k.Run(make([]byte, 24), make([]byte, 8), nil); err != nil {
		println("child: run: " + err.Error())
	}
}
