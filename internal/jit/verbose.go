package jit

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Verbose output, in the spirit of ONEDNN_VERBOSE: one line per compile
// and per execute, comma-separated. The partition layer adds, per compile,
// a line in the user's terms (tensors, axes, ops; see package partition):
//
//	gdnn_verbose,compile,cpu,partition,<impl>,<id>,<tensors>,axes:<a>[ keep_dims] alg:<reduction>,<ops>,<ms>[,interpreter: <why>]
//
// and the runtime writes:
//
//	gdnn_verbose,compile,cpu,reduction,<impl>,<plan>,<schedule> cache:<hit|miss>,<ms>[,fallback: <why>]
//	gdnn_verbose,exec,cpu,reduction,<impl>,<plan>,<schedule> threads:<n>,<ms>
//
// Index kernels (ArgMax, ArgMin) and fused normalization kernels write
// the same two lines, <plan> their plan (an index plan ends alg=argmax or
// alg=argmin; a fused normalization's map plan adds norm=<kind>) and
// <schedule> split:index, split:fused-rows or split:fused-columns.
//
// <impl> is jit:avx512, jit:avx2, jit:neon or interp; <plan> is the
// canonical plan (data types, loops as size:srcStride[:dstStride...], N,
// Outputs, Div, the reduction unless a mean, post-ops); <schedule> is
// "split:<single|blocks|tiles|2stage|rowbyrow>[+postpass][+lse] calls:<n> phases:<n>"
// (rowbyrow: two stages whose first sums whole rows one at a time, see
// rowByRow in decompose.go; +postpass: the post-ops run in a pass of their
// own, see postpass.go; +lse: a log-sum-exp's unshifted pass, the max,
// exp and sum that may follow it, and the copy into dst, see lse.go: in
// chunks, one phase whose calls each run a chunk's phases, counted here
// by their kernel calls, those that a Run may skip included); <ms> is wall time in milliseconds. Level 2 adds,
// before each compile line, one line per sub-plan of the schedule:
//
//	gdnn_verbose,compile_sub,cpu,reduction,<impl>,<sub-plan>,code:<bytes>B cache:<hit|miss>[,conf:<conf>][,fallback: <why>]
//
// <conf> is the configuration the emitter chose for the sub-plan's code
// (amd64.Conf, arm64.Conf: the target, the kernel shape and its choices,
// e.g. "avx512/intel row group=16 pack=1 u=1 pf-group=2048").

var (
	verboseOnce sync.Once
	verbosity   atomic.Int64
	verboseMu   sync.Mutex
	verboseOut  io.Writer = os.Stderr
)

// verboseLevel returns the verbosity, reading GDNN_VERBOSE the first time.
func verboseLevel() int {
	verboseOnce.Do(func() {
		if v, err := strconv.Atoi(os.Getenv("GDNN_VERBOSE")); err == nil && v > 0 {
			verbosity.CompareAndSwap(0, int64(v))
		}
	})
	return int(verbosity.Load())
}

// SetVerbose sets the verbosity (0 off, 1 or 2 on) and returns the previous
// level; it overrides GDNN_VERBOSE.
func SetVerbose(level int) int {
	prev := verboseLevel()
	verbosity.Store(int64(max(level, 0)))
	return prev
}

// verboseln writes one line, whole, to the verbose output.
func verboseln(line string) {
	verboseMu.Lock()
	defer verboseMu.Unlock()
	_, _ = io.WriteString(verboseOut, line+"\n") // diagnostics only: a failed write has nowhere to go
}

// verbosef writes a formatted line when verbose output is on.
func verbosef(format string, args ...any) {
	if verboseLevel() > 0 {
		verboseln(fmt.Sprintf(format, args...))
	}
}

// ms formats a duration in milliseconds with enough digits for µs-scale
// calls.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Nanoseconds())/1e6, 'f', 4, 64)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// compileLine is the runtime's compile line of a kernel: its impl, what it
// computes (a plan's String), its schedule, whether its code came from
// the cache, the time the compile took and why the interpreter runs it.
// Every kind of kernel (reductions, index reductions, fused
// normalizations) reports through it, so that their lines read alike.
func compileLine(impl, what, schedule string, hit bool, d time.Duration, why string) string {
	cache := "miss"
	if hit {
		cache = "hit"
	}
	line := "gdnn_verbose,compile,cpu,reduction," + impl + "," + what + "," + schedule + " cache:" + cache + "," + ms(d)
	if why != "" {
		line += ",fallback: " + why
	}
	return line
}

// execLine is the runtime's execute line of a kernel (see compileLine).
func execLine(impl, what, schedule string, threads int, d time.Duration) string {
	return "gdnn_verbose,exec,cpu,reduction," + impl + "," + what + "," + schedule + " threads:" + itoa(int64(threads)) + "," + ms(d)
}

// Verbose returns the verbosity (GDNN_VERBOSE, or what SetVerbose set).
func Verbose() int { return verboseLevel() }

// VerboseLine writes one line to the verbose output when verbosity is on,
// so that callers above the runtime (the partition layer) report in the
// same stream, whole lines never interleaved.
func VerboseLine(line string) {
	if verboseLevel() > 0 {
		verboseln(line)
	}
}
