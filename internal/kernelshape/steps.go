package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// Steps is how far one iteration of a loop moves each pointer, in bytes.
// Bin entries past the plan's binary post-ops are 0.
type Steps struct {
	Src, Dst int64
	Bin      [plan.MaxBinary]int64
}

// StepsOf converts a plan loop's element strides to byte steps, given
// the element sizes of src, dst and each binary operand.
func StepsOf(l *plan.Loop, srcSize, dstSize int64, binSizes []int64) Steps {
	s := Steps{Src: l.SrcStride * srcSize, Dst: l.DstStride * dstSize}
	for i := 0; i < len(binSizes) && i < len(l.BinStrides); i++ {
		s.Bin[i] = l.BinStrides[i] * binSizes[i]
	}
	return s
}

// Scaled returns s times k: the steps of k iterations at once.
func (s Steps) Scaled(k int64) Steps {
	out := Steps{Src: s.Src * k, Dst: s.Dst * k}
	for i := range s.Bin {
		out.Bin[i] = s.Bin[i] * k
	}
	return out
}
