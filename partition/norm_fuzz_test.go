package partition

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// FuzzNormPartitions: a normalization op of any kind, dims (rank 2 to 4,
// each 1 to 256, up to 2^14 elements), axis, layout, data types,
// optional ports and thread count is a supported partition whose results
// match the float64 oracle on every ISA (runNormPartitions, which also
// asks for machine code wherever the JIT runs).
func FuzzNormPartitions(f *testing.F) {
	f.Add(uint8(0), uint16(0), []byte{3, 127}, uint8(1), uint64(1))           // softmax [4,128] over rows of 128
	f.Add(uint8(1), uint16(0x0105), []byte{1, 2, 39}, uint8(2), uint64(2))    // log-softmax, bf16 into bf16, channels last
	f.Add(uint8(2), uint16(0x0610), []byte{7, 200}, uint8(1), uint64(3))      // layer norm, affine, stats
	f.Add(uint8(3), uint16(0x4200), []byte{2, 3, 5, 9}, uint8(2), uint64(4))  // RMSNorm over two dims, two threads
	f.Add(uint8(4), uint16(0x2700), []byte{1, 15, 6, 6}, uint8(0), uint64(5)) // group norm, channels last, stats
	f.Add(uint8(0), uint16(0x0d2a), []byte{0, 20, 64}, uint8(1), uint64(6))   // softmax over channels, inf_as_zero, stats
	f.Fuzz(func(t *testing.T, kind uint8, flags uint16, dims []byte, axis uint8, seed uint64) {
		kinds := []graph.OpKind{graph.SoftMax, graph.LogSoftmax, graph.LayerNorm, graph.RMSNorm, graph.GroupNorm}
		dts := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}
		bit := func(i uint) bool { return flags>>i&1 == 1 }
		c := normCase{kind: kinds[int(kind)%len(kinds)], dims: make([]int64, 2+len(dims)%3),
			srcDT: dts[int(flags&3)%3], dstDT: dts[int(flags>>2&3)%3], gammaDT: dts[int(flags>>4&3)%3], betaDT: dts[int(flags>>6&3)%3],
			channelsLast: bit(8), affine: bit(9), stats: bit(10), infAsZero: bit(11), groups: int64(1) << (flags >> 12 & 3)}
		elements := int64(1)
		for i := range c.dims {
			c.dims[i] = 1
			if i < len(dims) {
				c.dims[i] += int64(dims[i])
			}
			elements *= c.dims[i]
		}
		if c.kind == graph.GroupNorm {
			elements *= c.groups
		}
		if elements > 1<<14 {
			return
		}
		c.axis = int64(int(axis) % len(c.dims))
		g := c.graph(t)
		threads := 1 + int(flags>>14&1)
		forEachISA(t, func(t *testing.T, isa jit.ISA) {
			prev := jit.SetThreads(threads)
			defer jit.SetThreads(prev)
			runNormPartitions(t, g, seed)
		})
	})
}
