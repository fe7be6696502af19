package partition

import (
	"slices"

	"github.com/gdnn/gdnn/graph"
)

// A fused group runs at one place in the list Get returns, so whatever
// it reads from outside (a binary post-op's other operand, a residual's
// bias, gamma and beta, a mask, an axes tensor, an epsilon) must be
// produced by a partition before it. Get walks the ops in graph order,
// and exporters list independent branches in any order: mean pooling
// divides ReduceSum(x * mask) by a count that a second ReduceSum of the
// mask computes, and whether the Divide could fuse depended on which of
// the two the graph listed first.
//
// So where a group would fuse an op but for an operand whose producer
// is not in a partition yet, emit partitions that producer and the
// ancestors of it not yet taken first, in graph order, then forms the
// group again. This is done on demand rather than by reordering the ops
// beforehand because which operand a group must wait for is known only
// as the group forms (either operand of a commutative op may be the
// chain's), and because a graph that fuses in graph order then keeps
// its partitions and their order.
//
// It does not when the producer depends on the group's first op (every
// op of a group depends on it): the group would have to run before
// itself, and the fusion is refused with that reason. Nor when the
// producer depends on a group still being formed further out (its head
// waits, directly or not, for this one): two groups then want ops only
// the other can make ready, and the outer one gives up the operand it
// waits for, as it did when Get did not wait, so that the group that
// starts later in graph order keeps the op they both want.

// sched is the state of Get: the ops taken into partitions so far, and
// the groups being formed, each waiting for the partitions of a
// producer.
type sched struct {
	g        *graph.Graph
	policy   Policy
	order    map[*graph.Op]int // graph order
	taken    map[uint64]bool
	notFused map[uint64]string // why an op next to a reduction was not fused with it
	parts    []*Partition
	forming  []*forming // outermost first
}

// forming is a group being formed.
type forming struct {
	head *graph.Op
	// patient holds the producers the group does not wait for: waiting
	// would clash with a group further out.
	patient map[uint64]bool
	late    *graph.Op // the producer the last try would wait for; nil: none
	clash   int       // the outermost group late depends on; -1: none
}

func newSched(g *graph.Graph, policy Policy) *sched {
	s := &sched{g: g, policy: policy, order: map[*graph.Op]int{}, taken: map[uint64]bool{}, notFused: map[uint64]string{}}
	for i, op := range g.Ops() {
		s.order[op] = i
	}
	return s
}

// has reports whether op is in a partition already.
func (s *sched) has(op *graph.Op) bool { return s.taken[op.ID] }

// wait returns "" when the group being formed may read the outputs of
// p (nil: a graph input), that is when p is in a partition already;
// else why not, a clause on p ("which runs after " + after, or why p
// must run after the group). Where emit can make p ready by
// partitioning it first, wait notes it for emit.
func (s *sched) wait(p *graph.Op, after string) string {
	if p == nil || s.taken[p.ID] {
		return ""
	}
	why := "which runs after " + after
	f := s.forming[len(s.forming)-1]
	if f.patient[p.ID] {
		return why
	}
	up := s.ancestors(p)
	if up[f.head] {
		return "which depends on " + f.head.String() + ", where this group starts, and so runs after the group"
	}
	for i, o := range s.forming[:len(s.forming)-1] {
		if up[o.head] {
			if f.clash < 0 || i < f.clash {
				f.clash = i
			}
			return why
		}
	}
	if f.late == nil {
		f.late = p
	}
	return why
}

// ancestors is the set of op and the ops not yet taken whose outputs it
// depends on.
func (s *sched) ancestors(op *graph.Op) map[*graph.Op]bool {
	up := map[*graph.Op]bool{op: true}
	stack := []*graph.Op{op}
	for len(stack) > 0 {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range o.Inputs {
			if p := s.g.Producer(t.ID); p != nil && !s.taken[p.ID] && !up[p] {
				up[p] = true
				stack = append(stack, p)
			}
		}
	}
	return up
}

// emit partitions the group that starts at op, after the partitions of
// the producers it waits for. It returns -1, or the index in forming
// of an outer group that must give up waiting (op is then not taken).
func (s *sched) emit(op *graph.Op) int {
	f := &forming{head: op, patient: map[uint64]bool{}}
	s.forming = append(s.forming, f)
	me := len(s.forming) - 1
	defer func() { s.forming = s.forming[:me] }()
	for {
		f.late, f.clash = nil, -1
		notFused := map[uint64]string{}
		p := s.group(op, notFused)
		if f.clash >= 0 {
			return f.clash
		}
		if f.late == nil {
			s.add(op, p, notFused)
			return -1
		}
		if c := s.emitUpTo(f.late); c >= 0 {
			if c < me {
				return c
			}
			f.patient[f.late.ID] = true
		}
	}
}

// emitUpTo partitions p and its ancestors not yet taken, in graph order;
// it returns emit's clash, or -1.
func (s *sched) emitUpTo(p *graph.Op) int {
	var ops []*graph.Op
	for op := range s.ancestors(p) {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b *graph.Op) int { return s.order[a] - s.order[b] })
	for _, op := range ops {
		if s.taken[op.ID] {
			continue // fused into a group before it
		}
		if c := s.emit(op); c >= 0 {
			return c
		}
	}
	return -1
}

// add appends p, the group that starts at op, to the partitions and
// takes its ops.
func (s *sched) add(op *graph.Op, p *Partition, notFused map[uint64]string) {
	for _, o := range p.ops {
		s.taken[o.ID] = true
	}
	for id, why := range notFused {
		s.notFused[id] = why
	}
	if why := s.notFused[op.ID]; !p.supported && why != "" {
		p.reason += " (" + why + ")"
	}
	p.id = len(s.parts)
	s.parts = append(s.parts, p)
}
