package cpubench

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoBLoop keeps the module's benchmarks on b.N loops. A b.Loop
// benchmark runs all its iterations in the testing package's first probe
// call, at whatever GOMAXPROCS the benchmark before it left
// (go.dev/issue/49980), and reports that run as the first -cpu value's:
// under -cpu 1,2 every "1" line of such a benchmark ran on two threads,
// since gdnn's default thread count follows GOMAXPROCS. A b.N loop is
// run again at the -cpu value after the one-iteration probe.
func TestNoBLoop(t *testing.T) {
	loop := regexp.MustCompile(`for\s+\w+\.Loop\(\)`)
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(text), "\n") {
			if loop.MatchString(line) {
				found = append(found, fmt.Sprintf("%s:%d", path, i+1))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("benchmarks loop with b.Loop, which does not honour -cpu's first value; use cpubench.Loop or b.ResetTimer and a b.N loop:\n%s", strings.Join(found, "\n"))
	}
}
