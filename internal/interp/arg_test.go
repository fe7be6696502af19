package interp

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// argRow is an ArgMax plan over one f32 row of 8 (s32 indices) and
// its data: 3 at 1, 7 at 2 and 6, the rest 0.
func argRow(t *testing.T, last bool) (*plan.ArgPlan, []byte) {
	t.Helper()
	pl, err := plan.CanonicalizeArg(&plan.ArgProblem{Last: last, SrcDT: dtypes.F32, IdxDT: dtypes.S32,
		Dims: []int64{8}, SrcStrides: []int64{1}, DstStrides: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 32)
	for i, v := range map[int]float32{1: 3, 2: 7, 6: 7} {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
	}
	return pl, src
}

// index32 is a one-index s32 buffer.
func index32(v int32) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, uint32(v))
	return b
}

// TestCombineArg folds the winner of elements 4 to 7 (6, given as 2)
// into that of 0 to 3 (2): a tie, which the first wins and the last
// takes under Last.
func TestCombineArg(t *testing.T) {
	for _, c := range []struct {
		last bool
		want int32
	}{{false, 2}, {true, 6}} {
		pl, src := argRow(t, c.last)
		dst := index32(2)
		if err := CombineArg(pl, src, dst, index32(2), 4); err != nil {
			t.Fatal(err)
		}
		if got := int32(binary.LittleEndian.Uint32(dst)); got != c.want {
			t.Errorf("last=%v: index %d, want %d", c.last, got, c.want)
		}
	}
}

// TestCombineArgDenseParts folds pieces of two rows of 8 into a dst of
// stride 3: the first piece's part (dense: one index a row) is stored,
// the second's folded, each into its row's place in dst.
func TestCombineArgDenseParts(t *testing.T) {
	pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S32,
		Dims: []int64{2, 8}, SrcStrides: []int64{8, 1}, DstStrides: []int64{3, 0}, Axis: 1})
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 64)
	// Row 0: 5 at 1 and at 6 (a tie); row 1: 2 at 3, 9 at 5.
	for i, v := range map[int]float32{1: 5, 6: 5, 8 + 3: 2, 8 + 5: 9} {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
	}
	dst := make([]byte, 16)
	for i := range dst {
		dst[i] = 0xA5
	}
	first := append(index32(1), index32(3)...)
	second := append(index32(2), index32(1)...) // 6 and 5, counted from 4
	for _, c := range []struct {
		part []byte
		from int64
		want [2]int32
	}{{first, 0, [2]int32{1, 3}}, {second, 4, [2]int32{1, 5}}} {
		if err := CombineArg(pl, src, dst, c.part, c.from); err != nil {
			t.Fatal(err)
		}
		got := [2]int32{int32(binary.LittleEndian.Uint32(dst)), int32(binary.LittleEndian.Uint32(dst[12:]))}
		if got != c.want {
			t.Errorf("from %d: rows' indices %v, want %v", c.from, got, c.want)
		}
	}
	if dst[4] != 0xA5 || dst[8] != 0xA5 {
		t.Errorf("dst between the rows' places written: % x", dst)
	}
}

// TestCombineArgRefuses checks the refusals: a nil plan, a split point
// outside the axis, buffers too short, and indices outside their piece.
func TestCombineArgRefuses(t *testing.T) {
	pl, src := argRow(t, false)
	for _, c := range []struct {
		name           string
		pl             *plan.ArgPlan
		src, dst, part []byte
		from           int64
		want           status.Status
	}{
		{"nil plan", nil, src, index32(0), index32(0), 4, status.InvalidArguments},
		{"negative split", pl, src, index32(0), index32(0), -1, status.InvalidArguments},
		{"split at the end", pl, src, index32(0), index32(0), 8, status.InvalidArguments},
		{"short src", pl, src[:28], index32(0), index32(0), 4, status.InvalidArguments},
		{"short dst", pl, src, nil, index32(0), 4, status.InvalidArguments},
		{"short part", pl, src, index32(0), []byte{0, 0}, 4, status.InvalidArguments},
		{"dst index in the piece", pl, src, index32(4), index32(0), 4, status.RuntimeError},
		{"negative dst index", pl, src, index32(-1), index32(0), 4, status.RuntimeError},
		{"part index past the axis", pl, src, index32(0), index32(4), 4, status.RuntimeError},
		{"first part's index past the axis", pl, src, index32(0), index32(8), 0, status.RuntimeError},
		{"negative part index", pl, src, index32(0), index32(-1), 4, status.RuntimeError},
	} {
		err := CombineArg(c.pl, c.src, c.dst, c.part, c.from)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
