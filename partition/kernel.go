package partition

import (
	"github.com/gdnn/gdnn/jit/interp"
	"github.com/gdnn/gdnn/jit/plan"
)

// kernel runs one canonical plan on raw buffers.
type kernel interface {
	Run(src, dst []byte, bins [][]byte) error
	Impl() string
}

// compileKernel returns the kernel for a plan.
func compileKernel(pl *plan.Plan) (kernel, error) {
	return interpKernel{pl}, nil
}

// defaultImpl names the implementation new kernels get.
func defaultImpl() string { return "interp" }

type interpKernel struct{ pl *plan.Plan }

func (k interpKernel) Run(src, dst []byte, bins [][]byte) error {
	return interp.Run(k.pl, src, dst, bins)
}
func (k interpKernel) Impl() string { return "interp" }
