package execmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// mapping is one line of /proc/self/maps.
type mapping struct {
	lo, hi uintptr
	perms  string
	line   string
}

func readMaps(t *testing.T) []mapping {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatalf("open /proc/self/maps: %v", err)
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		lohi := strings.SplitN(fields[0], "-", 2)
		lo, err1 := strconv.ParseUint(lohi[0], 16, 64)
		hi, err2 := strconv.ParseUint(lohi[1], 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad maps line %q", sc.Text())
		}
		out = append(out, mapping{uintptr(lo), uintptr(hi), fields[1], sc.Text()})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read /proc/self/maps: %v", err)
	}
	return out
}

func covering(ms []mapping, addr uintptr) *mapping {
	for i := range ms {
		if ms[i].lo <= addr && addr < ms[i].hi {
			return &ms[i]
		}
	}
	return nil
}

// checkExecutable checks, in /proc/self/maps, that no mapping of the
// process is writable and executable and that each code's mapping is
// read+execute.
func checkExecutable(t *testing.T, codes []*Code) {
	t.Helper()
	ms := readMaps(t)
	for _, m := range ms {
		if strings.Contains(m.perms, "w") && strings.Contains(m.perms, "x") {
			t.Errorf("mapping is writable and executable: %s", m.line)
		}
	}
	for i, c := range codes {
		m := covering(ms, uintptr(c.entry))
		if m == nil {
			t.Fatalf("code %d at %p: no mapping covers it", i, c.entry)
		}
		if !strings.HasPrefix(m.perms, "r-x") {
			t.Errorf("code %d mapping perms %q, want r-x: %s", i, m.perms, m.line)
		}
	}
}

// checkReleased checks that no executable mapping is left at addrs.
func checkReleased(t *testing.T, addrs []uintptr) {
	t.Helper()
	ms := readMaps(t)
	for i, a := range addrs {
		if m := covering(ms, a); m != nil && strings.Contains(m.perms, "x") {
			t.Errorf("code %d still executable after Release: %s", i, m.line)
		}
	}
}
