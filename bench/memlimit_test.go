package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
)

func TestMemLimitOf(t *testing.T) {
	cases := []struct {
		total, cgroup, as int64
		want              int64
		what              string
	}{
		{24 << 30, 0, 0, 12 << 30, "half of this machine's memory"},
		{24 << 30, 4 << 30, 0, 2 << 30, "half of the cgroup's memory limit"},
		{24 << 30, 8 << 30, 6 << 30, 3 << 30, "half of the process's address-space limit"},
		{0, 0, 6 << 30, 3 << 30, "half of the process's address-space limit"},
		{0, 0, 0, 8 << 30, "the default: no memory size found"},
	}
	for _, c := range cases {
		got, what := memLimitOf(c.total, c.cgroup, c.as)
		if got != c.want || what != c.what {
			t.Errorf("memLimitOf(%d, %d, %d) = %d, %q; want %d, %q", c.total, c.cgroup, c.as, got, what, c.want, c.what)
		}
	}
	limit, what := memLimit()
	err := checkMemory(limit + 1)
	if !errors.Is(err, graph.OutOfMemory) || !strings.Contains(err.Error(), what) {
		t.Errorf("checkMemory(limit+1) = %v, want OutOfMemory naming %q", err, what)
	}
	if err := checkMemory(limit); err != nil {
		t.Errorf("checkMemory(limit) = %v", err)
	}
}
