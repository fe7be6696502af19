package main

import (
	"fmt"
	"strings"
)

// fmtUS formats microseconds with about three significant digits.
func fmtUS(x opt) string {
	switch {
	case !x.ok:
		return "-"
	case x.v >= 100:
		return fmt.Sprintf("%.0f", x.v)
	case x.v >= 10:
		return fmt.Sprintf("%.1f", x.v)
	}
	return fmt.Sprintf("%.2f", x.v)
}

// fmtGB formats GB/s.
func fmtGB(x opt) string {
	switch {
	case !x.ok:
		return "-"
	case x.v >= 100:
		return fmt.Sprintf("%.0f", x.v)
	}
	return fmt.Sprintf("%.1f", x.v)
}

// fmtX formats a speed ratio.
func fmtX(x opt) string {
	if !x.ok {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x.v)
}

// fmtPct formats a percentage.
func fmtPct(x opt) string {
	if !x.ok {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", x.v)
}

// fmtBytes formats a byte count in binary units when it divides evenly.
func fmtBytes(b int64) string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.n && b%u.n == 0 {
			return fmt.Sprintf("%d %s", b/u.n, u.name)
		}
	}
	if b >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	if b >= 1<<10 {
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// mdTable renders a GitHub markdown table; columns from nleft on are
// right-aligned (numbers).
func mdTable(sb *strings.Builder, nleft int, rows [][]string) {
	for j, r := range rows {
		sb.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if j == 0 {
			for i := range r {
				if i < nleft {
					sb.WriteString("|---")
				} else {
					sb.WriteString("|--:")
				}
			}
			sb.WriteString("|\n")
		}
	}
}

// fmtAxes formats axes as [2,3].
func fmtAxes(ax []int) string {
	s := make([]string, len(ax))
	for i, a := range ax {
		s[i] = fmt.Sprint(a)
	}
	return "[" + strings.Join(s, ",") + "]"
}
