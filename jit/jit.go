// Package jit holds gdnn's run-time settings: the instruction set that
// newly compiled kernels use, how many threads run them, verbose output,
// and the bounds of the cache of machine code.
//
// Every setting is process-wide and safe to change from any goroutine;
// kernels already compiled keep the instruction set they were compiled
// for. The environment sets the starting values, in the spirit of
// oneDNN's: GDNN_MAX_CPU_ISA (none, avx2, avx512, neon, all, or oneDNN's
// spellings such as avx512_core; a ceiling SetMaxISA cannot lift) and
// GDNN_VERBOSE (1: one line per compile and per execute on stderr, in the
// spirit of ONEDNN_VERBOSE; 2: also one line per kernel a compile
// builds).
package jit

import ijit "github.com/gdnn/gdnn/internal/jit"

// ISA is an instruction set gdnn can emit machine code for.
type ISA int

// The instruction sets, in the order of capability within one GOARCH.
const (
	None   ISA = iota // no machine code: the interpreter runs every kernel
	AVX2              // amd64: AVX2, FMA, F16C and BMI2
	AVX512            // amd64: AVX-512 F, BW, DQ and VL
	NEON              // arm64: Advanced SIMD
)

// String returns the ISA's lower-case name: "none", "avx2", "avx512" or
// "neon".
func (i ISA) String() string { return ijit.ISA(i).String() }

// ParseISA parses an ISA name, case-insensitively: the String names,
// "all" or "max" (the most capable ISA of this GOARCH: no cap), and
// oneDNN's spellings (avx512_core, avx2_vnni, ...) as the ISA they imply,
// so a value of ONEDNN_MAX_CPU_ISA works (as GDNN_MAX_CPU_ISA,
// avx512_core and avx512_core_vnni also keep the AVX-512 code from the
// AVX512_BF16 instructions). An unknown name is an error
// satisfying errors.Is(err, graph.InvalidArguments).
func ParseISA(s string) (ISA, error) {
	i, err := ijit.ParseISA(s)
	return ISA(i), err
}

// DetectedISA returns the most capable ISA this CPU supports, ignoring
// any cap (None on a platform where gdnn emits no machine code).
func DetectedISA() ISA { return ISA(ijit.DetectedISA()) }

// EffectiveISA returns the ISA new compiles use: the most capable one the
// CPU supports that exceeds neither GDNN_MAX_CPU_ISA nor the SetMaxISA
// cap.
func EffectiveISA() ISA { return ISA(ijit.EffectiveISA()) }

// SetMaxISA caps the ISA new compiles may use and returns the previous
// cap set through SetMaxISA. GDNN_MAX_CPU_ISA stays a ceiling: new
// compiles use the lower of the two caps, so SetMaxISA can lower the ISA
// further but never lift the environment's cap. A cap never raises the
// ISA above what the CPU has; None sends every new compile to the
// interpreter.
func SetMaxISA(i ISA) ISA { return ISA(ijit.SetMaxISA(ijit.ISA(i))) }

// Threads returns how many threads run a kernel's calls.
func Threads() int { return ijit.Threads() }

// SetThreads sets how many threads run a kernel's calls, the calling
// goroutine included (n < 1 restores the default: GOMAXPROCS as it is at
// each call, so that it follows the runtime's changes), and returns the
// previous count. Results are bit-identical for every thread count.
func SetThreads(n int) int { return ijit.SetThreads(n) }

// Verbose returns the verbose level: 0 silent, 1 a line per compile and
// per execute on stderr, 2 also a line per kernel a compile builds.
func Verbose() int { return ijit.Verbose() }

// SetVerbose sets the verbose level, overriding GDNN_VERBOSE, and returns
// the previous one.
func SetVerbose(level int) int { return ijit.SetVerbose(level) }

// The default bounds of the cache of machine code.
const (
	DefaultCacheEntries = 1024
	DefaultCacheBytes   = 32 << 20
)

// CacheStats describes the cache of machine code.
type CacheStats struct {
	Entries   int   // kernels cached now
	Bytes     int64 // executable bytes they map (whole pages)
	Hits      int64 // lookups that found a kernel
	Misses    int64 // lookups that compiled one
	Evictions int64 // kernels pushed out by the bounds
}

// GetCacheStats returns a snapshot of the cache's counters.
func GetCacheStats() CacheStats { return CacheStats(ijit.GetCacheStats()) }

// SetCacheCapacity bounds the cache of machine code to at most entries
// kernels and bytes of executable memory (negative values count as 0) and
// returns the previous bounds. Kernels past the new bounds are evicted,
// least recently used first; a capacity of 0 disables caching. The
// caches of compiled partitions and of the reduce package's problems are
// set apart (partition.SetCompiledPartitionCacheCapacity,
// reduce.SetCacheCapacity). The kernels of ArgMax and ArgMin and of the
// fused normalizations own their code apart from this cache: the caches
// that keep them bound them (reduce.SetCacheCapacity for the index
// kernels, 256 programs per cache for the normalizations the reduce
// package runs, the compiled partitions' cache), and their code is
// unmapped once the garbage collector frees them.
func SetCacheCapacity(entries int, bytes int64) (prevEntries int, prevBytes int64) {
	return ijit.SetCacheCapacity(entries, bytes)
}
