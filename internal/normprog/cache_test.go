package normprog

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
)

func TestCached(t *testing.T) {
	prob := func(n int64) *norm.Problem {
		return &norm.Problem{Kind: norm.RMSNorm, Dims: []int64{2, n}, Axis: 1, Eps: 1e-5,
			Src: norm.Operand{DT: dtypes.F32, Strides: []int64{n, 1}}, Dst: norm.Operand{DT: dtypes.F32, Strides: []int64{n, 1}}}
	}
	a, err := Cached(prob(8))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Cached(prob(8)); b != a {
		t.Error("the same problem compiles again")
	}
	if b, _ := Cached(prob(9)); b == a {
		t.Error("another problem gets the first one's program")
	}
	prev := jit.SetMaxISA(jit.None)
	b, _ := Cached(prob(8))
	jit.SetMaxISA(prev)
	if b == a && jit.EffectiveISA() != jit.None {
		t.Error("a program compiled for one ISA serves another")
	}
	for n := int64(100); n < 100+cacheCap; n++ {
		if _, err := Cached(prob(n)); err != nil {
			t.Fatal(err)
		}
	}
	if cache.order.Len() != cacheCap {
		t.Errorf("the cache holds %d programs, want %d", cache.order.Len(), cacheCap)
	}
	if b, _ := Cached(prob(8)); b == a {
		t.Error("the least recently used program is still cached")
	}
	bad := prob(8)
	bad.Eps = -1
	if _, err := Cached(bad); err == nil {
		t.Error("a refused problem is served")
	}
}
