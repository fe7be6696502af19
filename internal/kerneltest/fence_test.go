package kerneltest

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// faults reports whether reading the byte at p faults.
func faults(p unsafe.Pointer) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	_ = *(*byte)(p)
	return false
}

// TestFence checks that a placed copy holds the data and that the byte
// just past it (atEnd) or just before it faults.
func TestFence(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5}
	for _, atEnd := range []bool{true, false} {
		f := NewFence(t, atEnd)
		b := f.Place(data)
		if string(b) != string(data) {
			t.Errorf("atEnd %v: copy %v, want %v", atEnd, b, data)
		}
		first := unsafe.Pointer(unsafe.SliceData(b))
		outside := unsafe.Add(first, len(b))
		inside := unsafe.Add(first, len(b)-1)
		if !atEnd {
			outside, inside = unsafe.Add(first, -1), first
		}
		if !faults(outside) {
			t.Errorf("atEnd %v: the byte next to the copy is readable", atEnd)
		}
		if faults(inside) {
			t.Errorf("atEnd %v: the copy's edge byte faults", atEnd)
		}
		if got := f.Place(nil); len(got) != 0 {
			t.Errorf("Place(nil) = %v", got)
		}
		if bins := f.PlaceEach([][]byte{data, nil}); len(bins) != 2 || string(bins[0]) != string(data) || bins[1] != nil {
			t.Errorf("PlaceEach: %v", bins)
		}
		f.Free()
	}
}
