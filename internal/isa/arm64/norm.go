package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// EmitNorm returns NEON machine code for the fused normalization n.
func EmitNorm(n *kernelshape.Norm) (plan.Code, error) {
	return plan.Code{}, status.Errorf(status.Unimplemented, "arm64: fused normalization")
}
