package amd64

import (
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// EmitArg(pl *plan.ArgPlan, avx512 bool) ([]byte, error) returns the machine code of the index reduction pl.
func EmitArg(pl *plan.ArgPlan, avx512 bool) ([]byte, error) {
	return nil, status.Errorf(status.Unimplemented, "amd64: no index reduction kernels")
}
