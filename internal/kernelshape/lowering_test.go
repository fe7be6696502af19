package kernelshape

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
)

// finisher is a Finisher (and Counters) that writes down what it is
// asked to emit.
type finisher struct {
	log  []string
	next int
	ops  Operands
	one  int
	ptrs *Pointers
}

func (f *finisher) add(format string, args ...any) {
	f.log = append(f.log, fmt.Sprintf(format, args...))
}

func (f *finisher) Tmp() int              { f.next++; return f.next + 99 }
func (f *finisher) Mark() int             { return f.next }
func (f *finisher) Release(m int)         { f.next = m }
func (f *finisher) Finalize(r int)        { f.add("finalize v%d", r) }
func (f *finisher) LaneBcast(d, s, j int) { f.add("v%d = v%d[%d]", d, s, j) }
func (f *finisher) Eltwise(op plan.PostOp, r int) {
	f.add("%v v%d", op.Kind, r)
}
func (f *finisher) LoadOperand(i, r int, off int64, n int) {
	f.add("v%d = bin%d+%d x%d", r, i, off, n)
}
func (f *finisher) Binary(k ops.Kind, r, t int)      { f.add("v%d %v= v%d", r, k, t) }
func (f *finisher) StoreDst(r int, off int64, n int) { f.add("dst+%d = v%d x%d", off, r, n) }
func (f *finisher) SingleLanes() int                 { return f.one }
func (f *finisher) Operands() Operands               { return f.ops }

// guarded is a finisher with the optional FinalizeGuard.
type guarded struct{ *finisher }

func (g guarded) GuardFinalize(r int) { g.add("guard v%d", r) }

func TestEpilogue(t *testing.T) {
	ops := Operands{PostOps: []plan.PostOp{{Kind: ops.ReLU}, {Kind: ops.Add}, {Kind: ops.Multiply}},
		DstSize: 4, BinSizes: []int64{4, 2}}
	s := Steps{Dst: 4, Bin: [plan.MaxBinary]int64{4, 0}}
	cases := []struct {
		name  string
		lm    LaneMap
		one   int
		guard bool
		want  []string
	}{
		{"vector: the broadcast operand is one element", Outputs(3, s), Bcast, false, []string{
			"finalize v0", "ReLU v0", "v100 = bin0+0 x3", "v0 Add= v100", "v100 = bin1+0 x-1", "v0 Multiply= v100", "dst+0 = v0 x3"}},
		{"one output, single outputs in lane 0", Outputs(1, s), 1, true, []string{
			"guard v0", "finalize v0", "ReLU v0", "v100 = bin0+0 x1", "v0 Add= v100", "v100 = bin1+0 x1", "v0 Multiply= v100", "dst+0 = v0 x-1"}},
		{"strided dst: lane by lane", Outputs(2, Steps{Dst: 8, Bin: s.Bin}), Bcast, false, []string{
			"finalize v0",
			"v100 = v0[0]", "ReLU v100", "v101 = bin0+0 x-1", "v100 Add= v101", "v101 = bin1+0 x-1", "v100 Multiply= v101", "dst+0 = v100 x-1",
			"v100 = v0[1]", "ReLU v100", "v101 = bin0+4 x-1", "v100 Add= v101", "v101 = bin1+0 x-1", "v100 Multiply= v101", "dst+8 = v100 x-1"}},
	}
	for _, c := range cases {
		f := &finisher{ops: ops, one: c.one}
		var e Finisher = f
		if c.guard {
			e = guarded{f}
		}
		Epilogue(e, 0, c.lm)
		if !reflect.DeepEqual(f.log, c.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, f.log, c.want)
		}
		if f.next != 0 {
			t.Errorf("%s: %d temporaries left taken", c.name, f.next)
		}
	}
}

// The loops' primitives, written down.
func (f *finisher) Counter() int16                      { f.add("counter"); return 9 }
func (f *finisher) FreeCounter(int16)                   { f.add("free") }
func (f *finisher) Pointers() *Pointers                 { return f.ptrs }
func (f *finisher) Flush()                              { f.ptrs.Flush(func(r int16, d int64) { f.add("r%d += %d", r, d) }) }
func (f *finisher) NewLabel() Label                     { return &obj.Prog{} }
func (f *finisher) PlaceLabel(Label)                    { f.add("label") }
func (f *finisher) EnterLoop(c int16, n int64, _ Label) { f.add("r%d = %d; top", c, n) }
func (f *finisher) LeaveLoop(c int16, top Label)        { f.add("leave"); f.Repeat(c, top) }
func (f *finisher) SkipUnlessPositive(c int16, _ Label) { f.add("skip unless r%d > 0", c) }
func (f *finisher) Repeat(c int16, _ Label) {
	f.Flush()
	f.add("r%d--, repeat", c)
}

func TestLoop(t *testing.T) {
	s := Steps{Src: 16, Dst: 4}
	for _, c := range []struct {
		n    int64
		want []string
	}{
		{0, nil},
		{1, []string{"body"}},
		{3, []string{"counter", "r9 = 3; top", "body", "leave", "r1 += 16", "r2 += 4", "r9--, repeat", "free"}},
	} {
		f := &finisher{ptrs: NewPointers(1, 2, nil)}
		Loop(f, c.n, s, func() { f.add("body") })
		if !reflect.DeepEqual(f.log, c.want) {
			t.Errorf("Loop(%d):\ngot  %q\nwant %q", c.n, f.log, c.want)
		}
		// The rewind stays pending, to merge with the next move.
		if c.n > 1 && (f.ptrs.Pending(1) != -c.n*16 || f.ptrs.Pending(2) != -c.n*4) {
			t.Errorf("Loop(%d): pending %d, %d", c.n, f.ptrs.Pending(1), f.ptrs.Pending(2))
		}
	}
	f := &finisher{ptrs: NewPointers(1, 2, nil)}
	f.ptrs.Bump(1, 8)
	CountLoop(f, 5, s, func() { f.add("body") })
	want := []string{"r1 += 8", "skip unless r5 > 0", "label", "body", "r1 += 16", "r2 += 4", "r5--, repeat", "label"}
	if !reflect.DeepEqual(f.log, want) {
		t.Errorf("CountLoop:\ngot  %q\nwant %q", f.log, want)
	}
}
