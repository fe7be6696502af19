package jit

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/isa/amd64"
	"github.com/gdnn/gdnn/internal/isa/arm64"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// emit turns pl, with the runtime's hints h, into machine code for isa. It is the one place that maps
// an ISA to an emitter: the emitters are plain packages that know nothing
// of this runtime, and nothing registers itself at init time.
func emit(pl *plan.Plan, h kernelconf.Hints, isa ISA) (plan.Code, error) {
	switch isa {
	case AVX512, AVX2:
		if runtime.GOARCH != "amd64" {
			return plan.Code{}, status.Errorf(status.Unimplemented, "jit: %s code cannot run on GOARCH %s", isa, runtime.GOARCH)
		}
		return amd64.EmitHinted(pl, h, amd64Options(isa))
	case NEON:
		if runtime.GOARCH != "arm64" {
			return plan.Code{}, status.Errorf(status.Unimplemented, "jit: %s code cannot run on GOARCH %s", isa, runtime.GOARCH)
		}
		return arm64.Emit(pl)
	}
	return plan.Code{}, status.Errorf(status.Unimplemented, "jit: no emitter for ISA %s", isa)
}

// amd64Options are the emitter options of isa (AVX512 or AVX2) on this
// machine's cores, under GDNN_MAX_CPU_ISA (which may exclude BF16; it is
// read once, so the kernel cache need not key on it).
func amd64Options(isa ISA) amd64.Options {
	f := cpuFeatures()
	return amd64.Options{AVX512: isa == AVX512, BF16: isa == AVX512 && f.avx512bf16 && bf16Allowed(), Zen: f.zen}
}

// confOf is the configuration the emitter of isa chooses for pl and h, in its
// one-line form (GDNN_VERBOSE=2), or "" for the interpreter. The
// choosers are pure, so this is what emit lowered.
func confOf(pl *plan.Plan, h kernelconf.Hints, isa ISA) string {
	switch isa {
	case AVX512, AVX2:
		return amd64.Choose(pl, h, amd64Options(isa).Target()).String()
	case NEON:
		return arm64.Choose(pl).String()
	}
	return ""
}

// coversOf returns what the emitter of isa declares it covers. The
// interpreter (None) covers no plan; its column width is the narrowest
// vector emitter's, so that plans are scheduled alike on every ISA.
func coversOf(isa ISA) kernelshape.Covers {
	switch isa {
	case AVX512, AVX2:
		return amd64.Covers(amd64.Options{AVX512: isa == AVX512, Zen: cpuFeatures().zen})
	case NEON:
		return arm64.Covers
	}
	return kernelshape.Covers{Arch: "interp", PostOp: func(ops.Kind) bool { return false },
		Reduction: func(plan.Reduction) bool { return false }, WholeRowLanes: 64}
}

// coverage is the coversOf the runtime uses; tests substitute it, with
// emitter, to exercise the rules that read it.
var coverage = coversOf

// emitter is the emit function build uses; tests substitute it to
// exercise the fallbacks (an emitter that refuses a plan, or one whose
// code cannot be mapped) independently of what the real emitters cover.
var emitter = emit

// build compiles pl, with hints h, for isa into a fresh, uncached entry. Anything that
// stops the JIT and is not the plan's fault (no JIT ISA, the emitter does
// not cover the plan, executable memory refused) gives an interpreter
// entry that says why; only an emitter error of another status (a plan
// the emitter finds malformed) is returned.
func build(pl *plan.Plan, h kernelconf.Hints, isa ISA) (*entry, error) {
	e := &entry{pl: pl, impl: "interp"}
	if isa == None {
		e.why = noJITReason()
		return e, nil
	}
	code, err := emitter(pl, h, isa)
	if err != nil {
		if errors.Is(err, status.Unimplemented) {
			e.why = fmt.Sprintf("%s emitter: %v", isa, err)
			return e, nil
		}
		return nil, err
	}
	c, err := execmem.New(code.Text)
	if err != nil {
		e.why = fmt.Sprintf("executable memory: %v", err)
		return e, nil
	}
	e.code, e.impl, e.bytes = c, "jit:"+isa.String(), pageBytes(c.Len())
	e.conf = confOf(pl, h, isa)
	e.long = code.Totals
	return e, nil
}
