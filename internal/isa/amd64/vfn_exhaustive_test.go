package amd64

import (
	"testing"
	"time"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vfn"
)

// TestProgramsExhaustive runs every post-op of vfn.ExhaustiveOps
// (vfn.SweepOps, Exp and Log) on all 2^32 f32 bit patterns under
// AVX-512 and AVX2 (the AVX512_BF16 configuration's f32 code is
// AVX-512's) and holds each result to the contract TestProgramSweep,
// TestExpSweep and TestLogSweep check on their sweeps (vfn.Check,
// vexp.Check, vlog.Check), by vfn.Exhaust: 2^20 inputs a call, in two
// goroutines. Where both ISAs give the same bits, the float64 reference
// is computed once. It logs, per op and ISA, the worst error in ulps,
// the first inputs that reach it and how many results are 0, 1, 2, 3, 4
// and more ulps off. It runs only with -vfn.all (or, on a sample,
// -vfn.stride=N: kerneltest.ExhaustStride, vfn.SampleInput).
func TestProgramsExhaustive(t *testing.T) {
	stride := kerneltest.ExhaustStride(t, "go test ./amd64 -run TestProgramsExhaustive", "tens of minutes")
	var cs []isaCase
	for _, c := range isas(t) {
		if !c.o.BF16 {
			cs = append(cs, c)
		}
	}
	for _, op := range vfn.ExhaustiveOps() {
		t.Run(vfn.OpName(op), func(t *testing.T) { exhaust(t, op, cs, stride) })
	}
}

// exhaust runs op on every stride-th f32 input under each of cs and
// reports as TestProgramsExhaustive says.
func exhaust(t *testing.T, op plan.PostOp, cs []isaCase, stride uint32) {
	p, _ := vfn.SweepProblem(op, make([]float32, vfn.ExhaustChunk(stride)))
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	ks := make([]*kerneltest.Kernel, len(cs))
	for i, c := range cs {
		k := compile(t, pl, c.o)
		defer k.Release()
		ks[i] = k
	}
	start := time.Now()
	total := vfn.Exhaust(op, stride, 2, len(cs), func(src []byte, got [][]byte) {
		for i, k := range ks {
			k.RunBlocks(pl, src, got[i], nil, 0)
		}
	})
	took := time.Since(start).Round(time.Second)
	name := vfn.OpName(op)
	for j, c := range cs {
		s := &total[j]
		t.Logf("%s %s: %s; %d differ from %s; %v for every ISA", name, c.name, s.Summary(op), s.Differ, cs[0].name, took)
		for _, b := range s.BadLines(op) {
			t.Errorf("%s %s: %s", name, c.name, b)
		}
		if s.NBad > 0 {
			t.Errorf("%s %s: %d of %d results break the contract", name, c.name, s.NBad, s.N)
		}
	}
}
