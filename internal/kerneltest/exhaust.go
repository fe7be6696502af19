package kerneltest

import (
	"flag"
	"testing"
)

// The flags of the opt-in tests that run the post-ops over all or a
// sample of the f32 bit patterns (package amd64's and arm64's
// TestProgramsExhaustive, package vfn's TestModelExhaustive).
var (
	exhaustAll    = flag.Bool("vfn.all", false, "the exhaustive post-op tests run every f32 input (long: see the test's skip message)")
	exhaustStride = flag.Uint("vfn.stride", 0, "the exhaustive post-op tests run every N-th f32 input (N a power of two; vfn.SampleInput)")
)

// ExhaustStride returns the stride over the f32 bit patterns that the
// flags -vfn.all (1: every pattern) and -vfn.stride=N (N, which must be
// a power of two below 2^32) ask an exhaustive test for. With neither
// it skips t, saying how to run it: cmd is its go test command line
// without the flags, long how long all 2^32 inputs take.
func ExhaustStride(t testing.TB, cmd, long string) uint32 {
	t.Helper()
	switch n := *exhaustStride; {
	case *exhaustAll:
		return 1
	case n == 0:
		t.Skipf("opt-in, %s for all 2^32 inputs: %s -vfn.all (or -vfn.stride=N, N a power of two, every N-th input) -timeout 0 -v", long, cmd)
	case n&(n-1) != 0 || uint64(n) >= 1<<32:
		t.Fatalf("-vfn.stride=%d: want a power of two below 2^32", n)
	}
	return uint32(*exhaustStride)
}
