package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gdnn/gdnn/internal/status"
)

// memLimit is how many bytes one problem may allocate, and what bounds
// it: half of the smallest of the machine's memory, the cgroup's memory
// limit and the process's address-space limit (benchdnn's --mem-check
// skips problems that do not fit the same way; the Go runtime ends the
// process when an allocation fails, so a problem must not try). 8 GiB
// when none of them can be read.
var memLimit = sync.OnceValues(func() (int64, string) {
	return memLimitOf(memTotal(), cgroupMemoryLimit("/sys/fs/cgroup", "/proc/self/cgroup"), addressSpaceLimit())
})

// memLimitOf halves the smallest known bound (0: unknown).
func memLimitOf(total, cgroup, addressSpace int64) (int64, string) {
	limit, what := int64(0), ""
	for _, b := range []struct {
		n    int64
		what string
	}{{total, "this machine's memory"}, {cgroup, "the cgroup's memory limit"}, {addressSpace, "the process's address-space limit"}} {
		if b.n > 0 && (limit == 0 || b.n < limit) {
			limit, what = b.n, b.what
		}
	}
	if limit == 0 {
		return 8 << 30, "the default: no memory size found"
	}
	return limit / 2, "half of " + what
}

// memTotal is MemTotal of /proc/meminfo in bytes, 0 if unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 && kb < 1<<53 {
				return kb * 1024
			}
		}
	}
	return 0
}

// cgroupMemoryLimit is the memory limit of this process's cgroup, 0 if
// none or unknown: cgroup v2's memory.max under root, and cgroup v1's
// memory.limit_in_bytes under root/memory (the memory controller's
// hierarchy), whichever is smaller. selfCgroup is the process's
// /proc/self/cgroup, which names its cgroup in each hierarchy ("0::/path"
// for v2, "N:...memory...:/path" for v1). A parent's limit binds its
// children, so every cgroup from the process's up to root counts. In a
// container the path may be the host's while root shows the container's
// own cgroup; the missing directories are then skipped and root's limit
// counts.
func cgroupMemoryLimit(root, selfCgroup string) int64 {
	v2, v1 := "/", "/"
	if b, err := os.ReadFile(selfCgroup); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			id, rest, ok1 := strings.Cut(line, ":")
			controllers, path, ok2 := strings.Cut(rest, ":")
			switch {
			case !ok1 || !ok2:
			case id == "0" && controllers == "":
				v2 = path
			case slices.Contains(strings.Split(controllers, ","), "memory"):
				v1 = path
			}
		}
	}
	return smallestLimit(smallestLimitOnPath(root, v2, "memory.max"),
		smallestLimitOnPath(filepath.Join(root, "memory"), v1, "memory.limit_in_bytes"))
}

// smallestLimitOnPath is the smallest limit in file of the cgroup at path
// under root and of each of its parents, 0 if none. The path is cleaned
// as if rooted, so "..", wherever it comes from, never leaves root.
func smallestLimitOnPath(root, path, file string) int64 {
	limit := int64(0)
	for dir := filepath.Clean("/" + path); ; dir = filepath.Dir(dir) {
		limit = smallestLimit(limit, readCgroupLimit(filepath.Join(root, dir, file)))
		if dir == "/" {
			return limit
		}
	}
}

// smallestLimit is the smaller of two limits, where 0 means none.
func smallestLimit(a, b int64) int64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// readCgroupLimit reads one limit file in bytes, 0 if it is missing,
// unreadable or unlimited: v2 writes "max", v1 the largest page multiple
// below 2^63 (9223372036854771712), so anything from 2^62 up counts as
// no limit.
func readCgroupLimit(file string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return n
}

// checkMemory returns an error with status OutOfMemory when a problem
// needs more than memLimit bytes.
func checkMemory(need int64) error {
	if limit, what := memLimit(); need > limit {
		return status.Errorf(status.OutOfMemory, "the problem needs %.1f GB, more than the %.1f GB limit (%s)",
			float64(need)/1e9, float64(limit)/1e9, what)
	}
	return nil
}
