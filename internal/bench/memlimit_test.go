package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
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
	if !errors.Is(err, status.OutOfMemory) || !strings.Contains(err.Error(), what) {
		t.Errorf("checkMemory(limit+1) = %v, want OutOfMemory naming %q", err, what)
	}
	if err := checkMemory(limit); err != nil {
		t.Errorf("checkMemory(limit) = %v", err)
	}
}

// fakeCgroup lays out files (path under dir -> contents) and returns dir.
func fakeCgroup(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cgroupMemoryLimit reads cgroup v2 and v1 trees: the process's cgroup
// and its parents, the smallest limit binding, "max" and v1's unlimited
// value as no limit.
func TestCgroupMemoryLimit(t *testing.T) {
	const v1Unlimited = "9223372036854771712\n"
	cases := []struct {
		name string
		self string            // /proc/self/cgroup
		tree map[string]string // under the cgroup root
		want int64
	}{
		{"v2 in a container (namespace root)", "0::/\n",
			map[string]string{"memory.max": "1073741824\n"}, 1 << 30},
		{"v2 nested, the parent binds", "0::/a/b\n",
			map[string]string{"a/memory.max": "4294967296\n", "a/b/memory.max": "max\n"}, 4 << 30},
		{"v2 nested, the child binds", "0::/a/b\n",
			map[string]string{"a/memory.max": "4294967296\n", "a/b/memory.max": "2147483648\n"}, 2 << 30},
		{"v2 max", "0::/a\n", map[string]string{"a/memory.max": "max\n"}, 0},
		{"v1", "12:cpu,cpuacct:/x\n4:memory:/docker/abc\n1:name=systemd:/y\n",
			map[string]string{"memory/docker/abc/memory.limit_in_bytes": "2147483648\n",
				"memory/memory.limit_in_bytes": v1Unlimited}, 2 << 30},
		{"v1 controllers joined", "5:memory,hugetlb:/k\n",
			map[string]string{"memory/k/memory.limit_in_bytes": "3221225472\n"}, 3 << 30},
		{"v1 unlimited", "4:memory:/a\n",
			map[string]string{"memory/a/memory.limit_in_bytes": v1Unlimited, "memory/memory.limit_in_bytes": v1Unlimited}, 0},
		{"v1 in a container: the host's path, the container's root", "4:memory:/docker/abc\n",
			map[string]string{"memory/memory.limit_in_bytes": "536870912\n"}, 512 << 20},
		{"v1 parent binds", "4:memory:/a/b\n",
			map[string]string{"memory/a/memory.limit_in_bytes": "1073741824", "memory/a/b/memory.limit_in_bytes": "2147483648"}, 1 << 30},
		{"v1 and v2 both: the smaller", "4:memory:/a\n0::/b\n",
			map[string]string{"memory/a/memory.limit_in_bytes": "3221225472\n", "b/memory.max": "2147483648\n"}, 2 << 30},
		{"no /proc/self/cgroup: root's limits", "",
			map[string]string{"memory.max": "1073741824\n"}, 1 << 30},
		{"nothing there", "0::/a\n", map[string]string{}, 0},
		{"garbage", "0::/a\n4:memory:/a\nnot a line\n",
			map[string]string{"a/memory.max": "lots\n", "memory/a/memory.limit_in_bytes": "-1\n", "memory.max": ""}, 0},
		{"zero", "0::/\n", map[string]string{"memory.max": "0\n"}, 0},
		{"a path cannot leave the root", "0::/../outside\n",
			map[string]string{"outside/memory.max": "4096\n"}, 4096}, // root/outside, not root/../outside
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := fakeCgroup(t, c.tree)
			self := filepath.Join(t.TempDir(), "cgroup")
			if c.self != "" {
				if err := os.WriteFile(self, []byte(c.self), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := cgroupMemoryLimit(root, self); got != c.want {
				t.Errorf("limit %d, want %d", got, c.want)
			}
		})
	}
	// A limit beside (not under) the root is not read.
	base := fakeCgroup(t, map[string]string{"outside/memory.max": "4096\n", "root/.keep": ""})
	self := filepath.Join(base, "self")
	if err := os.WriteFile(self, []byte("0::/../outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := cgroupMemoryLimit(filepath.Join(base, "root"), self); got != 0 {
		t.Errorf("a path with .. read %d from outside the root", got)
	}
}

// TestMemoryOfLargeDst: a reduction whose dst is as large as its src
// counts its reference's arrays (about 64 bytes per f32 output, 96 per
// f64), so a problem of 3000x3000 outputs (about 0.6 GB in f32, 0.9 GB
// in f64, measured) is SKIPPED under a limit of 0.4 GB, and one of
// 1000x1000 runs.
func TestMemoryOfLargeDst(t *testing.T) {
	saved := memLimit
	memLimit = func() (int64, string) { return 400 << 20, "a test's limit" }
	defer func() { memLimit = saved }()
	// The exact reference holds one output's elements at a time: 4M s32
	// into one output take about 0.5 GB.
	code, out, errw := runMain(t, "--reduction", "--mode=C", "--sdt=s32", "--ddt=s32", "4000000:1", "1000:1")
	if s := summary(t, out); code != 0 || s[1] != "1" || s[2] != "1" {
		t.Errorf("s32: exit %d, want 0, 1 passed and 1 skipped for memory\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
	for _, dt := range []string{"f32", "f64"} {
		code, out, errw := runMain(t, "--reduction", "--mode=C", "--sdt="+dt, "--ddt="+dt, "3000x3000:3000x3000", "1000x1000:1000x1000")
		if s := summary(t, out); code != 0 || s[1] != "1" || s[2] != "1" || !strings.Contains(out, "more than the 0.4 GB limit (a test's limit)") {
			t.Errorf("%s: exit %d, want 0, 1 passed and 1 skipped for memory\nstdout:\n%s\nstderr:\n%s", dt, code, out, errw)
		}
	}
}
