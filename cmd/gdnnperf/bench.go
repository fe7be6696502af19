package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// benchRuns holds `go test -bench` results: ns/op per run, by benchmark
// name without the -GOMAXPROCS suffix, and the "cpu:" line.
type benchRuns struct {
	ns  map[string][]float64
	cpu string
}

// parseBench reads `go test -bench` output (any -count).
func parseBench(r io.Reader) (*benchRuns, error) {
	b := &benchRuns{ns: map[string][]float64{}}
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if c, ok := strings.CutPrefix(line, "cpu: "); ok {
			b.cpu = strings.TrimSpace(c)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		for i := 2; i < len(f); i++ {
			if f[i] != "ns/op" {
				continue
			}
			v, err := strconv.ParseFloat(f[i-1], 64)
			if err != nil || v < 0 {
				return nil, status.Errorf(status.InvalidArguments, "benchmark line %d: ns/op value %q", ln, f[i-1])
			}
			name := benchName(f[0])
			b.ns[name] = append(b.ns[name], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, status.Errorf(status.InvalidArguments, "reading benchmark results: %v", err)
	}
	return b, nil
}

// benchName drops the "-N" GOMAXPROCS suffix go test appends.
func benchName(s string) string {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return s
	}
	if _, err := strconv.Atoi(s[i+1:]); err != nil {
		return s
	}
	return s[:i]
}
