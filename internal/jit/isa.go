package jit

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"

	"github.com/gdnn/gdnn/internal/status"
)

// ISA is an instruction set the JIT can emit code for.
type ISA int

// The ISAs, in the order of capability within one GOARCH.
const (
	None   ISA = iota // no JIT: the interpreter runs every plan
	AVX2              // amd64 AVX2 + FMA + F16C + BMI2
	AVX512            // amd64 AVX-512 F + BW + DQ + VL
	NEON              // arm64 Advanced SIMD
)

var isaNames = [...]string{None: "none", AVX2: "avx2", AVX512: "avx512", NEON: "neon"}

// String returns the ISA's lower-case name ("none", "avx2", "avx512",
// "neon").
func (i ISA) String() string {
	if i >= 0 && int(i) < len(isaNames) {
		return isaNames[i]
	}
	return fmt.Sprintf("isa(%d)", int(i))
}

// ParseISA parses an ISA name, case-insensitively. Besides the String
// names it accepts "all" and "max" (the most capable ISA of this GOARCH,
// i.e. no cap), and oneDNN's spellings mapped to the gdnn ISA they imply,
// so a value copied from ONEDNN_MAX_CPU_ISA works: "avx512_core",
// "avx512_core_bf16", "avx10_1_512" and the like are avx512, "avx2_vnni"
// and the like avx2, "default" all, and "sse41" and "avx", below every
// gdnn kernel, none (the interpreter): a ceiling is never lifted. Of
// the avx512 ones, avx512_core and avx512_core_vnni also exclude the
// AVX512_BF16 instructions (allowsBF16), as in oneDNN.
func ParseISA(s string) (ISA, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	switch {
	case n == "none" || n == "interp" || n == "sse41" || n == "avx":
		return None, nil
	case n == "all" || n == "max" || n == "default":
		return topISA(runtime.GOARCH), nil
	case n == "avx2" || strings.HasPrefix(n, "avx2_"):
		return AVX2, nil
	case n == "avx512" || strings.HasPrefix(n, "avx512_") || strings.HasPrefix(n, "avx10_"):
		return AVX512, nil
	case n == "neon" || n == "asimd" || n == "simd":
		return NEON, nil
	}
	return None, status.Errorf(status.InvalidArguments, "unknown ISA %q (want none, avx2, avx512, neon or all)", s)
}

// allowsBF16 reports whether the cap s (a value ParseISA takes) lets the
// AVX-512 kernels use AVX512_BF16's instructions: oneDNN's avx512_core
// and avx512_core_vnni come below avx512_core_bf16, so they exclude
// them. (The VNNI instructions are none of gdnn's.)
func allowsBF16(s string) bool {
	n := strings.ToLower(strings.TrimSpace(s))
	return n != "avx512_core" && n != "avx512_core_vnni"
}

// topISA is the most capable ISA gdnn knows for goarch.
func topISA(goarch string) ISA {
	switch goarch {
	case "amd64":
		return AVX512
	case "arm64":
		return NEON
	}
	return None
}

// rank orders ISAs by capability so that a cap can be compared with what
// the CPU has. NEON and AVX2 share a rank: both are "the baseline vector
// JIT" of their GOARCH, so a cap of either on the other GOARCH still
// means "vector JIT, but not AVX-512".
func rank(i ISA) int {
	switch i {
	case AVX2, NEON:
		return 1
	case AVX512:
		return 2
	}
	return 0
}

// features is what the CPU offers, read once.
type features struct {
	avx2, avx512, avx512bf16 bool
	zen                      bool  // see zenCore
	l2                       int64 // see l2Bytes
	l3                       int64 // see l3Bytes
	neon, fphp               bool
}

// detect reads CPU features with golang.org/x/sys/cpu, which also checks
// that the OS saves the YMM/ZMM/opmask state (without that the CPUID bits
// lie).
func detect() features {
	var f features
	switch runtime.GOARCH {
	case "amd64":
		// The AVX2 kernels also use FMA (VFMADD231PS), F16C (VCVTPH2PS,
		// VCVTPS2PH) and BMI2 (BZHI for tail masks).
		f.avx2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C && cpu.X86.HasBMI2
		// The AVX-512 kernels use BW (VMOVDQU16, word masks), DQ and VL
		// (EVEX forms of 256-bit conversions) on top of F, and share the
		// scalar helpers of the AVX2 ones.
		f.avx512 = f.avx2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
			cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
		f.avx512bf16 = f.avx512 && cpu.X86.HasAVX512BF16
		f.zen = zenCore()
		f.l2, f.l3 = l2Bytes(), l3Bytes(f.zen)
	case "arm64":
		// ASIMD is architecturally present on every arm64 Linux system;
		// the check guards odd platforms. FPHP (half-precision scalar
		// arithmetic) is recorded but not required: the kernels only
		// convert f16 to f32 (FCVTL, part of base ASIMD) and accumulate
		// in f32.
		f.neon = cpu.ARM64.HasASIMD || runtime.GOOS == "linux"
		f.fphp = cpu.ARM64.HasFPHP
	}
	return f
}

var (
	cpuOnce sync.Once
	cpuFeat features

	// Two caps hold the ISA down, and the lower one wins: envCap is
	// GDNN_MAX_CPU_ISA, read once, and setCap is SetMaxISA's. Both start
	// at the GOARCH's top ISA (no cap). The environment is a ceiling the
	// person running the program sets, so code inside it cannot lift it.
	// envNoBF16 is set where GDNN_MAX_CPU_ISA excludes AVX512_BF16
	// (allowsBF16). setCap holds the cap in its low byte and above it a
	// count of SetMaxISA calls, so that one load gives both the cap and
	// a stamp of it (ISAStamp).
	envCap    atomic.Int64
	envNoBF16 atomic.Bool
	setCap    atomic.Int64
	envOnce   sync.Once
)

func cpuFeatures() features {
	cpuOnce.Do(func() { cpuFeat = detect() })
	return cpuFeat
}

// L3Bytes is the size of the CPU's last-level cache as CPUID reports it,
// 0 where it is unknown (no amd64, or no L3 in CPUID).
func L3Bytes() int64 { return cpuFeatures().l3 }

// DetectedISA returns the most capable ISA this CPU supports for gdnn's
// JIT, ignoring any cap (None on a GOARCH without a JIT).
func DetectedISA() ISA {
	f := cpuFeatures()
	switch {
	case f.avx512:
		return AVX512
	case f.avx2:
		return AVX2
	case f.neon:
		return NEON
	}
	return None
}

// supported reports whether the CPU runs code of ISA i.
func supported(i ISA) bool {
	f := cpuFeatures()
	switch i {
	case None:
		return true
	case AVX2:
		return f.avx2
	case AVX512:
		return f.avx512
	case NEON:
		return f.neon
	}
	return false
}

// initCap applies GDNN_MAX_CPU_ISA once. An unparsable value is ignored
// (there is no caller to return an error to) and said on stderr when
// verbose output is on.
func initCap() {
	envOnce.Do(func() {
		top := int64(topISA(runtime.GOARCH))
		envCap.Store(top)
		setCap.Store(top)
		v, ok := os.LookupEnv("GDNN_MAX_CPU_ISA")
		if !ok || v == "" {
			return
		}
		i, err := ParseISA(v)
		if err != nil {
			verbosef("gdnn_verbose,info,cpu,ignoring GDNN_MAX_CPU_ISA: %v", err)
			return
		}
		envCap.Store(int64(i))
		envNoBF16.Store(!allowsBF16(v))
	})
}

// bf16Allowed reports whether GDNN_MAX_CPU_ISA lets the AVX-512 kernels
// use AVX512_BF16's instructions where the CPU has them.
func bf16Allowed() bool {
	initCap()
	return !envNoBF16.Load()
}

// SetMaxISA caps the ISA the JIT may use and returns the previous cap
// set through SetMaxISA. It works under GDNN_MAX_CPU_ISA, never above
// it: new compiles use the lower of the two caps, so SetMaxISA can lower
// the ISA further but not lift the environment's ceiling. A cap never
// raises the ISA above what the CPU has; None sends every new compile to
// the interpreter, as does a value that names no ISA. Kernels already
// compiled keep their ISA; the kernel cache is keyed by ISA, so a new
// cap gets its own kernels.
func SetMaxISA(i ISA) ISA {
	initCap()
	if rank(i) == 0 {
		i = None // a value that names no ISA caps as None, and setCap's byte holds None
	}
	for {
		old := setCap.Load()
		if setCap.CompareAndSwap(old, (old>>8+1)<<8|int64(uint8(i))) {
			return ISA(uint8(old))
		}
	}
}

// ISAStamp returns EffectiveISA and a stamp that every SetMaxISA
// changes. A cache keyed by the ISA keeps what it compiled only where
// CapStamp still returns that stamp after the compile: a cap set in
// between may have had the compile, which reads the cap anew, use
// another ISA than the key names, and every later call under the key's
// cap would run it.
func ISAStamp() (ISA, int64) {
	initCap()
	c := setCap.Load()
	return effective(ISA(uint8(c))), c
}

// CapStamp returns ISAStamp's stamp alone.
func CapStamp() int64 {
	initCap()
	return setCap.Load()
}

// EffectiveISA returns the ISA new compiles use: the most capable ISA the
// CPU supports whose capability exceeds neither GDNN_MAX_CPU_ISA nor the
// SetMaxISA cap.
func EffectiveISA() ISA {
	initCap()
	return effective(ISA(uint8(setCap.Load())))
}

// effective is EffectiveISA under the SetMaxISA cap set.
func effective(set ISA) ISA {
	capRank := min(rank(ISA(envCap.Load())), rank(set))
	for _, i := range [...]ISA{AVX512, AVX2, NEON} {
		if rank(i) <= capRank && supported(i) {
			return i
		}
	}
	return None
}

// noJITReason says why EffectiveISA is None, for Kernel.Why.
func noJITReason() string {
	if DetectedISA() == None {
		switch runtime.GOARCH {
		case "amd64":
			return "cpu lacks AVX2+FMA+F16C+BMI2"
		case "arm64":
			return "cpu lacks ASIMD"
		}
		return "no JIT for GOARCH " + runtime.GOARCH
	}
	return fmt.Sprintf("ISA capped to none (detected %s; GDNN_MAX_CPU_ISA or SetMaxISA)", DetectedISA())
}
