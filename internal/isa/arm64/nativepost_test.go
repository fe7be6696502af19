package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// nativeTakesPlan is kernelshape.NativeKindOf's refusal of pl, or nil.
func nativeTakesPlan(pl *plan.Plan) error {
	_, err := kernelshape.NativeKindOf(pl)
	return err
}
