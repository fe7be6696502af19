package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gdnn/gdnn/graph"
)

// memLimit is how many bytes one problem may allocate, and what bounds
// it: half of the smallest of the machine's memory, the cgroup's memory
// limit and the process's address-space limit (benchdnn's --mem-check
// skips problems that do not fit the same way; the Go runtime ends the
// process when an allocation fails, so a problem must not try). 8 GiB
// when none of them can be read.
var memLimit = sync.OnceValues(func() (int64, string) {
	return memLimitOf(memTotal(), cgroupMemoryMax(), addressSpaceLimit())
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

// cgroupMemoryMax is the cgroup v2 memory.max of this process's cgroup
// (mounted at /sys/fs/cgroup), 0 if unknown or "max".
func cgroupMemoryMax() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// checkMemory returns an error with status OutOfMemory when a problem
// needs more than memLimit bytes.
func checkMemory(need int64) error {
	if limit, what := memLimit(); need > limit {
		return graph.Errorf(graph.OutOfMemory, "the problem needs %.1f GB, more than the %.1f GB limit (%s)",
			float64(need)/1e9, float64(limit)/1e9, what)
	}
	return nil
}
