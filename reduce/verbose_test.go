package reduce

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// verboseCalls are the entry points TestVerboseEntryPoints runs, each on
// a small problem.
var verboseCalls = []struct {
	name string
	call func() error
}{
	{"Sum", func() error { return Sum(make([]float32, 8), verboseSrc(), []int{2, 3, 4}, []int{1}) }},
	{"Mean", func() error { return Mean(make([]float32, 8), verboseSrc(), []int{2, 3, 4}, []int{1}) }},
	{"LogSumExp", func() error { return LogSumExp(make([]float32, 8), verboseSrc(), []int{2, 3, 4}, []int{1}) }},
	{"ArgMax", func() error { return ArgMax(make([]int64, 8), verboseSrc(), []int{2, 3, 4}, 1) }},
	{"ArgMin", func() error { return ArgMin(make([]int32, 8), verboseSrc(), []int{2, 3, 4}, 1) }},
	{"Softmax", func() error { return Softmax(make([]float32, 24), verboseSrc(), []int{2, 3, 4}, 2) }},
	{"LogSoftmax", func() error { return LogSoftmax(make([]float32, 24), verboseSrc(), []int{2, 3, 4}, 1) }},
	{"LayerNorm", func() error {
		return LayerNorm(make([]float32, 24), verboseSrc(), []float32{1, 1, 1, 1}, []float32{0, 0, 0, 0}, []int{2, 3, 4}, 2, 1e-5)
	}},
	{"RMSNorm", func() error {
		return RMSNorm(make([]float32, 24), verboseSrc(), []float32(nil), []int{2, 3, 4}, 2, 1e-5)
	}},
	{"GroupNorm", func() error {
		return GroupNorm(make([]float32, 24), verboseSrc(), []float32(nil), []float32(nil), []int{2, 3, 4}, 3, 1, 1e-5)
	}},
	{"LpNormalize", func() error { return LpNormalize(make([]float32, 24), verboseSrc(), []int{2, 3, 4}, 2, 2, 1e-5) }},
	{"MaskedMean", func() error {
		return MaskedMean(make([]float32, 8), verboseSrc(), []float32{1, 0, 1, 1, 1, 0}, []int{2, 3, 4}, 1)
	}},
}

func verboseSrc() []float32 {
	s := make([]float32, 24)
	for i := range s {
		s[i] = float32(i%7) - 3
	}
	return s
}

// verboseMark separates the calls' output in the child's stderr.
const verboseMark = "---- verbose test call "

// TestVerboseEntryPoints runs every entry point under GDNN_VERBOSE=1 in
// a child process (the variable is read once per process) and checks
// that each reports at least one compile and one execute line of the
// runtime: ArgMax's index kernel and the normalizations' fused kernels
// as much as the reductions' plans.
func TestVerboseEntryPoints(t *testing.T) {
	if os.Getenv("GDNN_TEST_VERBOSE_CHILD") != "" {
		for _, c := range verboseCalls {
			fmt.Fprintln(os.Stderr, verboseMark+c.name)
			if err := c.call(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		return
	}
	if testing.Short() {
		t.Skip("runs a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestVerboseEntryPoints$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GDNN_VERBOSE=1", "GDNN_TEST_VERBOSE_CHILD=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	parts := strings.Split(stderr.String(), verboseMark)[1:]
	if len(parts) != len(verboseCalls) {
		t.Fatalf("child printed %d calls, want %d:\n%s", len(parts), len(verboseCalls), stderr.String())
	}
	for i, p := range parts {
		name, lines, _ := strings.Cut(p, "\n")
		if name != verboseCalls[i].name {
			t.Fatalf("call %d is %q, want %q", i, name, verboseCalls[i].name)
		}
		if !strings.Contains(lines, "gdnn_verbose,compile,cpu,reduction,") || !strings.Contains(lines, "gdnn_verbose,exec,cpu,reduction,") {
			t.Errorf("%s printed no compile and exec line under GDNN_VERBOSE=1:\n%s", name, lines)
		}
	}
}
