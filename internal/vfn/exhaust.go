package vfn

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/gdnn/gdnn/internal/vlog"
)

// This file drives the runs of the post-ops over all (or a sample of
// all) f32 bit patterns that the emitters' and Model's exhaustive tests
// make (package amd64's and arm64's TestProgramsExhaustive, this
// package's TestModelExhaustive), and tallies their results against the
// contract.

// ExhaustiveOps returns the post-ops the exhaustive runs cover: SweepOps,
// then Exp and Log.
func ExhaustiveOps() []plan.PostOp {
	return append(SweepOps(), plan.PostOp{Kind: ops.Exp}, plan.PostOp{Kind: ops.Log})
}

// OpName names op with its parameter, for test names and logs.
func OpName(op plan.PostOp) string {
	switch op.Kind {
	case ops.GELUErf:
		return "GELUErf"
	case ops.Elu:
		return fmt.Sprintf("Elu,alpha=%v", op.Alpha)
	case ops.SoftPlus:
		return fmt.Sprintf("SoftPlus,beta=%v", op.Beta)
	}
	return op.Kind.String()
}

// CheckerFor returns the contract of op's results (Check, vexp.Check or
// vlog.Check) as a function of the input x (as the kernel sees it,
// vexp.PostOpInput) and the result.
func CheckerFor(op plan.PostOp) func(x, got float32) (int64, bool) {
	switch op.Kind {
	case ops.Exp:
		return vexp.Check
	case ops.Log:
		return vlog.Check
	}
	return func(x, got float32) (int64, bool) { return Check(op, x, got) }
}

// ModelFor returns the scalar model whose bits the emitters' code for op
// gives (Model of op's program, vexp.Model or vlog.Model), and false for
// an op with none.
func ModelFor(op plan.PostOp) (func(x float32) float32, bool) {
	switch op.Kind {
	case ops.Exp:
		return vexp.Model, true
	case ops.Log:
		return vlog.Model, true
	}
	p, ok := For(op)
	if !ok {
		return nil, false
	}
	return func(x float32) float32 { return Model(p, x) }, true
}

// SampleInput returns the i-th input (0 <= i < 2^32/stride) of a run
// over every stride-th f32 bit pattern, stride a power of two: the
// pattern whose high bits are i and whose low log2(stride) bits are a
// hash of i. Every sign, exponent and leading part of the significand
// is met (so every range of every program is), once each, and the low
// bits, where rounding happens, vary from input to input rather than
// being one value throughout. Stride 1 is every pattern.
func SampleInput(i, stride uint32) uint32 {
	if stride <= 1 {
		return i
	}
	h := i * 0x9e3779b9 // Fibonacci hashing: the high bits of the product mix all of i
	h ^= h >> 15
	h *= 0x85ebca6b
	h ^= h >> 13
	return i*stride + h&(stride-1)
}

// Result is an input and its result, by bits, and the result's distance
// from the reference in ulps (math.MaxInt64 for a NaN where the
// contract wants none).
type Result struct {
	X, Y uint32
	ULPs int64
}

// Diff is an input whose result Y differs from another result set's,
// Other, by bits.
type Diff struct{ X, Y, Other uint32 }

// Tally is one set of results (a kernel's or a model's) of one op over
// some inputs, held to the contract.
type Tally struct {
	N      int64    // inputs
	Hist   [6]int64 // results 0, 1, 2, 3, 4 and more ulps off (not a NaN or an infinity where the contract wants the other)
	Worst  int64
	At     []uint32 // the first inputs at Worst, by bits
	Bad    []Result // the first results that break the contract, by input bits
	NBad   int64
	Differ int64  // inputs whose result differs from the first set's
	Diffs  []Diff // the first of them, by input bits
}

// TallyKeep and BadKeep are how many inputs at the worst error and
// outside the contract (and differing from the first set) a Tally keeps.
const TallyKeep, BadKeep = 5, 16

// Add counts the result y of input x, u ulps off, ok if within the
// contract.
func (s *Tally) Add(x, y uint32, u int64, ok bool) {
	s.N++
	if !ok {
		if len(s.Bad) < BadKeep {
			s.Bad = append(s.Bad, Result{x, y, u})
		}
		s.NBad++
		if u == math.MaxInt64 {
			return
		}
	}
	s.Hist[min(u, 5)]++
	if u > s.Worst {
		s.Worst, s.At = u, s.At[:0]
	}
	if u == s.Worst && len(s.At) < TallyKeep {
		s.At = append(s.At, x)
	}
}

// AddDiff counts input x, whose result y differs from other, the first
// set's.
func (s *Tally) AddDiff(x, y, other uint32) {
	if len(s.Diffs) < BadKeep {
		s.Diffs = append(s.Diffs, Diff{x, y, other})
	}
	s.Differ++
}

// Merge adds o, a tally of other inputs, to s.
func (s *Tally) Merge(o *Tally) {
	s.N += o.N
	for i, n := range o.Hist {
		s.Hist[i] += n
	}
	if o.Worst > s.Worst {
		s.Worst, s.At = o.Worst, nil
	}
	if o.Worst == s.Worst {
		s.At = append(s.At, o.At...)
		slices.Sort(s.At)
		s.At = s.At[:min(len(s.At), TallyKeep)]
	}
	s.Bad = append(s.Bad, o.Bad...)
	slices.SortFunc(s.Bad, func(a, b Result) int { return int(int64(a.X) - int64(b.X)) })
	s.Bad = s.Bad[:min(len(s.Bad), BadKeep)]
	s.NBad += o.NBad
	s.Differ += o.Differ
	s.Diffs = append(s.Diffs, o.Diffs...)
	slices.SortFunc(s.Diffs, func(a, b Diff) int { return int(int64(a.X) - int64(b.X)) })
	s.Diffs = s.Diffs[:min(len(s.Diffs), BadKeep)]
}

// Summary describes s for op: the worst error, the first inputs at it
// with the reference's value, and the histogram.
func (s *Tally) Summary(op plan.PostOp) string {
	var at []string
	for _, xb := range s.At {
		x := f32(xb)
		at = append(at, fmt.Sprintf("%v (%#x, want %v)", x, xb, eltwise(op, x)))
	}
	return fmt.Sprintf("worst %d ulps at %v; results 0..4 and >4 ulps off: %v", s.Worst, at, s.Hist)
}

// BadLines describes s's results that break the contract, one a line.
func (s *Tally) BadLines(op plan.PostOp) []string {
	var ls []string
	for _, b := range s.Bad {
		x, y := f32(b.X), f32(b.Y)
		ls = append(ls, fmt.Sprintf("%v (%#x) gives %v (%#x), want %v (%d ulps)", x, b.X, y, b.Y, eltwise(op, x), b.ULPs))
	}
	return ls
}

// DiffLines describes s's results that differ from the first set's
// (named first), one a line.
func (s *Tally) DiffLines(op plan.PostOp, first string) []string {
	var ls []string
	for _, d := range s.Diffs {
		x := f32(d.X)
		ls = append(ls, fmt.Sprintf("%v (%#x) gives %v (%#x), %s %v (%#x), want %v", x, d.X, f32(d.Y), d.Y,
			first, f32(d.Other), d.Other, eltwise(op, x)))
	}
	return ls
}

// eltwise is op's reference for x.
func eltwise(op plan.PostOp, x float32) float32 { return plan.Eltwise(op.Kind, op.Alpha, op.Beta, x) }

// ExhaustChunkBits is log2 of how many inputs Exhaust hands eval at
// once (at most).
const ExhaustChunkBits = 20

// ExhaustChunk returns how many inputs Exhaust hands eval at once for
// stride: 2^ExhaustChunkBits, or all 2^32/stride where that is fewer.
func ExhaustChunk(stride uint32) int {
	return int(min(uint64(1)<<ExhaustChunkBits, uint64(1<<32)/uint64(max(stride, 1))))
}

// Exhaust runs op over the 2^32/stride inputs of SampleInput (stride a
// power of two, 1 for all 2^32), a chunk of up to 2^ExhaustChunkBits at
// a time in workers goroutines. eval gets the chunk's inputs as
// little-endian f32s in src and fills each of sets dsts (as many bytes
// as src) with one set of results: a kernel's, or a model's of x as the
// kernel sees it (vexp.PostOpInput). Exhaust holds every result to op's
// contract (CheckerFor; the float64 reference is computed once where a
// set gives the first set's bits) and counts, in each set after the
// first, the inputs where it differs from the first. It returns a Tally
// a set.
func Exhaust(op plan.PostOp, stride uint32, workers, sets int, eval func(src []byte, dst [][]byte)) []Tally {
	if stride == 0 || stride&(stride-1) != 0 {
		panic(fmt.Sprintf("vfn.Exhaust: stride %d is not a power of two", stride))
	}
	check := CheckerFor(op)
	n := uint64(ExhaustChunk(stride))
	chunks := int64(uint64(1<<32) / uint64(stride) / n)
	var next atomic.Int64
	var mu sync.Mutex
	all := make([]Tally, sets)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := make([]byte, 4*n)
			got := make([][]byte, sets)
			for i := range got {
				got[i] = make([]byte, 4*n)
			}
			ts := make([]Tally, sets)
			xs := make([]uint32, n)
			for {
				c := next.Add(1) - 1
				if c >= chunks {
					break
				}
				base := uint32(uint64(c) * n)
				for i := range xs {
					xs[i] = SampleInput(base+uint32(i), stride)
					binary.LittleEndian.PutUint32(src[4*i:], xs[i])
				}
				eval(src, got)
				for i, xb := range xs {
					x := vexp.PostOpInput(f32(xb))
					y0 := binary.LittleEndian.Uint32(got[0][4*i:])
					u0, ok0 := check(x, f32(y0))
					ts[0].Add(xb, y0, u0, ok0)
					for j := 1; j < sets; j++ {
						y, u, ok := binary.LittleEndian.Uint32(got[j][4*i:]), u0, ok0
						if y != y0 {
							ts[j].AddDiff(xb, y, y0)
							u, ok = check(x, f32(y))
						}
						ts[j].Add(xb, y, u, ok)
					}
				}
			}
			mu.Lock()
			for j := range ts {
				all[j].Merge(&ts[j])
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

// ModelInto fills dst with model's results for the inputs in src (both
// little-endian f32s), each input as the kernel sees it
// (vexp.PostOpInput): for an eval of Exhaust.
func ModelInto(model func(float32) float32, src, dst []byte) {
	for i := 0; i+4 <= len(src); i += 4 {
		x := vexp.PostOpInput(f32(binary.LittleEndian.Uint32(src[i:])))
		binary.LittleEndian.PutUint32(dst[i:], bits(model(x)))
	}
}
