package bench

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

func TestResolveTag(t *testing.T) {
	cases := []struct {
		tag   string
		rank  int
		order []int
	}{
		{"abx", 4, []int{0, 1, 2, 3}},
		{"abx", 1, []int{0}},
		{"abx", 2, []int{0, 1}},
		{"axb", 4, []int{0, 2, 3, 1}},
		{"axb", 5, []int{0, 2, 3, 4, 1}},
		{"axb", 2, []int{0, 1}},
		{"axb", 1, []int{0}},
		{"acdb", 4, []int{0, 2, 3, 1}},
		{"nhwc", 4, []int{0, 2, 3, 1}},
		{"nchw", 4, []int{0, 1, 2, 3}},
		{"bac", 3, []int{1, 0, 2}},
		{"x", 1, []int{0}},
		{"cn", 2, []int{1, 0}},
	}
	for _, c := range cases {
		l, err := ResolveTag(c.tag, c.rank)
		if err != nil {
			t.Errorf("ResolveTag(%q, %d): %v", c.tag, c.rank, err)
			continue
		}
		if !reflect.DeepEqual(l.Order, c.order) {
			t.Errorf("ResolveTag(%q, %d) = %v, want %v", c.tag, c.rank, l.Order, c.order)
		}
	}
	if l, err := ResolveTag("any", 3); err != nil || !l.Any {
		t.Errorf("ResolveTag(any) = %+v, %v", l, err)
	}
	blocked := map[string]int{"aBx16b": 4, "aBx8b": 4, "ABx16a16b": 4, "aBcd16b": 4, "ABcde32a16b": 5,
		"aBcde16b": 5, "nChw16c": 4, "NCdhw16n16c": 5}
	for tag, want := range blocked {
		// Blocked tags are checked at the rank their letters name before
		// a problem's rank is known (inner blocks do not count); they
		// resolve, and plainOnly refuses them where only plain ones go.
		rank := tagProbeRank(tag)
		if rank != want {
			t.Errorf("tagProbeRank(%q) = %d, want %d", tag, rank, want)
		}
		l, err := ResolveTag(tag, rank)
		if err != nil || !l.Blocked() {
			t.Errorf("ResolveTag(%q, %d) = %+v, %v, want a blocked layout", tag, rank, l, err)
		}
		if err := plainOnly(l, "test"); !errors.Is(err, status.Unimplemented) {
			t.Errorf("plainOnly(%q) = %v, want unimplemented", tag, err)
		}
	}
	for _, tag := range []string{"", "undef", "abq", "aab", "abcd", "ab16", "aB16c", "axxb", "a0b", "ab!"} {
		if _, err := ResolveTag(tag, 3); !errors.Is(err, status.InvalidArguments) {
			t.Errorf("ResolveTag(%q, 3) = %v, want invalid_arguments", tag, err)
		}
	}
}

func TestLayoutStrides(t *testing.T) {
	dims := []int64{2, 3, 4, 5}
	for _, c := range []struct {
		tag     string
		strides []int64
	}{
		{"abcd", []int64{60, 20, 5, 1}},
		{"acdb", []int64{60, 1, 15, 3}},
		{"dcba", []int64{1, 2, 6, 24}},
	} {
		l, err := ResolveTag(c.tag, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Strides(dims); !reflect.DeepEqual(got, c.strides) {
			t.Errorf("%s strides = %v, want %v", c.tag, got, c.strides)
		}
	}
}
