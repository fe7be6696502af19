package reduce_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestArgMinMaxBytes: GoMLX's ArgMinMax into a byte dst at an odd
// address (one byte into a buffer), s32 and s64, KeepDims and
// transposed DstStrides, every ISA: the indices, little-endian, and the
// bytes around dst untouched; a dst one byte short is refused.
func TestArgMinMaxBytes(t *testing.T) {
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(61, uint64(isa)))
		dims := []int{7, 300, 5}
		n := 7 * 300 * 5
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(r.IntN(9) - 4)
		}
		vals := make([]float64, n)
		for i, v := range src {
			vals[i] = float64(v)
		}
		for _, axis := range []int{0, 1, 2} {
			for _, isMin := range []bool{false, true} {
				want := r1ArgOracle(vals, dims, axis, isMin, false)
				for _, odt := range []dtypes.DataType{dtypes.S32, dtypes.S64} {
					es := odt.Size()
					buf := make([]byte, len(want)*es+2)
					for i := range buf {
						buf[i] = 0xAB
					}
					dst := buf[1 : 1+len(want)*es]
					name := fmt.Sprintf("%v axis %d min=%v %v", isa, axis, isMin, odt)
					if err := reduce.ArgMinMax(dst, src, dims, axis, odt, isMin, reduce.KeepDims(true)); err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					if buf[0] != 0xAB || buf[len(buf)-1] != 0xAB {
						t.Errorf("%s: bytes around dst written", name)
					}
					for k, w := range want {
						var g int64
						if es == 4 {
							g = int64(int32(binary.LittleEndian.Uint32(dst[4*k:])))
						} else {
							g = int64(binary.LittleEndian.Uint64(dst[8*k:]))
						}
						if g != w {
							t.Errorf("%s: [%d] = %d, want %d", name, k, g, w)
							break
						}
					}
					err := reduce.ArgMinMax(dst[:len(dst)-1], src, dims, axis, odt, isMin)
					if !errors.Is(err, graph.InvalidArguments) && !errors.Is(err, graph.InvalidShape) {
						t.Errorf("%s: a dst one byte short: %v", name, err)
					}
				}
			}
		}
		// Transposed dst strides over the kept dims [7, 5] of axis 1.
		want := r1ArgOracle(vals, dims, 1, false, true)
		got := make([]int64, 35)
		if err := reduce.ArgMax(got, src, dims, 1, reduce.DstStrides([]int{1, 7}), reduce.SelectLastIndex(true)); err != nil {
			t.Errorf("%v transposed dst: %v", isa, err)
		} else {
			for o := range 7 {
				for i := range 5 {
					if got[o+7*i] != want[o*5+i] {
						t.Errorf("%v transposed dst: [%d %d] = %d, want %d", isa, o, i, got[o+7*i], want[o*5+i])
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}
