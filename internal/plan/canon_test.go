package plan

import (
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
)

// L is a compact loop for the tables: size, src stride, dst stride.
func L(size, src, dst int64, bins ...int64) Loop {
	return Loop{Size: size, SrcStride: src, DstStride: dst, BinStrides: bins}
}

func TestCanonicalize(t *testing.T) {
	nhwc := func() *Problem {
		// Logical NCHW 2x16x5x7 stored as NHWC: strides N=H*W*C, C=1,
		// H=W*C, W=C; dst N,C,1,1 dense as NHWC too (N=C, C=1).
		return &Problem{
			SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{2, 16, 5, 7}, SrcStrides: []int64{560, 1, 112, 16},
			Reduce: axes(4, 2, 3), DstStrides: []int64{16, 1, 0, 0},
		}
	}
	padded := func() *Problem {
		// 3x4x5 with rows padded to 8 elements: strides 32, 8, 1.
		p := plain([]int64{3, 4, 5}, 1, 2)
		p.SrcStrides = []int64{32, 8, 1}
		return p
	}
	withOne := func() *Problem {
		p := plain([]int64{1, 6, 1, 10, 1}, 3)
		return p
	}
	tests := []struct {
		name     string
		p        *Problem
		outer    []Loop
		red      []Loop
		inner    *Loop
		n, outs  int64
		division int64
	}{
		{"NCHW axes 2,3", plain([]int64{2, 3, 4, 5}, 2, 3),
			[]Loop{L(6, 20, 1)}, []Loop{L(20, 1, 0)}, nil, 20, 6, 20},
		{"NHWC spatial", nhwc(),
			[]Loop{L(2, 560, 16)}, []Loop{L(35, 16, 0)}, &Loop{Size: 16, SrcStride: 1, DstStride: 1}, 35, 32, 35},
		{"2-D axis 0", plain([]int64{7, 9}, 0),
			nil, []Loop{L(7, 9, 0)}, &Loop{Size: 9, SrcStride: 1, DstStride: 1}, 7, 9, 7},
		{"2-D axis 1", plain([]int64{7, 9}, 1),
			[]Loop{L(7, 9, 1)}, []Loop{L(9, 1, 0)}, nil, 9, 7, 9},
		{"padded rows not merged", padded(),
			[]Loop{L(3, 32, 1)}, []Loop{L(4, 8, 0), L(5, 1, 0)}, nil, 20, 3, 20},
		{"size-1 dims dropped", withOne(),
			[]Loop{L(6, 10, 1)}, []Loop{L(10, 1, 0)}, nil, 10, 6, 10},
		{"NCHW axis 1: H,W merge into Inner", plain([]int64{2, 3, 4, 5}, 1),
			[]Loop{L(2, 60, 20)}, []Loop{L(3, 20, 0)}, &Loop{Size: 20, SrcStride: 1, DstStride: 1}, 3, 40, 3},
		{"alternating axes 0,2", plain([]int64{4, 5, 6, 7}, 0, 2),
			[]Loop{L(5, 42, 7)}, []Loop{L(4, 210, 0), L(6, 7, 0)}, &Loop{Size: 7, SrcStride: 1, DstStride: 1}, 24, 35, 24},
		{"no axes: identity", plain([]int64{3, 4}),
			nil, nil, &Loop{Size: 12, SrcStride: 1, DstStride: 1}, 1, 12, 1},
		{"all axes", plain([]int64{3, 4}, 0, 1),
			nil, []Loop{L(12, 1, 0)}, nil, 12, 1, 12},
		{"rank 0", plain(nil),
			nil, nil, nil, 1, 1, 1},
		{"all dims 1", plain([]int64{1, 1, 1}, 1),
			nil, nil, nil, 1, 1, 1},
		{"zero kept dim", plain([]int64{3, 0, 5}, 2),
			[]Loop{L(0, 0, 0)}, nil, nil, 0, 0, 0},
		{"zero reduced dim", plain([]int64{3, 0, 5}, 1),
			nil, []Loop{L(0, 0, 0)}, &Loop{Size: 15, SrcStride: 0, DstStride: 1}, 0, 15, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := Canonicalize(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if !loopsEqual(pl.Outer, tc.outer) {
				t.Errorf("Outer = %v, want %v", pl.Outer, tc.outer)
			}
			if !loopsEqual(pl.Reduced, tc.red) {
				t.Errorf("Reduced = %v, want %v", pl.Reduced, tc.red)
			}
			if pl.HasInner != (tc.inner != nil) {
				t.Fatalf("HasInner = %v, want %v (%v)", pl.HasInner, tc.inner != nil, pl)
			}
			if tc.inner != nil && !loopsEqual([]Loop{pl.Inner}, []Loop{*tc.inner}) {
				t.Errorf("Inner = %v, want %v", pl.Inner, *tc.inner)
			}
			if pl.N != tc.n || pl.Outputs != tc.outs || pl.Div != tc.division {
				t.Errorf("N, Outputs, Div = %d, %d, %d; want %d, %d, %d", pl.N, pl.Outputs, pl.Div, tc.n, tc.outs, tc.division)
			}
			if err := pl.Validate(); err != nil {
				t.Errorf("canonical plan does not validate: %v", err)
			}
		})
	}
}

// loopsEqual compares loops, treating nil and all-zero BinStrides alike
// when the other side has none.
func loopsEqual(a, b []Loop) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Size != y.Size || x.SrcStride != y.SrcStride || x.DstStride != y.DstStride {
			return false
		}
		if !slices.Equal(x.BinStrides, y.BinStrides) && (len(y.BinStrides) != 0 || slices.ContainsFunc(x.BinStrides, func(v int64) bool { return v != 0 })) {
			return false
		}
	}
	return true
}

func TestCanonicalizeBinaryStrides(t *testing.T) {
	// NCHW 2x3x4x5 reduced over H,W with a per-channel Add (operand 1xCx1x1)
	// and a full-broadcast Multiply (operand NxCx1x1 dense).
	p := plain([]int64{2, 3, 4, 5}, 2, 3)
	p.PostOps = []PostOp{
		{Kind: ops.ReLU},
		{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, 1, 0, 0}},
		{Kind: ops.Multiply, BinDT: dtypes.BF16, BinStrides: []int64{3, 1, 0, 0}},
	}
	pl, err := Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	// The per-channel operand does not step with N, so N and C stay apart.
	want := []Loop{L(2, 60, 3, 0, 3), L(3, 20, 1, 1, 1)}
	if !loopsEqual(pl.Outer, want) {
		t.Errorf("Outer = %v, want %v", pl.Outer, want)
	}
	if !loopsEqual(pl.Reduced, []Loop{L(20, 1, 0, 0, 0)}) || len(pl.Reduced[0].BinStrides) != 2 {
		t.Errorf("Reduced = %v, want one loop 20:1 with two zero operand strides", pl.Reduced)
	}
	for i, op := range pl.PostOps {
		if op.BinStrides != nil {
			t.Errorf("post-op %d keeps strides %v in the plan", i, op.BinStrides)
		}
		if op.Kind != p.PostOps[i].Kind || op.BinDT != p.PostOps[i].BinDT {
			t.Errorf("post-op %d = %+v, want kind %v dt %v", i, op, p.PostOps[i].Kind, p.PostOps[i].BinDT)
		}
	}
	// Canonicalize must not alias the problem's slices.
	pl.PostOps[1].Alpha = 9
	if p.PostOps[1].Alpha == 9 {
		t.Error("plan post-ops alias the problem's")
	}
}

func TestCanonicalizeSpansMatchProblem(t *testing.T) {
	probs := []*Problem{
		plain([]int64{2, 3, 4, 5}, 2, 3), plain([]int64{7, 9}, 0), plain([]int64{3, 0, 5}, 1),
		plain([]int64{3, 0, 5}, 2), plain(nil), plain([]int64{4, 5, 6, 7}, 0, 2),
	}
	for _, p := range probs {
		pl, err := Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		ps, _ := p.SrcBytes()
		pd, _ := p.DstBytes()
		ls, err1 := pl.SrcBytes()
		ld, err2 := pl.DstBytes()
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		// A plan that reads nothing may need less src than the problem
		// spans; otherwise the spans agree.
		if ld != pd || (ls != ps && !(pl.N == 0 || pl.Outputs == 0)) || ls > ps {
			t.Errorf("%v: plan spans src %d dst %d, problem %d %d", pl, ls, ld, ps, pd)
		}
	}
}

func TestKeys(t *testing.T) {
	key := func(p *Problem) string {
		t.Helper()
		pl, err := Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		return pl.Key()
	}
	base := plain([]int64{2, 3, 4, 5}, 2, 3)
	equal := []*Problem{
		plain([]int64{6, 20}, 1),
		plain([]int64{6, 4, 5}, 1, 2),
		plain([]int64{1, 2, 3, 1, 4, 5, 1}, 3, 4, 5),
		plain([]int64{2, 3, 20}, 2),
	}
	k0 := key(base)
	for i, p := range equal {
		if k := key(p); k != k0 {
			t.Errorf("equivalent problem %d: key %q, want %q", i, k, k0)
		}
	}
	different := map[string]*Problem{
		"other axes":  plain([]int64{2, 3, 4, 5}, 3),
		"other shape": plain([]int64{2, 3, 4, 6}, 2, 3),
	}
	bf := plain([]int64{2, 3, 4, 5}, 2, 3)
	bf.SrcDT, bf.DstDT = dtypes.BF16, dtypes.BF16
	different["bf16"] = bf
	bff := plain([]int64{2, 3, 4, 5}, 2, 3)
	bff.SrcDT = dtypes.BF16
	different["bf16->f32"] = bff
	pad := plain([]int64{2, 3, 4, 5}, 2, 3)
	pad.SrcStrides = []int64{64, 21, 5, 1}
	different["padded"] = pad
	perm := plain([]int64{2, 3, 4, 5}, 2, 3)
	perm.DstStrides = []int64{1, 2, 0, 0}
	different["dst permuted"] = perm
	withOp := func(op PostOp) *Problem {
		p := plain([]int64{2, 3, 4, 5}, 2, 3)
		p.PostOps = []PostOp{op}
		return p
	}
	different["relu"] = withOp(PostOp{Kind: ops.ReLU})
	different["clamp 0 6"] = withOp(PostOp{Kind: ops.Clamp, Alpha: 0, Beta: 6})
	different["clamp 0 5"] = withOp(PostOp{Kind: ops.Clamp, Alpha: 0, Beta: 5})
	different["clamp -0 6"] = withOp(PostOp{Kind: ops.Clamp, Alpha: float32(negZero()), Beta: 6})
	different["gelu erf"] = withOp(PostOp{Kind: ops.GELUErf})
	different["gelu tanh"] = withOp(PostOp{Kind: ops.GELUTanh})
	different["add f32 scalar"] = withOp(PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: make([]int64, 4)})
	different["add bf16 scalar"] = withOp(PostOp{Kind: ops.Add, BinDT: dtypes.BF16, BinStrides: make([]int64, 4)})
	different["add f32 channel"] = withOp(PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, 1, 0, 0}})
	seen := map[string]string{k0: "base"}
	for name, p := range different {
		k := key(p)
		if prev, dup := seen[k]; dup {
			t.Errorf("%s and %s share key %q", name, prev, k)
		}
		seen[k] = name
	}
	// Parameters a post-op ignores do not split keys.
	if key(withOp(PostOp{Kind: ops.ReLU, Alpha: 3})) != key(withOp(PostOp{Kind: ops.ReLU})) {
		t.Error("ReLU alpha changes the key though ReLU ignores it")
	}
	// Div is part of the key: the runtime edits it for partial sums.
	pl, _ := Canonicalize(base)
	c := pl.Clone()
	c.Div = 1
	if c.Key() == pl.Key() {
		t.Error("Div does not change the key")
	}
}

func negZero() float64 { z := 0.0; return -z }

func TestClone(t *testing.T) {
	p := plain([]int64{2, 3, 4, 5}, 1)
	p.PostOps = []PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, 0, 5, 1}}}
	pl, err := Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	key, str := pl.Key(), pl.String()
	c := pl.Clone()
	if c.Key() != key || c.String() != str {
		t.Fatalf("clone differs: %v vs %v", c, pl)
	}
	c.Outer[0].Size = 1
	c.Outer[0].BinStrides[0] = 99
	c.Reduced[0].SrcStride = 7
	c.Inner.BinStrides[0] = 42
	c.PostOps[0].Kind = ops.Subtract
	c.Div = 3
	if pl.Key() != key {
		t.Errorf("editing the clone changed the original: %v", pl)
	}
	if (*Plan)(nil).Clone() != nil {
		t.Error("Clone of nil is not nil")
	}
}

func TestString(t *testing.T) {
	p := plain([]int64{72, 240}, 1)
	p.PostOps = []PostOp{{Kind: ops.ReLU}, {Kind: ops.Clamp, Alpha: 0, Beta: 6}}
	pl, err := Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "f32:f32 outer[72:240:1] red[240:1] N=240 Outputs=72 Div=240 post[ReLU Clamp(0,6)]"
	if s := pl.String(); s != want {
		t.Errorf("String = %q, want %q", s, want)
	}
}
