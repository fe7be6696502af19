package jit

import (
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/plan"
)

// TestLogSumExpWithOperands runs log-sum-exp followed by binary post-ops
// (the program's own max operand comes first, the caller's after it) on
// every ISA, with budgets that split each of its plans.
func TestLogSumExpWithOperands(t *testing.T) {
	isaList := []ISA{None}
	if d := DetectedISA(); d != None {
		isaList = append(isaList, d)
	}
	r := rand.New(rand.NewPCG(8, 9))
	for _, s := range []spec{
		{dims: []int64{40, 300}, reduce: []bool{false, true}, binBcast: [][]bool{{false, false}, {true, false}}},
		{dims: []int64{300, 24}, reduce: []bool{true, false}, binBcast: [][]bool{{false, false}, {false, true}}},
		{dims: []int64{4, 200, 33}, reduce: []bool{false, true, false}, binBcast: [][]bool{{false, false, false}, {true, false, false}}},
	} {
		s.sdt, s.ddt, s.lo, s.hi = dtypes.F32, dtypes.F32, -30, 60
		s.post = []plan.PostOp{{Kind: plan.Add, BinDT: dtypes.F32}, {Kind: plan.ReLU}, {Kind: plan.Multiply, BinDT: dtypes.BF16}}
		c := s.build(t, r)
		c.p.Reduction = plan.LogSumExp
		for _, isa := range isaList {
			for _, budget := range []int64{1 << 20, 1024} {
				withBudget(t, budget)
				prev := SetMaxISA(isa)
				dst := c.run(t)
				SetMaxISA(prev)
				checkRef(t, c, dst, "log-sum-exp with operands "+isa.String())
			}
		}
	}
}
