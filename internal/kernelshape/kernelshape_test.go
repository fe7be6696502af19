package kernelshape

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
)

// recorder is an Emitter that writes down what it is asked to emit: its
// loops as "loop n {" (or "count r<c> {") and "}", and the pointer moves
// they emit. Its pointers are its own, apart from any a test passes to
// Chunks or RunLoop.
type recorder struct {
	log  []string
	next int16
	ptrs *Pointers
}

func (r *recorder) add(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *recorder) Pointers() *Pointers {
	if r.ptrs == nil {
		r.ptrs = NewPointers(101, 102, nil)
	}
	return r.ptrs
}

func (r *recorder) Flush() {
	r.Pointers().Flush(func(p int16, d int64) {
		if p == 101 {
			r.add("src %+d", d)
		} else {
			r.add("dst %+d", d)
		}
	})
}

func (r *recorder) FreeCounter(int16)                   {}
func (r *recorder) NewLabel() Label                     { return &obj.Prog{} }
func (r *recorder) PlaceLabel(Label)                    {}
func (r *recorder) EnterLoop(_ int16, n int64, _ Label) { r.add("loop %d {", n) }
func (r *recorder) LeaveLoop(c int16, top Label)        { r.Repeat(c, top) }
func (r *recorder) SkipUnlessPositive(c int16, _ Label) { r.add("count r%d {", c) }
func (r *recorder) Repeat(int16, Label)                 { r.Flush(); r.add("}") }

func (r *recorder) StepsOf(l *plan.Loop) Steps { return StepsOf(l, 4, 2, nil) }
func (r *recorder) Counter() int16             { r.next++; return r.next }
func (r *recorder) Prologue(cnt int16)         { r.add("prologue r%d", cnt) }
func (r *recorder) Return()                    { r.add("return") }
func (r *recorder) Column(k Nest, red []plan.Loop, zeroSum bool) {
	k.Emit(r, func() { r.add("column %d reduced zeroSum %v", len(red), zeroSum) })
}

func (r *recorder) Row(k Nest, red []plan.Loop, zeroSum bool) {
	r.add("row %d kept counted %v reduced %d zeroSum %v", len(k.Loops), k.Counted, len(red), zeroSum)
}

func TestGenerate(t *testing.T) {
	outer := plan.Loop{Size: 3, SrcStride: 100, DstStride: 10}
	red := plan.Loop{Size: 5, SrcStride: 20}
	for _, c := range []struct {
		name string
		pl   plan.Plan
		want []string
	}{
		{"column", plan.Plan{Outer: []plan.Loop{outer}, Reduced: []plan.Loop{red}, HasInner: true, Inner: plan.Loop{Size: 7, SrcStride: 1, DstStride: 1}},
			[]string{"prologue r1", "count r1 {", "column 1 reduced zeroSum false", "src +400", "dst +20", "}", "return"}},
		{"row", plan.Plan{Outer: []plan.Loop{outer}, Reduced: []plan.Loop{red}},
			[]string{"prologue r1", "row 1 kept counted true reduced 1 zeroSum false", "return"}},
		{"strided Inner is a kept loop", plan.Plan{Reduced: []plan.Loop{red}, HasInner: true, Inner: plan.Loop{Size: 7, SrcStride: 2, DstStride: 1}},
			[]string{"prologue r0", "row 1 kept counted false reduced 1 zeroSum false", "return"}},
		{"empty reduced loop", plan.Plan{Outer: []plan.Loop{outer}, Reduced: []plan.Loop{red, {Size: 0, SrcStride: 1}}},
			[]string{"prologue r1", "row 1 kept counted true reduced 0 zeroSum true", "return"}},
		{"empty kept loop", plan.Plan{Outer: []plan.Loop{outer, {Size: 0}}, Reduced: []plan.Loop{red}},
			[]string{"return"}},
		{"empty Inner", plan.Plan{HasInner: true, Inner: plan.Loop{Size: 0, SrcStride: 1}},
			[]string{"return"}},
	} {
		r := &recorder{}
		Generate(&c.pl, r)
		if !reflect.DeepEqual(r.log, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, r.log, c.want)
		}
	}
}

func TestNest(t *testing.T) {
	k := Nest{Loops: []plan.Loop{{Size: 2, SrcStride: 1}, {Size: 3, SrcStride: 5}}, Counted: true, Cnt: 9}
	r := &recorder{}
	k.Emit(r, func() { r.add("body") })
	want := []string{"count r9 {", "loop 3 {", "body", "src +20", "}", "src -56", "}"}
	if !reflect.DeepEqual(r.log, want) {
		t.Errorf("Emit: got %q, want %q", r.log, want)
	}

	outer, in, counted := k.SplitInnermost()
	if len(outer.Loops) != 1 || !outer.Counted || in.Size != 3 || counted {
		t.Errorf("SplitInnermost of two loops: %+v, %+v, %v", outer, in, counted)
	}
	outer, in, counted = Nest{Loops: k.Loops[:1], Counted: true, Cnt: 9}.SplitInnermost()
	if len(outer.Loops) != 0 || outer.Counted || in.Size != 2 || !counted {
		t.Errorf("SplitInnermost of the counted loop alone: %+v, %+v, %v", outer, in, counted)
	}

	r = &recorder{}
	EmitReduced(r, []plan.Loop{{Size: 4, SrcStride: 8}, {Size: 6, SrcStride: 1}}, 2, func() { r.add("body") })
	want = []string{"loop 4 {", "loop 6 {", "body", "src +2", "}", "src +4", "}"}
	if !reflect.DeepEqual(r.log, want) {
		t.Errorf("EmitReduced: got %q, want %q", r.log, want)
	}
}

func TestChunks(t *testing.T) {
	for _, c := range []struct {
		n    int64
		c    int
		want []string
	}{
		{10, 4, []string{"loop 2 {", "chunk 4 at 0", "src +16", "}", "chunk 2 at 8"}},
		{8, 4, []string{"loop 2 {", "chunk 4 at 0", "src +16", "}"}},
		{3, 4, []string{"chunk 3 at 0"}},
	} {
		r := &recorder{}
		ptrs := NewPointers(1, 2, nil)
		Chunks(r, ptrs, c.n, c.c, Steps{Src: 4}, func(m int) { r.add("chunk %d at %d", m, ptrs.Pending(1)/4) })
		if !reflect.DeepEqual(r.log, c.want) {
			t.Errorf("Chunks(%d, %d): got %q, want %q", c.n, c.c, r.log, c.want)
		}
		if d := ptrs.Pending(1); d != 0 {
			t.Errorf("Chunks(%d, %d): pointer left %d bytes off", c.n, c.c, d)
		}
	}
}

func TestCheck(t *testing.T) {
	meanOnly := func(r plan.Reduction) bool { return r.IsMean() }
	all := Covers{Arch: "x", PostOp: func(ops.Kind) bool { return true }, Reduction: meanOnly, MaxDepth: 1}
	none := all
	none.PostOp = func(ops.Kind) bool { return false }
	ok := &plan.Plan{SrcDT: dtypes.F32, DstDT: dtypes.F32, Reduced: []plan.Loop{{Size: 2, SrcStride: 1}}, N: 2, Outputs: 1, Div: 2}
	if err := Check(ok, all); err != nil {
		t.Errorf("valid plan: %v", err)
	}
	if err := Check(&plan.Plan{}, all); err == nil || errors.Is(err, status.Unimplemented) {
		t.Errorf("invalid plan: got %v, want Validate's error", err)
	}
	relu := *ok
	relu.PostOps = []plan.PostOp{{Kind: ops.ReLU}}
	err := Check(&relu, none)
	if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), "x: post-op 0 (ReLU) has no JIT code") {
		t.Errorf("unsupported post-op: got %v", err)
	}
	deep := *ok
	deep.Reduced = []plan.Loop{{Size: 2, SrcStride: 4}, {Size: 2, SrcStride: 1}}
	deep.N, deep.Div = 4, 4
	err = Check(&deep, all)
	if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), "x: 0 outer and 2 reduced loops exceed the supported depth 1") {
		t.Errorf("deep plan: got %v", err)
	}
	sum := *ok
	sum.Reduction = plan.AlgSum.Reduction(0, 0)
	err = Check(&sum, all)
	if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), "x: reduction sum has no JIT code") {
		t.Errorf("uncovered alg: got %v", err)
	}
	lp := *ok
	lp.Reduction = plan.AlgNormLpSum.Reduction(3, 0.5)
	err = Check(&lp, all)
	if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), "x: reduction pow>sum>root_add_eps(p=3,eps=0.5) has no JIT code") {
		t.Errorf("uncovered Lp alg: got %v", err)
	}
	// Log-sum-exp: one kernel only unshifted, whatever the emitter covers.
	vec := all
	vec.Reduction = VectorReduction
	lse := *ok
	lse.Reduction = plan.LogSumExp
	err = Check(&lse, vec)
	if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), "x: a log-sum-exp runs as phases") {
		t.Errorf("shifted log-sum-exp: got %v", err)
	}
	lse.Stage = plan.Unshifted
	if err := Check(&lse, vec); err != nil {
		t.Errorf("unshifted log-sum-exp: %v", err)
	}
	for _, dt := range [][2]dtypes.DataType{{dtypes.S8, dtypes.F32}, {dtypes.F32, dtypes.S32}, {dtypes.U8, dtypes.U8}} {
		q := *ok
		q.SrcDT, q.DstDT = dt[0], dt[1]
		err = Check(&q, all) // nil DataTypes: floats only
		want := fmt.Sprintf("x: %v to %v has no JIT code", dt[0], dt[1])
		if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: got %v, want %q", dt, err, want)
		}
		ints := all
		ints.DataTypes = func(src, dst dtypes.DataType) bool { return true }
		if err := Check(&q, ints); err != nil {
			t.Errorf("%v with DataTypes taking it: %v", dt, err)
		}
	}
	// Registers: 2 operands, 1 outer, 1 reduced loop, Inner and the cut
	// of a sum of 20 take 6 general registers.
	regs := *ok
	regs.Reduction = plan.AlgSum.Reduction(0, 0)
	regs.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}, {Kind: ops.Add, BinDT: dtypes.F32}}
	regs.Outer = []plan.Loop{{Size: 2, SrcStride: 40, DstStride: 2, BinStrides: []int64{0, 2}}}
	regs.Inner, regs.HasInner = plan.Loop{Size: 2, SrcStride: 1, DstStride: 1, BinStrides: []int64{0, 1}}, true
	regs.Reduced = []plan.Loop{{Size: 20, SrcStride: 2, BinStrides: []int64{0, 0}}}
	regs.N, regs.Outputs, regs.Div = 20, 4, 1
	if n := RegistersNeeded(&regs); n != 6 {
		t.Errorf("RegistersNeeded = %d, want 6", n)
	}
	wide := all
	wide.Reduction, wide.MaxDepth = func(plan.Reduction) bool { return true }, 2
	for _, c := range []struct {
		registers int
		ok        bool
	}{{0, true}, {6, true}, {5, false}} {
		w := wide
		w.Registers = c.registers
		err := Check(&regs, w)
		if c.ok && err != nil {
			t.Errorf("Registers %d: %v", c.registers, err)
		}
		want := "x: 2 binary operands and 1 outer and 1 reduced loops need 6 general registers, 5 are free"
		if !c.ok && (!errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), want)) {
			t.Errorf("Registers %d: got %v, want %q", c.registers, err, want)
		}
	}
	noOps := regs
	noOps.PostOps = nil
	noOps.Outer = []plan.Loop{{Size: 2, SrcStride: 40, DstStride: 2}}
	noOps.Inner = plan.Loop{Size: 2, SrcStride: 1, DstStride: 1}
	noOps.Reduced = []plan.Loop{{Size: 20, SrcStride: 2}}
	w := wide
	w.Registers = 1
	if err := Check(&noOps, w); err != nil {
		t.Errorf("no operands, Registers 1: %v (the budget applies to plans with operands only)", err)
	}
	for _, bdt := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32} {
		q := *ok
		q.PostOps = []plan.PostOp{{Kind: ops.ReLU}, {Kind: ops.Add, BinDT: dtypes.F32}, {Kind: ops.Multiply, BinDT: bdt}}
		q.Outer = []plan.Loop{{Size: 1, DstStride: 1, BinStrides: []int64{1, 1}}}
		err = Check(&q, all) // nil Operands: floats only
		want := fmt.Sprintf("x: post-op 2 (Multiply) reads a %v operand, which has no JIT code", bdt)
		if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v operand: got %v, want %q", bdt, err, want)
		}
		ints := all
		ints.Operands = plan.IsOperandType
		if err := Check(&q, ints); err != nil {
			t.Errorf("%v operand with Operands taking it: %v", bdt, err)
		}
	}
}

func TestPointers(t *testing.T) {
	p := NewPointers(1, 2, []int16{5, 6})
	s := StepsOf(&plan.Loop{SrcStride: 3, DstStride: 1, BinStrides: []int64{0, 2}}, 2, 4, []int64{2, 1})
	if want := (Steps{Src: 6, Dst: 4, Bin: [plan.MaxBinary]int64{0, 2}}); s != want {
		t.Fatalf("StepsOf: got %+v, want %+v", s, want)
	}
	if got := s.Scaled(3); got.Src != 18 || got.Dst != 12 || got.Bin[1] != 6 {
		t.Errorf("Scaled: %+v", got)
	}
	p.Advance(s, 2)
	p.Bump(1, -12) // src back where it was: nothing to emit
	var got []string
	p.Flush(func(r int16, d int64) { got = append(got, fmt.Sprintf("r%d+%d", r, d)) })
	// Fixed order: src, dst, operands; zero moves are skipped.
	if want := []string{"r2+8", "r6+4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Flush: got %q, want %q", got, want)
	}
	for _, r := range p.Regs() {
		if d := p.Pending(r); d != 0 {
			t.Errorf("r%d still %d bytes pending after Flush", r, d)
		}
	}
	p.Bump(5, 7)
	if d := p.Take(5); d != 7 || p.Pending(5) != 0 {
		t.Errorf("Take: got %d, then %d pending", d, p.Pending(5))
	}
}

func TestLaneMaps(t *testing.T) {
	s := Steps{Src: 8, Dst: 4, Bin: [plan.MaxBinary]int64{0, 2}}
	if lm := Outputs(1, s); lm.N != Bcast {
		t.Errorf("Outputs(1): N = %d, want Bcast", lm.N)
	}
	lm := Block(2, 8, 3, s)
	if lm.N != 3 || lm.DstOff != 16*4 || lm.BinOff[0] != 0 || lm.BinOff[1] != 16*2 || lm.DstStep != 4 || lm.BinStep != s.Bin {
		t.Errorf("Block(2, 8, 3): %+v", lm)
	}
	one := lm.Lane(2)
	if one.N != Bcast || one.DstOff != 16*4+2*4 || one.BinOff[1] != 16*2+2*2 || one.DstStep != 0 {
		t.Errorf("Lane(2): %+v", one)
	}
	for _, c := range []struct {
		lm   LaneMap
		want bool
	}{
		{Outputs(4, s), true},                 // dst 4-byte elements, operand 0 broadcast, operand 1 2-byte
		{Outputs(4, Steps{Dst: 8}), false},    // dst strided
		{Block(0, 4, 1, Steps{Dst: 8}), true}, // one lane
		{Outputs(4, Steps{Dst: 4, Bin: [plan.MaxBinary]int64{0, 4}}), false},
	} {
		if got := c.lm.Contiguous(4, []int64{4, 2}); got != c.want {
			t.Errorf("Contiguous(%+v) = %v, want %v", c.lm, got, c.want)
		}
	}
}

func TestRowsOf(t *testing.T) {
	red := []plan.Loop{{Size: 3, SrcStride: 50}, {Size: 9, SrcStride: 1}}
	if r := RowsOf(red, false); !r.Vec || r.Len != 9 || len(r.Outer) != 1 || r.Elem != nil {
		t.Errorf("contiguous: %+v", r)
	}
	red[1].SrcStride = 2
	if r := RowsOf(red, false); r.Vec || r.Elem != &red[1] || len(r.Outer) != 1 {
		t.Errorf("strided: %+v", r)
	}
	if r := RowsOf(nil, true); r.Vec || r.Elem != nil || !r.ZeroSum {
		t.Errorf("nothing summed: %+v", r)
	}
}
