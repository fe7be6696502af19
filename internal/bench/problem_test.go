package bench

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

func TestParseProblem(t *testing.T) {
	ok := []struct {
		in       string
		src, dst []int64
		name     string
	}{
		{"2x16x3x4:2x1x3x1", []int64{2, 16, 3, 4}, []int64{2, 1, 3, 1}, ""},
		{"127:1", []int64{127}, []int64{1}, ""},
		{"8x16:8x16", []int64{8, 16}, []int64{8, 16}, ""},
		{"1x64x7x7:1x64x1x1_n\"gap\"", []int64{1, 64, 7, 7}, []int64{1, 64, 1, 1}, "\"gap\""},
		{"4x4:1x4nfoo", []int64{4, 4}, []int64{1, 4}, "foo"},
		{"0x5:0x1", []int64{0, 5}, []int64{0, 1}, ""},
		{"0x5:1x5", []int64{0, 5}, []int64{1, 5}, ""},
	}
	for _, c := range ok {
		p, err := ParseProblem(c.in)
		if err != nil {
			t.Errorf("ParseProblem(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(p.Src, c.src) || !reflect.DeepEqual(p.Dst, c.dst) || p.Name != c.name {
			t.Errorf("ParseProblem(%q) = %v %v %q, want %v %v %q", c.in, p.Src, p.Dst, p.Name, c.src, c.dst, c.name)
		}
	}
	bad := []struct{ in, want string }{
		{"", "start with an integer"},
		{"x2:1", "start with an integer"},
		{"2x3", "want 2"},
		{"2x3:2x1:1", "want 2"},
		{"2x3:2", "rank 2 but dst has rank 1"},
		{"2xx3:2x1x3", "src dim 1"},
		{"2x-3:2x1", "src dim 1"},
		{"2x3:2x+1", "dst dim 1"},
		{"1x1x1x1x1x1x1x1x1x1x1x1x1:1x1x1x1x1x1x1x1x1x1x1x1x1", "rank 13"},
		{"2x3:", "dst dims are empty"},
	}
	for _, c := range bad {
		_, err := ParseProblem(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseProblem(%q) error %v, want one containing %q", c.in, err, c.want)
		}
		var ge *status.Error
		if err != nil && !errors.As(err, &ge) {
			t.Errorf("ParseProblem(%q) error %T is not a *graph.Error", c.in, err)
		}
	}
}

func TestProblemAxesAndString(t *testing.T) {
	p, err := ParseProblem("2x16x3x4:2x1x3x1_nx")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Axes(); !reflect.DeepEqual(got, []int64{1, 3}) {
		t.Errorf("Axes = %v, want [1 3]", got)
	}
	if s := p.String(); s != "2x16x3x4:2x1x3x1_nx" {
		t.Errorf("String = %q", s)
	}
	// A size-1 src dim with dst 1 is not reduced (nothing to reduce).
	q, _ := ParseProblem("1x5:1x1")
	if got := q.Axes(); !reflect.DeepEqual(got, []int64{1}) {
		t.Errorf("Axes of 1x5:1x1 = %v, want [1]", got)
	}
}

// TestProblemCheck: a descriptor that parses may still not be a reduction
// gdnnbench can run; Check says why, with the status that picks the
// result: InvalidShape (INVALID_ARGUMENTS) for a dst dim that contradicts
// its src dim, OutOfMemory (SKIPPED) for a tensor too large to allocate.
func TestProblemCheck(t *testing.T) {
	for _, c := range []struct {
		in     string
		status status.Status
		want   string
	}{
		{"2x3:2x1", 0, ""},
		{"2x3:2x3", 0, ""},
		{"0x5:0x1", 0, ""},
		{"2x3:2x2", status.InvalidShape, "dst dim 1 is 2; it must equal src dim 1 (3) or be 1"},
		{"4x4:3x1", status.InvalidShape, "dst dim 0 is 3"},
		{"99999999999x99999999999:1x1", status.OutOfMemory, "src has more than 17179869184 elements"},
		{"131072x131072:131072x1", 0, ""}, // 2^34 elements: the limit itself
		{"131072x131073:131072x1", status.OutOfMemory, "src has more than"},
	} {
		p, err := ParseProblem(c.in)
		if err != nil {
			t.Fatalf("ParseProblem(%q): %v", c.in, err)
		}
		err = p.Check()
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: Check: %v", c.in, err)
			}
			continue
		}
		if !errors.Is(err, c.status) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: Check = %v, want %v containing %q", c.in, err, c.status, c.want)
		}
	}
}
