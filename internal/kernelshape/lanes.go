package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// Bcast is the lane count of a single value. In a LaneMap it means one
// output; where that output sits in the register (every lane, or lane 0)
// is the emitter's convention. Emitters use the same value for "one
// element, broadcast" in their loads.
const Bcast = -1

// LaneMap says where the lanes of a result vector go: N lanes (or Bcast:
// one output), lane j at byte offset Off + j*Step in dst and in each
// binary operand.
type LaneMap struct {
	N       int
	DstOff  int64
	DstStep int64
	BinOff  [plan.MaxBinary]int64
	BinStep [plan.MaxBinary]int64
}

// Outputs maps n consecutive outputs of a loop with steps s, starting at
// the pointers. A single output (n == 1) is Bcast: the row shapes leave
// its sum in the lanes the emitter's Bcast convention names.
func Outputs(n int, s Steps) LaneMap {
	lm := LaneMap{N: n, DstStep: s.Dst, BinStep: s.Bin}
	if n == 1 {
		lm.N = Bcast
	}
	return lm
}

// Block maps vector k of a run of v-lane vectors along a loop with steps
// s: n lanes (n <= v; the last vector may be partial) starting k*v
// outputs past the pointers. Unlike Outputs, n == 1 stays one lane of a
// vector.
func Block(k, v, n int, s Steps) LaneMap {
	first := int64(k) * int64(v)
	lm := LaneMap{N: n, DstOff: first * s.Dst, DstStep: s.Dst, BinStep: s.Bin}
	for i := range lm.BinOff {
		lm.BinOff[i] = first * s.Bin[i]
	}
	return lm
}

// Lane maps lane j of lm alone, as one output (Bcast).
func (lm LaneMap) Lane(j int) LaneMap {
	one := LaneMap{N: Bcast, DstOff: lm.DstOff + int64(j)*lm.DstStep}
	for i := range one.BinOff {
		one.BinOff[i] = lm.BinOff[i] + int64(j)*lm.BinStep[i]
	}
	return one
}

// Contiguous reports whether the lanes of lm are consecutive elements of
// dst (of dstSize bytes) and of every binary operand that is not
// broadcast (binSizes, one per operand), so that they can be stored and
// their operands loaded as one vector. One lane always is.
func (lm LaneMap) Contiguous(dstSize int64, binSizes []int64) bool {
	if lm.N == 1 {
		return true
	}
	if lm.DstStep != dstSize {
		return false
	}
	for i, sz := range binSizes {
		if lm.BinStep[i] != 0 && lm.BinStep[i] != sz {
			return false
		}
	}
	return true
}
