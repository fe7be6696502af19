package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gdnn/gdnn/graph"
)

// memLimit is how many bytes one problem may allocate: half of the
// machine's memory (benchdnn's --mem-check skips problems that do not fit
// the same way), or 8 GiB when the total cannot be read.
var memLimit = sync.OnceValue(func() int64 {
	f, err := os.Open("/proc/meminfo")
	if err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Fields(s.Text())
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 {
					return kb * 1024 / 2
				}
			}
		}
	}
	return 8 << 30
})

// checkMemory returns an error with status OutOfMemory when a problem
// needs more than memLimit bytes.
func checkMemory(need int64) error {
	if need > memLimit() {
		return graph.Errorf(graph.OutOfMemory, "the problem needs %.1f GB, more than the %.1f GB limit (half of this machine's memory)",
			float64(need)/1e9, float64(memLimit())/1e9)
	}
	return nil
}
