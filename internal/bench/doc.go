// Package bench is the engine of gdnnbench, a benchdnn-compatible command
// line tool for gdnn. It parses benchdnn's syntax (problem descriptors,
// knobs, batch files, post-op attributes, perf templates), builds gdnn
// graphs for each problem, runs them through partition/compile/execute,
// checks the results against a float64 reference computed here, and
// measures performance.
//
// Five drivers exist, as in benchdnn: --reduction (one of benchdnn's
// reduction algs, built from gdnn's Reduce* ops with their pre-ops and
// post-ops, per problem described as SRC:DST dims), --graph (a oneDNN
// graph JSON case with shape/attribute/data-type knobs) and the
// normalization drivers --softmax, --lnorm and --gnorm (normdriver.go:
// options and problems; normrun.go: one SoftMax, LogSoftmax, LayerNorm,
// RMSNorm or GroupNorm op per problem; normref.go: benchdnn's fills,
// float64 references and thresholds). Main is the whole
// command; the pieces (ParseProblem, ResolveTag, ParsePostOps,
// ExpandTemplate, ...) are exported so that tests and other tools share them.
//
// Around the drivers: progress on stderr with a problem count from a dry
// pass (progress.go), benchdnn's --summary (summary.go), --match in
// benchdnn's POSIX regular-expression dialect (posixre.go), --batch lookup
// in inputs folders (args.go), timing-noise warnings (noise.go) and the
// --plot bandwidth chart (plot.go).
//
// The package depends on partition only in the drivers; the parsers stand
// alone.
package bench
