package amd64

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdnn/gdnn/jit/kerneltest"
	"github.com/gdnn/gdnn/jit/plan"
	"github.com/gdnn/gdnn/jit/vexp"
	"github.com/gdnn/gdnn/jit/vfn"
	"github.com/gdnn/gdnn/jit/vlog"
)

var vfnAll = flag.Bool("vfn.all", false, "TestProgramsExhaustive runs every f32 input (tens of minutes)")

// exhaustiveChunkBits is log2 of how many inputs one kernel call of
// TestProgramsExhaustive takes.
const exhaustiveChunkBits = 20

// TestProgramsExhaustive runs every post-op of vfn.SweepOps, Exp and Log
// on all 2^32 f32 bit patterns under AVX-512 and AVX2 (the AVX512_BF16
// configuration's f32 code is AVX-512's) and holds each result to the
// contract TestProgramSweep, TestExpSweep and TestLogSweep check on
// their sweeps (vfn.Check, vexp.Check, vlog.Check). Where both ISAs give
// the same bits, the float64 reference is computed once. It logs, per op
// and ISA, the worst error in ulps, the first inputs that reach it and
// how many results are 0, 1, 2, 3, 4 and more ulps off. It runs only
// with -vfn.all.
func TestProgramsExhaustive(t *testing.T) {
	if !*vfnAll {
		t.Skip("all 2^32 inputs take tens of minutes: go test ./amd64 -run TestProgramsExhaustive -vfn.all -timeout 0 -v")
	}
	var cs []isaCase
	for _, c := range isas(t) {
		if !c.o.BF16 {
			cs = append(cs, c)
		}
	}
	ops := append(vfn.SweepOps(), plan.PostOp{Kind: plan.Exp}, plan.PostOp{Kind: plan.Log})
	for _, op := range ops {
		t.Run(opName(op), func(t *testing.T) { exhaust(t, op, cs) })
	}
}

// opName names op with its parameter.
func opName(op plan.PostOp) string {
	switch op.Kind {
	case plan.GELUErf:
		return "GELUErf"
	case plan.Elu:
		return fmt.Sprintf("Elu,alpha=%v", op.Alpha)
	case plan.SoftPlus:
		return fmt.Sprintf("SoftPlus,beta=%v", op.Beta)
	}
	return op.Kind.String()
}

// tally is one ISA's results over some inputs.
type tally struct {
	hist   [6]int64 // results 0, 1, 2, 3, 4 and more ulps off (not a NaN or an infinity where the contract wants the other)
	worst  int64
	at     []uint32 // the first inputs at worst, by bits
	bad    []badResult
	nbad   int64
	differ int64 // inputs whose result differs from the first ISA's
}

// badResult is an input whose result breaks the contract.
type badResult struct {
	x, y uint32
	ulps int64
}

// tallyKeep and badKeep are how many inputs at the worst error and
// outside the contract a tally keeps.
const tallyKeep, badKeep = 5, 16

func (s *tally) add(x, y uint32, u int64, ok bool) {
	if !ok {
		if len(s.bad) < badKeep {
			s.bad = append(s.bad, badResult{x, y, u})
		}
		s.nbad++
		if u == math.MaxInt64 {
			return
		}
	}
	s.hist[min(u, 5)]++
	if u > s.worst {
		s.worst, s.at = u, s.at[:0]
	}
	if u == s.worst && len(s.at) < tallyKeep {
		s.at = append(s.at, x)
	}
}

// merge adds o, a tally of other inputs, to s.
func (s *tally) merge(o *tally) {
	for i, n := range o.hist {
		s.hist[i] += n
	}
	if o.worst > s.worst {
		s.worst, s.at = o.worst, nil
	}
	if o.worst == s.worst {
		s.at = append(s.at, o.at...)
		slices.Sort(s.at)
		s.at = s.at[:min(len(s.at), tallyKeep)]
	}
	s.bad = append(s.bad, o.bad...)
	slices.SortFunc(s.bad, func(a, b badResult) int { return int(int64(a.x) - int64(b.x)) })
	s.bad = s.bad[:min(len(s.bad), badKeep)]
	s.nbad += o.nbad
	s.differ += o.differ
}

// exhaust runs op on every f32 input under each of cs, 2^20 inputs a
// call, in two goroutines, and reports as TestProgramsExhaustive says.
func exhaust(t *testing.T, op plan.PostOp, cs []isaCase) {
	check := func(x, got float32) (int64, bool) { return vfn.Check(op, x, got) }
	switch op.Kind {
	case plan.Exp:
		check = vexp.Check
	case plan.Log:
		check = vlog.Check
	}
	const n = 1 << exhaustiveChunkBits
	p, _ := vfn.SweepProblem(op, make([]float32, n))
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
	var next atomic.Int64
	var mu sync.Mutex
	total := make([]tally, len(cs))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := make([]byte, 4*n)
			got := make([][]byte, len(cs))
			for i := range got {
				got[i] = make([]byte, 4*n)
			}
			ts := make([]tally, len(cs))
			for {
				c := next.Add(1) - 1
				if c >= 1<<(32-exhaustiveChunkBits) {
					break
				}
				base := uint32(c) << exhaustiveChunkBits
				for i := range n {
					binary.LittleEndian.PutUint32(src[4*i:], base+uint32(i))
				}
				for i, k := range ks {
					k.RunBlocks(pl, src, got[i], nil, 0)
				}
				for i := range n {
					xb := base + uint32(i)
					x := vexp.PostOpInput(math.Float32frombits(xb))
					y0 := binary.LittleEndian.Uint32(got[0][4*i:])
					u0, ok0 := check(x, math.Float32frombits(y0))
					ts[0].add(xb, y0, u0, ok0)
					for j := 1; j < len(cs); j++ {
						y, u, ok := binary.LittleEndian.Uint32(got[j][4*i:]), u0, ok0
						if y != y0 {
							ts[j].differ++
							u, ok = check(x, math.Float32frombits(y))
						}
						ts[j].add(xb, y, u, ok)
					}
				}
			}
			mu.Lock()
			for j := range ts {
				total[j].merge(&ts[j])
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(start).Round(time.Second)
	for j, c := range cs {
		s := &total[j]
		var at []string
		for _, xb := range s.at {
			x := math.Float32frombits(xb)
			at = append(at, fmt.Sprintf("%v (%#x, want %v)", x, xb, eltwise(op, x)))
		}
		t.Logf("%s %s: worst %d ulps at %v; results 0..4 and >4 ulps off: %v; %d differ from %s; %v for every ISA",
			opName(op), c.name, s.worst, at, s.hist, s.differ, cs[0].name, took)
		for _, b := range s.bad {
			x, y := math.Float32frombits(b.x), math.Float32frombits(b.y)
			t.Errorf("%s %s: %v (%#x) gives %v (%#x), want %v (%d ulps)", opName(op), c.name, x, b.x, y, b.y, eltwise(op, x), b.ulps)
		}
		if s.nbad > 0 {
			t.Errorf("%s %s: %d of 2^32 results break the contract", opName(op), c.name, s.nbad)
		}
	}
}

// eltwise is op's reference for x.
func eltwise(op plan.PostOp, x float32) float32 { return plan.Eltwise(op.Kind, op.Alpha, op.Beta, x) }
