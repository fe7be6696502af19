package vf64

import (
	"math"

	"github.com/gdnn/gdnn/internal/plan"
)

// Model runs the post-op op (Has(op.Kind)) on x in scalar Go through
// the same steps the machine code takes: the post-ops' executable
// specification, which the tests hold to plan.EltwiseF64.
func Model(op plan.PostOp, x float64) float64 {
	m := &scalar{v: []float64{x}}
	if !Emit(m, op, 0) {
		return math.NaN()
	}
	return m.v[0]
}

// Temps returns the most temporaries the post-op op (Has) takes at once
// besides its input's register on AVX2, the operations' own included.
func Temps(op plan.PostOp) int {
	m := &scalar{v: []float64{1}}
	Emit(m, op, 0)
	return m.peak
}

// scalar is Lanes over one lane: register i is v[i]. peak is the most
// temporaries the post-op held at once, counting the ones AVX2's
// instructions take inside an operation (AVX2Temps).
type scalar struct {
	v    []float64
	next int
	peak int
}

// AVX2Temps are the temporaries AVX2's Lanes take inside an operation:
// the exp's three, LogUnit's four, a mask or sign for a select, an
// OrSign and KeepNaN.
var AVX2Temps = map[string]int{"Exp": 3, "LogUnit": 4, "SelLT": 1, "OrSign": 1, "KeepNaN": 1}

// inside records an operation that takes the temporaries AVX2Temps says.
func (s *scalar) inside(op string) { s.peak = max(s.peak, s.next+AVX2Temps[op]) }

func (s *scalar) Tmp() int {
	s.next++
	s.peak = max(s.peak, s.next)
	if s.next >= len(s.v) {
		s.v = append(s.v, 0)
	}
	return s.next
}
func (s *scalar) Mark() int              { return s.next }
func (s *scalar) Release(mark int)       { s.next = mark }
func (s *scalar) Const(d int, v float64) { s.v[d] = v }
func (s *scalar) Mov(d, a int)           { s.v[d] = s.v[a] }
func (s *scalar) Add(d, a, b int)        { s.v[d] = s.v[a] + s.v[b] }
func (s *scalar) Sub(d, a, b int)        { s.v[d] = s.v[a] - s.v[b] }
func (s *scalar) Mul(d, a, b int)        { s.v[d] = s.v[a] * s.v[b] }
func (s *scalar) Div(d, a, b int)        { s.v[d] = s.v[a] / s.v[b] }
func (s *scalar) FMA(d, a, b, c int)     { s.v[d] = math.FMA(s.v[a], s.v[b], s.v[c]) }
func (s *scalar) Min(d, a, b int)        { s.v[d] = math.Min(s.v[a], s.v[b]) }
func (s *scalar) Max(d, a, b int)        { s.v[d] = math.Max(s.v[a], s.v[b]) }
func (s *scalar) OrSign(d, a, b int) {
	s.inside("OrSign")
	s.v[d] = math.Float64frombits(math.Float64bits(s.v[a]) | math.Float64bits(s.v[b])&(1<<63))
}
func (s *scalar) SelLT(d, a, b, c, e int) {
	s.inside("SelLT")
	if s.v[a] < s.v[b] {
		s.v[d] = s.v[c]
	} else {
		s.v[d] = s.v[e]
	}
}
func (s *scalar) Poly(d, x int, c []float64) { s.v[d] = horner(c, s.v[x]) }
func (s *scalar) Exp(r int)                  { s.inside("Exp"); s.v[r] = Exp(s.v[r]) }
func (s *scalar) LogUnit(r int)              { s.inside("LogUnit"); s.v[r] = Log(s.v[r]) }
func (s *scalar) KeepNaN(d, x int) {
	s.inside("KeepNaN")
	if s.v[x] != s.v[x] {
		s.v[d] = s.v[x]
	}
}
