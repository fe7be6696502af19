package layout

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/gdnn/gdnn/graph"
)

func TestParsePlain(t *testing.T) {
	cases := []struct {
		tag   string
		rank  int
		order []int
	}{
		{"abx", 4, []int{0, 1, 2, 3}},
		{"abx", 1, []int{0}},
		{"axb", 4, []int{0, 2, 3, 1}},
		{"axb", 5, []int{0, 2, 3, 4, 1}},
		{"axb", 2, []int{0, 1}},
		{"acdb", 4, []int{0, 2, 3, 1}},
		{"nhwc", 4, []int{0, 2, 3, 1}},
		{"bac", 3, []int{1, 0, 2}},
		{"x", 1, []int{0}},
		{"cn", 2, []int{1, 0}},
	}
	for _, c := range cases {
		l, err := Parse(c.tag, c.rank)
		if err != nil {
			t.Errorf("Parse(%q, %d): %v", c.tag, c.rank, err)
			continue
		}
		if !reflect.DeepEqual(l.Order, c.order) || l.Blocked() {
			t.Errorf("Parse(%q, %d) = %+v, want order %v, plain", c.tag, c.rank, l, c.order)
		}
	}
	if l, err := Parse("any", 3); err != nil || !l.Any {
		t.Errorf("Parse(any) = %+v, %v", l, err)
	}
}

// TestParseBlocked checks every blocked tag of oneDNN's reduction batch
// files (and the named aliases) against the order and blocks oneDNN's
// grammar gives them.
func TestParseBlocked(t *testing.T) {
	cases := []struct {
		tag    string
		rank   int
		order  []int
		blocks []Block
	}{
		{"aBx8b", 4, []int{0, 1, 2, 3}, []Block{{1, 8}}},
		{"aBx16b", 3, []int{0, 1, 2}, []Block{{1, 16}}},
		{"aBx32b", 2, []int{0, 1}, []Block{{1, 32}}},
		{"aBx16b", 5, []int{0, 1, 2, 3, 4}, []Block{{1, 16}}},
		{"ABx16a16b", 4, []int{0, 1, 2, 3}, []Block{{0, 16}, {1, 16}}},
		{"ABx32a32b", 3, []int{0, 1, 2}, []Block{{0, 32}, {1, 32}}},
		{"aBcd16b", 4, []int{0, 1, 2, 3}, []Block{{1, 16}}},
		{"aBcd32b", 4, []int{0, 1, 2, 3}, []Block{{1, 32}}},
		{"aBcde16b", 5, []int{0, 1, 2, 3, 4}, []Block{{1, 16}}},
		{"ABcd32a16b", 4, []int{0, 1, 2, 3}, []Block{{0, 32}, {1, 16}}},
		{"ABcd32a32b", 4, []int{0, 1, 2, 3}, []Block{{0, 32}, {1, 32}}},
		{"ABcde32a16b", 5, []int{0, 1, 2, 3, 4}, []Block{{0, 32}, {1, 16}}},
		{"nChw16c", 4, []int{0, 1, 2, 3}, []Block{{1, 16}}},
		{"NCdhw16n16c", 5, []int{0, 1, 2, 3, 4}, []Block{{0, 16}, {1, 16}}},
		{"aCb8c", 3, []int{0, 2, 1}, []Block{{2, 8}}},
		{"BA16a16b", 2, []int{1, 0}, []Block{{0, 16}, {1, 16}}},
	}
	for _, c := range cases {
		l, err := Parse(c.tag, c.rank)
		if err != nil {
			t.Errorf("Parse(%q, %d): %v", c.tag, c.rank, err)
			continue
		}
		if !reflect.DeepEqual(l.Order, c.order) || !reflect.DeepEqual(l.Blocks, c.blocks) {
			t.Errorf("Parse(%q, %d) = order %v blocks %v, want %v %v", c.tag, c.rank, l.Order, l.Blocks, c.order, c.blocks)
		}
	}
}

func TestParseRefusals(t *testing.T) {
	invalid := []struct {
		tag  string
		rank int
	}{
		{"", 3}, {"undef", 3}, {"abq", 3}, {"aab", 3}, {"abcd", 3}, {"ab16", 3}, {"aB16c", 3},
		{"axxb", 3}, {"a0b", 2}, {"ab!", 2}, {"aBcd", 4}, {"aBcd16b", 3}, {"aBx16b", 1},
		{"aBcd99999b", 4}, {"aBcd8192b", 4}, {"aBcd16", 4}, {"abc", -1}, {"abc", 13},
		{"aBcd16b16c", 4}, {"aCB8c", 3},
	}
	for _, c := range invalid {
		if _, err := Parse(c.tag, c.rank); !errors.Is(err, graph.InvalidArguments) {
			t.Errorf("Parse(%q, %d) = %v, want invalid_arguments", c.tag, c.rank, err)
		}
	}
	if _, err := Parse("ABc4a16b4a", 3); !errors.Is(err, graph.Unimplemented) {
		t.Errorf("double blocking: %v, want unimplemented", err)
	}
}

// TestDescHugeDims: a blocked dim near MaxInt64, whose count of blocks
// a+b-1 would overflow to a negative or small number, is refused as
// addressing too many elements.
func TestDescHugeDims(t *testing.T) {
	l, err := Parse("aBx16b", 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int64{math.MaxInt64, math.MaxInt64 - 14, math.MaxInt64 - 15, 1 << 62} {
		if _, err := l.Desc([]int64{1, d, 1, 1}); !errors.Is(err, graph.InvalidArguments) {
			t.Errorf("dim %d: %v, want invalid_arguments", d, err)
		}
	}
}

// TestDescOffsets checks Desc against offsets worked out by hand from
// oneDNN's definition of each layout.
func TestDescOffsets(t *testing.T) {
	dims := []int64{3, 20, 2, 5}
	l, err := Parse("aBx16b", 4)
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Desc(dims)
	if err != nil {
		t.Fatal(err)
	}
	// aBcd16b: [a][B=2][c][d][16b].
	for _, idx := range [][]int64{{0, 0, 0, 0}, {2, 19, 1, 4}, {1, 17, 0, 3}, {0, 15, 1, 2}} {
		want := idx[0]*2*2*5*16 + idx[1]/16*2*5*16 + idx[2]*5*16 + idx[3]*16 + idx[1]%16
		if got := d.Offset(idx); got != want {
			t.Errorf("aBcd16b %v: offset %d, want %d", idx, got, want)
		}
	}
	if got, want := d.Span(), int64(3*2*2*5*16); got != want {
		t.Errorf("span %d, want %d", got, want)
	}
	if !d.Padded() || d.Plain() {
		t.Errorf("Padded %v Plain %v, want true false", d.Padded(), d.Plain())
	}

	l, err = Parse("ABcd32a16b", 4)
	if err != nil {
		t.Fatal(err)
	}
	dims = []int64{33, 17, 2, 3}
	if d, err = l.Desc(dims); err != nil {
		t.Fatal(err)
	}
	// [A=2][B=2][c][d][32a][16b].
	for _, idx := range [][]int64{{32, 16, 1, 2}, {5, 3, 0, 1}, {31, 15, 1, 0}} {
		want := idx[0]/32*2*2*3*512 + idx[1]/16*2*3*512 + idx[2]*3*512 + idx[3]*512 + idx[0]%32*16 + idx[1]%16
		if got := d.Offset(idx); got != want {
			t.Errorf("ABcd32a16b %v: offset %d, want %d", idx, got, want)
		}
	}
	if got, want := d.Span(), int64(2*2*2*3*512); got != want {
		t.Errorf("span %d, want %d", got, want)
	}
	if d, err = l.Desc([]int64{64, 32, 1, 1}); err != nil || d.Padded() {
		t.Errorf("whole blocks: padded %v, %v", d.Padded(), err)
	}
	if _, err := l.Desc([]int64{1, 2}); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("rank mismatch: %v", err)
	}
	if _, err := l.Desc([]int64{1 << 40, 1 << 30, 1, 1}); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("overflow: %v", err)
	}
	if d, err := l.Desc([]int64{0, 5, 1, 1}); err != nil || d.Span() != 0 {
		t.Errorf("empty: span %d, %v", d.Span(), err)
	}
	s := Strided([]int64{2, 3}, []int64{3, 1})
	if !s.Plain() || s.Padded() || s.Offset([]int64{1, 2}) != 5 || s.Span() != 6 {
		t.Errorf("Strided desc wrong: %+v", s)
	}
}
