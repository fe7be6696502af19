package partition

import (
	"github.com/gdnn/gdnn/internal/blocked"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/preop"
)

// kernel runs one reduction on raw buffers: the jit runtime's kernel for
// strided tensors (which falls back to the interpreter by itself), or a
// blocked-layout kernel (package internal/blocked) when the src or the output
// is blocked. Concrete types rather than an interface, so that the
// operand list Execute builds may stay on its stack.
type kernel struct {
	j *jit.Kernel
	b *blocked.Kernel
	m *preop.Program // a reduction after a Multiply by a broadcast operand, bins[0]
}

// ok reports whether k holds a compiled kernel.
func (k kernel) ok() bool { return k.j != nil || k.b != nil || k.m != nil }

// Run runs the kernel (see jit.Kernel.Run).
func (k kernel) Run(src, dst []byte, bins [][]byte) error {
	if k.b != nil {
		return k.b.Run(src, dst, bins)
	}
	if k.m != nil {
		return k.m.Run(src, dst, bins[0], bins[1:])
	}
	return k.j.Run(src, dst, bins)
}

// InPlace reports whether binary operand j may be the dst buffer itself
// (see jit.Kernel.InPlace and blocked.Kernel.InPlace).
func (k kernel) InPlace(j int) bool {
	if k.b != nil {
		return k.b.InPlace(j)
	}
	if k.m != nil {
		return k.m.InPlace(j)
	}
	return k.j != nil && k.j.InPlace(j)
}

// Impl names the implementation that runs.
func (k kernel) Impl() string {
	if k.b != nil {
		return k.b.Impl()
	}
	if k.m != nil {
		return k.m.Impl()
	}
	return k.j.Impl()
}

// Why says why the interpreter runs any part of the kernel, or "" (see
// jit.Kernel.Why and blocked.Kernel.Why).
func (k kernel) Why() string {
	if k.b != nil {
		return k.b.Why()
	}
	if k.m != nil {
		return k.m.Why()
	}
	return k.j.Why()
}

// compileKernel returns the kernel for a plan: JIT code for the effective
// ISA from the jit runtime's cache, or the interpreter where the JIT does
// not apply (the runtime decides and says why under GDNN_VERBOSE).
func compileKernel(pl *plan.Plan) (kernel, error) {
	k, err := jit.Compile(pl)
	return kernel{j: k}, err
}

// defaultImpl names the implementation a new kernel would most likely get.
func defaultImpl() string {
	if isa := jit.EffectiveISA(); isa != jit.None {
		return "jit:" + isa.String()
	}
	return "interp"
}
