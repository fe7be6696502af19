package execmem

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// supported reports whether this platform maps code (else New must say
// Unimplemented).
func supported() bool {
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "freebsd/amd64", "windows/amd64":
		return true
	}
	return false
}

// stepCall is the system call a fail-hook step stands for on this OS,
// which New's error names.
func stepCall(op string) string {
	if runtime.GOOS == "windows" {
		return map[string]string{"mmap": "VirtualAlloc", "mprotect": "VirtualProtect"}[op]
	}
	return op
}

// writeFaults reports whether storing b at p faults. b is the byte that
// is there, so a store that lands changes nothing the test runs.
func writeFaults(p unsafe.Pointer, b byte) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	*(*byte)(p) = b
	return false
}

// storeKernel returns a hand-assembled kernel that follows the plan ABI:
// it loads Args.Dst, stores 42 to dst[0], copies Args.Count to dst[1] and
// writes 7 into Args.Count (a store through the argument pointer itself).
func storeKernel(t *testing.T) []byte {
	switch runtime.GOARCH {
	case "amd64":
		return []byte{
			0x48, 0x8b, 0x47, 0x08, // MOVQ 8(DI), AX      (Args.Dst)
			0x48, 0xc7, 0x00, 0x2a, 0x00, 0x00, 0x00, // MOVQ $42, (AX)
			0x48, 0x8b, 0x4f, 0x10, // MOVQ 16(DI), CX     (Args.Count)
			0x48, 0x89, 0x48, 0x08, // MOVQ CX, 8(AX)
			0x48, 0xc7, 0x47, 0x10, 0x07, 0x00, 0x00, 0x00, // MOVQ $7, 16(DI)
			0xc5, 0xf8, 0x77, // VZEROUPPER
			0xc3, // RET
		}
	case "arm64":
		words := []uint32{
			0xf9400401, // LDR X1, [X0, #8]    (Args.Dst)
			0xd2800542, // MOVZ X2, #42
			0xf9000022, // STR X2, [X1]
			0xf9400803, // LDR X3, [X0, #16]   (Args.Count)
			0xf9000423, // STR X3, [X1, #8]
			0xd28000e4, // MOVZ X4, #7
			0xf9000804, // STR X4, [X0, #16]
			0xd65f03c0, // RET
		}
		b := make([]byte, 0, 4*len(words))
		for _, w := range words {
			b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
		}
		return b
	}
	return []byte{0}
}

// sink keeps test buffers on the heap: the kernel sees their addresses as
// uintptrs, which would go stale if a stack holding them moved.
var (
	sinkMu sync.Mutex
	sink   []*[2]int64
)

func heapPair() *[2]int64 {
	p := new([2]int64)
	sinkMu.Lock()
	sink = append(sink, p)
	sinkMu.Unlock()
	return p
}

func TestArgsLayoutMatchesABI(t *testing.T) {
	var a plan.Args
	var la plan.LongArgs
	var na plan.NormArgs
	checks := []struct {
		name      string
		got, want uintptr
	}{
		{"Src", unsafe.Offsetof(a.Src), plan.ArgSrc},
		{"Dst", unsafe.Offsetof(a.Dst), plan.ArgDst},
		{"Count", unsafe.Offsetof(a.Count), plan.ArgCount},
		{"Bins", unsafe.Offsetof(a.Bins), plan.ArgBins},
		{"Bins[1]-Bins[0]", unsafe.Sizeof(a.Bins[0]), 8},
		{"sizeof(Args)", unsafe.Sizeof(a), plan.ArgBins + 8*plan.MaxBinary},
		{"LongArgs.Totals", unsafe.Offsetof(la.Totals), plan.ArgTotals},
		{"sizeof(LongArgs)", unsafe.Sizeof(la), plan.ArgTotals + 4*plan.TotalsLen},
		{"NormArgs.Eps", unsafe.Offsetof(na.Eps), plan.ArgEps},
		{"NormArgs.Stage", unsafe.Offsetof(na.Stage), plan.ArgStage},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("plan.Args %s: offset/size %d, ABI says %d", c.name, c.got, c.want)
		}
	}
}

func TestCallRunsKernel(t *testing.T) {
	code := storeKernel(t)
	c, err := New(code)
	if !supported() {
		if !errors.Is(err, status.Unimplemented) {
			t.Fatalf("New on %s/%s: err %v, want Unimplemented", runtime.GOOS, runtime.GOARCH, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer c.Release()
	// New copies: scribbling over the caller's slice must not change the code.
	for i := range code {
		code[i] = 0
	}
	if c.Len() != len(storeKernel(t)) {
		t.Errorf("Len = %d, want %d", c.Len(), len(storeKernel(t)))
	}
	for _, count := range []int64{0, 5, -3, 1 << 40} {
		dst := heapPair()
		args := plan.Args{Dst: uintptr(unsafe.Pointer(dst)), Count: count}
		c.Call(unsafe.Pointer(&args))
		runtime.KeepAlive(dst)
		if dst[0] != 42 || dst[1] != count || args.Count != 7 {
			t.Errorf("count %d: dst = %v, args.Count = %d; want [42 %d], 7", count, *dst, args.Count, count)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	if !supported() {
		t.Skip("no executable memory on this platform (TestCallRunsKernel checks the error)")
	}
	c, err := New(storeKernel(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			dst := heapPair()
			for i := int64(0); i < 2000; i++ {
				if i%500 == 0 {
					runtime.GC()
				}
				args := plan.Args{Dst: uintptr(unsafe.Pointer(dst)), Count: i*8 + int64(g)}
				c.Call(unsafe.Pointer(&args))
				if dst[0] != 42 || dst[1] != i*8+int64(g) {
					errs <- fmt.Sprintf("goroutine %d call %d: dst %v", g, i, *dst)
					return
				}
			}
			runtime.KeepAlive(dst)
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestWXorXAndRelease(t *testing.T) {
	if !supported() {
		t.Skip("no executable memory on this platform (TestCallRunsKernel checks the error)")
	}
	before := MappedBytes()
	var codes []*Code
	for i := 0; i < 5; i++ {
		c, err := New(storeKernel(t))
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, c)
	}
	page := int64(os.Getpagesize())
	if got := MappedBytes() - before; got != 5*page {
		t.Errorf("MappedBytes grew by %d, want %d (5 pages)", got, 5*page)
	}
	first := storeKernel(t)[0]
	for i, c := range codes {
		if !writeFaults(c.entry, first) {
			t.Errorf("code %d at %p: a store to it did not fault (writable code memory)", i, c.entry)
		}
	}
	checkExecutable(t, codes)
	addrs := make([]uintptr, len(codes))
	for i, c := range codes {
		addrs[i] = uintptr(c.entry)
		if err := c.Release(); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if err := c.Release(); err != nil {
			t.Fatalf("second Release: %v", err)
		}
	}
	if got := MappedBytes(); got != before {
		t.Errorf("MappedBytes after Release = %d, want %d", got, before)
	}
	checkReleased(t, addrs)
	// A Call after Release runs nothing and does not crash.
	dst := heapPair()
	args := plan.Args{Dst: uintptr(unsafe.Pointer(dst)), Count: 3}
	if codes[0].Call(unsafe.Pointer(&args)) {
		t.Error("Call after Release reported that it ran")
	}
	runtime.KeepAlive(dst)
	if dst[0] != 0 || args.Count != 3 {
		t.Errorf("Call after Release ran: dst %v, Count %d", *dst, args.Count)
	}
	var nilCode *Code
	if nilCode.Call(unsafe.Pointer(&args)) || nilCode.Len() != 0 || nilCode.Release() != nil {
		t.Error("nil *Code: Call/Len/Release not inert")
	}
}

func TestFailHook(t *testing.T) {
	if !supported() {
		t.Skip("no executable memory on this platform (TestCallRunsKernel checks the error)")
	}
	for _, tc := range []struct {
		op   string
		want status.Status
	}{
		{"mmap", status.OutOfMemory},
		{"mprotect", status.RuntimeError},
	} {
		t.Run(tc.op, func(t *testing.T) {
			before := MappedBytes()
			var asked []string
			restore := SetFailHook(func(op string) error {
				asked = append(asked, op)
				if op == tc.op {
					return errors.New("refused by test hook")
				}
				return nil
			})
			c, err := New(storeKernel(t))
			restore()
			if c != nil || !errors.Is(err, tc.want) {
				t.Fatalf("New with %s refused: code %v, err %v; want nil, %v", tc.op, c, err, tc.want)
			}
			if !strings.Contains(err.Error(), stepCall(tc.op)) || !strings.Contains(err.Error(), "refused by test hook") {
				t.Errorf("error %q does not name the step and the cause", err)
			}
			if asked[len(asked)-1] != tc.op {
				t.Errorf("hook asked %v, want the last question to be %q", asked, tc.op)
			}
			if got := MappedBytes(); got != before {
				t.Errorf("MappedBytes %d after failed New, want %d (mapping leaked)", got, before)
			}
			// The hook is gone again: New works.
			c, err = New(storeKernel(t))
			if err != nil {
				t.Fatalf("New after restore: %v", err)
			}
			c.Release()
		})
	}
}

func TestSetFailHookRestoresPrevious(t *testing.T) {
	outer := errors.New("outer")
	r1 := SetFailHook(func(string) error { return outer })
	r2 := SetFailHook(nil)
	if injected("mmap") != nil {
		t.Error("nil hook still injects")
	}
	r2()
	if injected("mmap") != outer {
		t.Error("restore did not bring back the outer hook")
	}
	r1()
	if injected("mmap") != nil {
		t.Error("restore did not remove the outer hook")
	}
}

func TestNewEmpty(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "0 bytes") {
		t.Fatalf("New(nil): %v, want InvalidArguments naming 0 bytes", err)
	}
}

// faultKernel returns a kernel that loads from an unmapped address.
func faultKernel() []byte {
	switch runtime.GOARCH {
	case "amd64":
		return []byte{
			0x48, 0xb8, 0, 0, 0, 0, 0, 0x10, 0, 0, // MOVQ $0x100000000000, AX
			0x48, 0x8b, 0x00, // MOVQ (AX), AX
			0xc5, 0xf8, 0x77, 0xc3, // VZEROUPPER; RET
		}
	case "arm64":
		var b []byte
		for _, w := range []uint32{0xd2c20001, 0xf9400022, 0xd65f03c0} { // MOVZ X1, #0x1000, LSL #32; LDR X2, [X1]; RET
			b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
		}
		return b
	}
	return []byte{0}
}

// callRecovering calls c with SetPanicOnFault on, as the jit runtime
// does, and returns what it panicked with.
func callRecovering(c *Code, args unsafe.Pointer) (r any) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { r = recover() }()
	c.Call(args)
	return nil
}

// TestFaultIsAPanic calls a kernel that faults: the fault must become a
// panic on the calling goroutine, which recovers, again and again (on
// Linux and macOS the runtime's signal handling does it, on Windows
// vehHandler), and the thread then runs kernels as before.
func TestFaultIsAPanic(t *testing.T) {
	if !supported() {
		t.Skip("no executable memory on this platform (TestCallRunsKernel checks the error)")
	}
	bad, err := New(faultKernel())
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Release()
	good, err := New(storeKernel(t))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Release()
	var args plan.Args
	for i := 0; i < 3; i++ {
		r := callRecovering(bad, unsafe.Pointer(&args))
		if r == nil {
			t.Fatalf("call %d of a faulting kernel did not panic", i)
		}
		if i == 0 {
			t.Logf("panic: %v", r)
		}
		dst := heapPair()
		a := plan.Args{Dst: uintptr(unsafe.Pointer(dst)), Count: int64(i)}
		if r := callRecovering(good, unsafe.Pointer(&a)); r != nil || dst[0] != 42 || dst[1] != int64(i) {
			t.Fatalf("after fault %d: panic %v, dst %v", i, r, *dst)
		}
		runtime.KeepAlive(dst)
	}
}
