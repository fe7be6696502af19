package bench

import (
	"testing"
	"unsafe"
)

// TestLargePageSlice checks the length, capacity, zeroing and (for large
// buffers) 2 MiB alignment of largePageSlice.
func TestLargePageSlice(t *testing.T) {
	for _, n := range []int64{0, 1, 1000, hugePage/4 - 1, hugePage / 4, hugePage/2 + 3} {
		f := largePageSlice[float32](n)
		u := largePageSlice[uint16](n)
		if int64(len(f)) != n || int64(cap(f)) != n || int64(len(u)) != n || int64(cap(u)) != n {
			t.Fatalf("n=%d: len/cap %d/%d and %d/%d", n, len(f), cap(f), len(u), cap(u))
		}
		for i := range f {
			if f[i] != 0 {
				t.Fatalf("n=%d: f32 element %d is %v, want 0", n, i, f[i])
			}
		}
		for i := range u {
			if u[i] != 0 {
				t.Fatalf("n=%d: u16 element %d is %v, want 0", n, i, u[i])
			}
		}
		if n*4 >= hugePage {
			if a := uintptr(unsafe.Pointer(unsafe.SliceData(f))); a%hugePage != 0 {
				t.Errorf("n=%d: f32 buffer at %#x is not 2 MiB aligned", n, a)
			}
		}
		if n*2 >= hugePage {
			if a := uintptr(unsafe.Pointer(unsafe.SliceData(u))); a%hugePage != 0 {
				t.Errorf("n=%d: u16 buffer at %#x is not 2 MiB aligned", n, a)
			}
		}
	}
}
