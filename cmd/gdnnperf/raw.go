package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// record is one raw harness line, 'round=R shape=S TOOL key=value ...'.
type record struct {
	round int
	shape string
	tool  string
	kv    map[string]string
}

// parseRaw reads the harness's raw lines. Lines that do not start with
// "round=" are not results and are skipped. As in make_table.py, the first
// occurrence of a key wins and the first bare word names the tool.
func parseRaw(r io.Reader) ([]record, error) {
	var recs []record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for ln := 1; sc.Scan(); ln++ {
		toks := strings.Fields(sc.Text())
		if len(toks) == 0 || !strings.HasPrefix(toks[0], "round=") {
			continue
		}
		rec := record{kv: map[string]string{}}
		for _, t := range toks {
			k, v, ok := strings.Cut(t, "=")
			if !ok {
				if rec.tool == "" {
					rec.tool = t
				}
				continue
			}
			if _, seen := rec.kv[k]; !seen {
				rec.kv[k] = v
			}
		}
		rd, err := strconv.Atoi(rec.kv["round"])
		if err != nil || rd < 1 {
			return nil, status.Errorf(status.InvalidArguments, "raw line %d: round %q is not a positive integer", ln, rec.kv["round"])
		}
		rec.round = rd
		rec.shape = rec.kv["shape"]
		if rec.shape == "" || rec.tool == "" {
			return nil, status.Errorf(status.InvalidArguments, "raw line %d: no shape or tool in %q", ln, sc.Text())
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, status.Errorf(status.InvalidArguments, "reading raw results: %v", err)
	}
	return recs, nil
}

// num returns the value of key k as a float64, or an error naming the
// record's round, shape, tool and the bad value.
func (r record) num(k string) (float64, error) {
	s, ok := r.kv[k]
	if !ok {
		return 0, status.Errorf(status.InvalidArguments, "round %d shape %s %s: no %s", r.round, r.shape, r.tool, k)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != v {
		return 0, status.Errorf(status.InvalidArguments, "round %d shape %s %s: %s=%q is not a number", r.round, r.shape, r.tool, k, s)
	}
	return v, nil
}
