package arm64

import (
	"runtime"
	"testing"
	"time"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vfn"
)

// TestProgramsExhaustive runs every post-op of vfn.ExhaustiveOps
// (vfn.SweepOps, Exp and Log) under NEON on all 2^32 f32 bit patterns
// (-vfn.all) or on every N-th (-vfn.stride=N, N a power of two: the
// patterns of vfn.SampleInput, which meet every sign, exponent and
// leading part of the significand once, with the low bits varying;
// kerneltest.ExhaustStride), by
// vfn.Exhaust: up to 2^20 inputs a call, in GOMAXPROCS goroutines. It
// holds every result to the contract TestVFNSweep, TestExpSweep and
// TestLogSweep check on their sweeps (vfn.Check, vexp.Check,
// vlog.Check), and to the bits of the op's scalar model (vfn.Model of
// its program, vexp.Model, vlog.Model; vfn.ModelFor), so that NEON's
// sampled agreement with the model carries the model's own exhaustive
// check (package vfn's TestModelExhaustive) over to NEON. It logs, per
// op, the worst error in ulps of NEON and of the model, the first
// inputs that reach it and how many results are 0, 1, 2, 3, 4 and more
// ulps off. It runs only with one of the flags.
func TestProgramsExhaustive(t *testing.T) {
	needARM64(t)
	stride := kerneltest.ExhaustStride(t, "GOARCH=arm64 go test -exec qemu-aarch64-static ./arm64 -run TestProgramsExhaustive",
		"about 100 hours under qemu")
	for _, op := range vfn.ExhaustiveOps() {
		t.Run(vfn.OpName(op), func(t *testing.T) { exhaust(t, op, stride) })
	}
}

// exhaust runs op on every stride-th f32 input under NEON and through
// its model and reports as TestProgramsExhaustive says.
func exhaust(t *testing.T, op plan.PostOp, stride uint32) {
	model, ok := vfn.ModelFor(op)
	if !ok {
		t.Fatalf("no model for %v", op)
	}
	p, _ := vfn.SweepProblem(op, make([]float32, vfn.ExhaustChunk(stride)))
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	k := compile(t, pl)
	defer k.Release()
	start := time.Now()
	ts := vfn.Exhaust(op, stride, runtime.GOMAXPROCS(0), 2, func(src []byte, got [][]byte) {
		k.RunBlocks(pl, src, got[0], nil, 0)
		vfn.ModelInto(model, src, got[1])
	})
	took := time.Since(start).Round(time.Second)
	name := vfn.OpName(op)
	neon, m := &ts[0], &ts[1]
	t.Logf("%s neon: %d inputs (stride %d): %s; %v", name, neon.N, stride, neon.Summary(op), took)
	t.Logf("%s model: %s; %d differ from neon", name, m.Summary(op), m.Differ)
	for _, b := range neon.BadLines(op) {
		t.Errorf("%s neon: %s", name, b)
	}
	if neon.NBad > 0 {
		t.Errorf("%s neon: %d of %d results break the contract", name, neon.NBad, neon.N)
	}
	for _, d := range m.DiffLines(op, "neon") {
		t.Errorf("%s model: %s", name, d)
	}
	if m.Differ > 0 {
		t.Errorf("%s: the model differs from neon on %d of %d inputs", name, m.Differ, m.N)
	}
}
