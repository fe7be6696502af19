package kernelshape

import (
	"testing"
	"time"
)

// TestNativeRunHuge: NativeRun ends for any chain (r*r must not overflow).
func TestNativeRunHuge(t *testing.T) {
	done := make(chan int64, 1)
	go func() { done <- NativeRun(NativeKind{Float: true, Op: NativeAdd, Bytes: 8}, 1<<62+1) }()
	select {
	case r := <-done:
		if r <= 0 {
			t.Fatalf("NativeRun = %d", r)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("NativeRun(1<<62+1) does not return: r*r overflows")
	}
}
