package kerneltest

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/gdnn/gdnn/dtypes"
)

// RequireEnv names the environment variable that pins the tests of the
// emitters and the runtime to one instruction set. CI's AVX-512 stage
// (.ci/avx512) sets it so that the stage cannot pass by running nothing:
// the tests then run only that configuration, and fail where the CPU
// (or the emulator) cannot run it instead of skipping.
//
//	avx512      AVX-512 F, BW, DQ, VL (no AVX512_BF16: what Bochs offers)
//	avx512bf16  the same plus AVX512_BF16 (native on Zen 4 only)
const RequireEnv = "GDNN_TEST_REQUIRE_ISA"

// The values RequireEnv takes.
const (
	RequireAVX512     = "avx512"
	RequireAVX512BF16 = "avx512bf16"
)

// Required returns the configuration RequireEnv asks for ("" when unset),
// or an error naming a value it does not know.
func Required() (string, error) {
	switch v := os.Getenv(RequireEnv); v {
	case "", RequireAVX512, RequireAVX512BF16:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: want %s or %s", RequireEnv, v, RequireAVX512, RequireAVX512BF16)
	}
}

// CheckRequired is for a TestMain: when RequireEnv is set it returns an
// error if the value is unknown, or if has(value) says the CPU lacks what
// it names, so that the package fails before any test runs.
func CheckRequired(has func(req string) bool) error {
	req, err := Required()
	if err != nil || req == "" {
		return err
	}
	if !has(req) {
		return fmt.Errorf("%s=%s: this CPU cannot run it", RequireEnv, req)
	}
	return nil
}

// Report prints the marker line .ci/avx512 reads after a package's tests
// when RequireEnv is set: how many calls of AVX-512 machine code the
// package's tests made. It prints nothing otherwise.
func Report(pkg string, calls int64) {
	if req, _ := Required(); req != "" {
		fmt.Printf("gdnn-kernels: %s %d calls on jit:avx512 (%s)\n", pkg, calls, req)
	}
}

// CountEnv names the environment variable ("1") under which the test
// packages of the runtime (jit, partition, reduce) count the calls of
// machine code per ISA, whatever ISA runs, and print them after their
// tests (ReportCalls): the marker CI's windows/amd64 stage, which runs
// the tests under wine, reads to show that machine code ran there.
const CountEnv = "GDNN_TEST_COUNT_CALLS"

// CountCalls reports whether CountEnv asks for counts.
func CountCalls() bool { return os.Getenv(CountEnv) == "1" }

// ImplCalls is how many calls of one implementation's machine code a
// package's tests made (Impl as in the verbose lines: "jit:avx512").
type ImplCalls struct {
	Impl string
	N    int64
}

// ReportCalls prints, when CountEnv asks for it, one marker line with
// the calls pkg's tests made per implementation and the platform:
//
//	gdnn-calls: partition windows/amd64 jit:avx512 24521 jit:avx2 0 jit:neon 0
//
// It prints nothing otherwise.
func ReportCalls(pkg string, calls ...ImplCalls) {
	if !CountCalls() {
		return
	}
	line := fmt.Sprintf("gdnn-calls: %s %s/%s", pkg, runtime.GOOS, runtime.GOARCH)
	for _, c := range calls {
		line += fmt.Sprintf(" %s %d", c.Impl, c.N)
	}
	fmt.Println(line)
}

// AVX512Calls counts calls of kernels whose Count points at it; the
// emitters' tests point AVX-512 kernels here (see Kernel.Count).
var AVX512Calls atomic.Int64

// OutputsEnv names the environment variable that narrows the emitter
// tests' problems to f32 outputs ("f32"; unset: every dst type). It is
// for an emulator that executes gdnn's 16-bit outputs wrongly: Bochs 2.7
// does not scale the compressed disp8 of EVEX VPEXTRW to memory, and its
// VCVTPS2PH rounds exact ties away from zero (TestEVEXScalarStoreOffsets
// and TestEVEXConvertToF16 in package amd64 show both), so .ci/avx512
// sets it under Bochs and says that f16 and bf16 outputs are proven
// natively only.
const OutputsEnv = "GDNN_TEST_OUTPUTS"

// OutputDT is dt, or f32 when OutputsEnv asks for f32 outputs only: the
// tests that draw or list problems pass their dst types through it.
func OutputDT(dt dtypes.DataType) dtypes.DataType {
	if f32, _ := F32OutputsOnly(); f32 {
		return dtypes.F32
	}
	return dt
}

// F32OutputsOnly reports whether OutputsEnv asks for f32 outputs only,
// or an error naming a value it does not know.
func F32OutputsOnly() (bool, error) {
	switch v := os.Getenv(OutputsEnv); v {
	case "":
		return false, nil
	case "f32":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want f32 or nothing", OutputsEnv, v)
	}
}

// SmallShare is the jit.ShareBytes that the runtime's test packages set
// in their TestMain: runs of 64 KiB and more then take the pool's path,
// so that their tests of one thread against several cover the hand-off
// with problems small enough to test by the hundred, where the default
// keeps runs of up to a few hundred KiB on one thread.
const SmallShare = 32 << 10
