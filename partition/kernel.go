package partition

import (
	"github.com/gdnn/gdnn/jit"
	"github.com/gdnn/gdnn/jit/plan"
)

// kernel runs one canonical plan on raw buffers: the jit runtime's kernel,
// which falls back to the interpreter by itself. A concrete type rather
// than an interface, so that the operand list Execute builds may stay on
// its stack.
type kernel = *jit.Kernel

// compileKernel returns the kernel for a plan: JIT code for the effective
// ISA from the jit runtime's cache, or the interpreter where the JIT does
// not apply (the runtime decides and says why under GDNN_VERBOSE).
func compileKernel(pl *plan.Plan) (kernel, error) {
	return jit.Compile(pl)
}

// defaultImpl names the implementation a new kernel would most likely get.
func defaultImpl() string {
	if isa := jit.EffectiveISA(); isa != jit.None {
		return "jit:" + isa.String()
	}
	return "interp"
}
