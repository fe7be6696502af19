package reduce_test

// Calls at the edges of package reduce: refusals that must cost nothing,
// reduce.Type beside a float32 slice, and what an 8-bit sum into s32 is.

import (
	"errors"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestRefusedCallsAllocateLittle: a call whose src or dst slice is far
// too short for its dims is refused with InvalidArguments, and refusing
// it must not cost work or memory in proportion to what the dims
// describe (docs/RELIABILITY.md: "gdnn allocates per rank, per op, per
// cache entry, never per element of a described tensor: compiling ... a
// 2^31-output reduction ... allocates < 1 MiB").
//
// So reduce checks the spans before it compiles anything: a LogSumExp
// kernel builds one program per ~1 MiB chunk of the described src, and
// compiling first cost ~200 MB for 2^32 described outputs.
func TestRefusedCallsAllocateLittle(t *testing.T) {
	cases := []struct {
		name       string
		dims, axes []int
	}{
		{"2^30 outputs, empty src", []int{1 << 30, 2}, []int{1}},
		{"2^30 outputs of empty reductions, 1-element dst", []int{0, 1 << 30}, []int{0}},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, op := range advOps {
			for _, c := range cases {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				err := advCatch(func() error { return reduce.Reduce(op, make([]float32, 1), []float32{}, c.dims, c.axes) })
				runtime.ReadMemStats(&m1)
				if !errors.Is(err, graph.InvalidArguments) {
					t.Errorf("%v %v %s: error %v, want InvalidArguments", isa, op, c.name, err)
				}
				if a := m1.TotalAlloc - m0.TotalAlloc; a > 4<<20 {
					t.Errorf("%v %v %s: refusing the call allocated %d MiB", isa, op, c.name, a>>20)
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestEightBitSumsIntoS32 pins the README's rule for 8-bit sums into an
// s32 dst: what is rounded is the f32 result (as in oneDNN), so the sum
// is exact while it stays below 2^24, and past that it is within the f32
// sum's error of the exact one, on every ISA.
func TestEightBitSumsIntoS32(t *testing.T) {
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, n := range []int{65793, 70001, 1 << 20} {
			u := make([]uint8, n)
			s := make([]int8, n)
			var wu, ws int64
			for i := range u {
				u[i] = uint8(255 - i%3)
				s[i] = int8(127 - i%5)
				wu += int64(u[i])
				ws += int64(s[i])
			}
			du, ds := []int32{0}, []int32{0}
			if err := reduce.Sum(du, u, []int{n}, []int{0}); err != nil {
				t.Fatal(err)
			}
			if err := reduce.Sum(ds, s, []int{n}, []int{0}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				got, want int64
			}{{int64(du[0]), wu}, {int64(ds[0]), ws}} {
				// Below 2^24 every partial sum is an exact f32; above it,
				// n additions of f32 rounding (2^-24 relative) each.
				bound := int64(0)
				if c.want >= 1<<24 {
					bound = int64(float64(n) * float64(c.want) / (1 << 24))
				}
				if d := c.got - c.want; d > bound || -d > bound {
					t.Errorf("%v n=%d: sum %d, exact %d, allowed %d off", isa, n, c.got, c.want, bound)
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestTypeNamesOnlyTheUint16Side: reduce.Type's doc says it "names the
// data type of whichever of src and dst are ~uint16 slices ... A
// ~float32 slice is always f32", so an f16 src into an f32 dst may be
// named with Type(F16), as a framework's generic code does.
func TestTypeNamesOnlyTheUint16Side(t *testing.T) {
	h := []uint16{dtypes.F32ToF16(1.5), dtypes.F32ToF16(2.25)}
	d := []float32{0}
	if err := reduce.Sum(d, h, []int{2}, []int{0}, reduce.Type(dtypes.F16)); err != nil || d[0] != 3.75 {
		t.Errorf("f16 -> f32 with Type(F16): %v %v, want 3.75", d, err)
	}
}
