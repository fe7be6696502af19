// Command gdnnbench is a benchdnn-compatible benchmark and correctness
// driver for gdnn. It runs oneDNN's benchdnn reduction, graph, softmax,
// lnorm and gnorm inputs unchanged; with no arguments it runs a built-in
// batch of representative ReduceMean shapes (f32, bf16, f16; correctness
// and performance) and prints a table. See gdnnbench --help.
package main

import (
	_ "embed"
	"os"

	"github.com/gdnn/gdnn/internal/bench"
)

// defaultBatch is the built-in batch run when no arguments are given.
//
//go:embed default_batch
var defaultBatch string

func main() {
	if len(os.Args) == 1 {
		os.Exit(bench.MainBatch(defaultBatch, "default_batch", nil, os.Stdout, os.Stderr))
	}
	os.Exit(bench.Main(os.Args[1:], os.Stdout, os.Stderr))
}
