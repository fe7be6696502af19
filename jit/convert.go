package jit

import (
	"encoding/binary"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/plan"
)

// run rounds the dense f32 values of from into dst (see conversion). The
// rounding is the dst type's round-to-nearest-even, the same the kernels
// apply when they convert themselves.
func (cv *conversion) run(from, dst []byte) {
	var idx [plan.MaxLoops]int64
	n := len(cv.sizes)
	total := int64(1)
	for _, s := range cv.sizes {
		total *= s
	}
	for i := int64(0); i < total; i++ {
		var off int64
		for d := 0; d < n; d++ {
			off += idx[d] * cv.strides[d]
		}
		v := math.Float32frombits(binary.LittleEndian.Uint32(from[4*i:]))
		var h uint16
		if cv.dt == dtypes.BF16 {
			h = dtypes.F32ToBF16(v)
		} else {
			h = dtypes.F32ToF16(v)
		}
		binary.LittleEndian.PutUint16(dst[2*off:], h)
		for d := n - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < cv.sizes[d] {
				break
			}
			idx[d] = 0
		}
	}
}
