package partition

import (
	"testing"

	"github.com/gdnn/gdnn/jit"
)

// isaCaps are the ISA caps to run the end-to-end tests under: every JIT
// ISA this machine has, and none (the interpreter).
func isaCaps() []jit.ISA {
	caps := []jit.ISA{jit.None}
	switch jit.DetectedISA() {
	case jit.AVX512:
		caps = append(caps, jit.AVX2, jit.AVX512)
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
