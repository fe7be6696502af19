package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// Exports for the external tests (package arm64_test), which run this
// package's shapes through package jit; jit imports arm64, so those
// tests cannot live in package arm64.

// Shape is a named problem of one kernel shape.
type Shape struct {
	Name string
	P    *plan.Problem
}

// Pairs are the src:dst data type pairs.
var Pairs = pairs

// Shapes returns shapes(n, sdt, ddt, bdt) with exported fields.
func Shapes(n int64, sdt, ddt, bdt dtypes.DataType) []Shape {
	var out []Shape
	for _, s := range shapes(n, sdt, ddt, bdt) {
		out = append(out, Shape{s.name, s.p})
	}
	return out
}

// Buffers fills exact src and operand data for p and returns them with a
// sentinel dst, the reference result and its output elements.
func Buffers(t testing.TB, seed int64, p *plan.Problem) (src, dst []byte, bins [][]byte, want []byte, outs map[int64]bool) {
	src, dst, bins = buffersFor(t, exactFiller{rand.New(rand.NewSource(seed)), 16}.fill, p, false, false)
	want, outs = kerneltest.Reference(p, src, dst, bins)
	return src, dst, bins, want, outs
}

// Reduction is a named reduction the emitter covers.
type Reduction struct {
	Name string
	R    plan.Reduction
}

// Reductions lists the covered reductions.
func Reductions() []Reduction {
	var out []Reduction
	for _, c := range reductions {
		out = append(out, Reduction{c.name, c.r})
	}
	return out
}

// KindBuffers is Buffers for any reduction: data that keeps p's results
// exact (see fillerFor; long: up to a million elements per output), and
// the oracle's result.
func KindBuffers(t testing.TB, seed int64, p *plan.Problem, long bool) (src, dst []byte, bins [][]byte, want []byte, outs map[int64]bool) {
	r := rand.New(rand.NewSource(seed))
	src, dst, bins = buffersFor(t, fillerFor(r, p.Reduction, true, long), p, false, false)
	want, outs = kindResult(p, 0, src, dst, bins)
	return src, dst, bins, want, outs
}
