package jit

import (
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// retCode returns n bytes of machine code that returns at once (the rest
// is padding that never runs), for tests of the cache's bookkeeping.
func retCode(n int) []byte {
	var head, pad []byte
	switch runtime.GOARCH {
	case "amd64":
		head, pad = []byte{0xc5, 0xf8, 0x77, 0xc3}, []byte{0xcc} // VZEROUPPER; RET; INT3...
	case "arm64":
		head, pad = []byte{0xc0, 0x03, 0x5f, 0xd6}, []byte{0}
	default:
		head, pad = []byte{0}, []byte{0}
	}
	b := append([]byte(nil), head...)
	for len(b) < n {
		b = append(b, pad...)
	}
	return b
}

// withEmitter substitutes the emitter for the test and empties the cache
// around it, so its kernels reach no other test.
func withEmitter(t testing.TB, f func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error)) {
	freshCache(t)
	old := emitter
	emitter = f
	t.Cleanup(func() { emitter = old })
}

// withCoverage substitutes what the emitters declare they cover, for the
// test.
func withCoverage(t testing.TB, f func(ISA) kernelshape.Covers) {
	freshCache(t)
	old := coverage
	coverage = f
	t.Cleanup(func() { coverage = old })
}

// requireJIT stops a test that needs machine code on a machine without a
// JIT ISA or without executable memory (there the interpreter tests
// cover everything): it maps a kernel that returns at once, as the
// runtime would.
func requireJIT(t *testing.T) {
	if EffectiveISA() == None {
		t.Skipf("no JIT ISA here (detected %s)", DetectedISA())
	}
	c, err := execmem.New(retCode(16))
	if err != nil {
		t.Skipf("no executable memory here: %v", err)
	}
	_ = c.Release()
}

// rowPlan returns a canonical [rows, n] reduce-inner f32 plan.
func rowPlan(t *testing.T, rows, n int64) *plan.Plan {
	t.Helper()
	pl, err := mkRowPlan(rows, n)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func mkRowPlan(rows, n int64) (*plan.Plan, error) {
	return plan.Canonicalize(&plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{rows, n}, SrcStrides: []int64{n, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}})
}

func compileOK(t *testing.T, pl *plan.Plan) *Kernel {
	t.Helper()
	k, err := Compile(pl)
	if err != nil {
		t.Fatalf("Compile(%s): %v", pl, err)
	}
	return k
}

func TestCacheHitMissAndEntryBound(t *testing.T) {
	requireJIT(t)
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) { return plan.Code{Text: retCode(64)}, nil })
	prevE, prevB := SetCacheCapacity(2, 1<<30)
	defer SetCacheCapacity(prevE, prevB)
	page := int64(os.Getpagesize())
	s0, m0 := GetCacheStats(), execmem.MappedBytes()

	a := compileOK(t, rowPlan(t, 2, 3))
	if got := a.Impl(); got != "jit:"+EffectiveISA().String() {
		t.Fatalf("Impl %q, want jit:%s (why: %s)", got, EffectiveISA(), a.Why())
	}
	a2 := compileOK(t, rowPlan(t, 2, 3))
	if a2.units[0].e.Load() != a.units[0].e.Load() {
		t.Error("second Compile of the same plan did not share the cached kernel")
	}
	s := GetCacheStats()
	if s.Misses-s0.Misses != 1 || s.Hits-s0.Hits != 1 || s.Entries != 1 || s.Bytes != page {
		t.Fatalf("after A, A: %+v (start %+v), want 1 miss, 1 hit, 1 entry of %d bytes", s, s0, page)
	}
	compileOK(t, rowPlan(t, 4, 3)) // B
	compileOK(t, rowPlan(t, 2, 3)) // A again: now most recent
	compileOK(t, rowPlan(t, 8, 3)) // C evicts the least recent, B
	s = GetCacheStats()
	if s.Entries != 2 || s.Evictions-s0.Evictions != 1 || s.Bytes != 2*page {
		t.Fatalf("after A A B A C: %+v, want 2 entries, 1 eviction, %d bytes", s, 2*page)
	}
	if got := execmem.MappedBytes() - m0; got != 2*page {
		t.Errorf("executable bytes grew by %d, want %d: the evicted kernel was not unmapped", got, 2*page)
	}
	compileOK(t, rowPlan(t, 2, 3)) // A: still cached
	if d := GetCacheStats().Misses - s.Misses; d != 0 {
		t.Errorf("A missed after C: LRU order wrong")
	}
	compileOK(t, rowPlan(t, 4, 3)) // B: was evicted
	if d := GetCacheStats().Misses - s.Misses; d != 1 {
		t.Errorf("B hit after its eviction")
	}
}

// TestRunGivesASecondChance checks that a kernel run since it was last
// compiled is not the one a full cache evicts: Runs do not reorder the
// LRU list, but the entry they mark goes to the front once when it comes
// up for eviction, and the next least recent goes instead.
func TestRunGivesASecondChance(t *testing.T) {
	requireJIT(t)
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) { return plan.Code{Text: retCode(64)}, nil })
	prevE, prevB := SetCacheCapacity(2, 1<<30)
	defer SetCacheCapacity(prevE, prevB)
	a := compileOK(t, rowPlan(t, 2, 3))
	compileOK(t, rowPlan(t, 4, 3)) // B: now more recent than A
	if err := a.Run(make([]byte, 24), make([]byte, 8), nil); err != nil {
		t.Fatal(err)
	}
	s := GetCacheStats()
	compileOK(t, rowPlan(t, 8, 3)) // C: A is the least recent, but it ran
	compileOK(t, rowPlan(t, 2, 3)) // A
	if d := GetCacheStats().Misses - s.Misses; d != 1 {
		t.Errorf("C and A: %d misses, want 1 (C): the kernel that ran was evicted", d)
	}
	compileOK(t, rowPlan(t, 4, 3)) // B
	if d := GetCacheStats().Misses - s.Misses; d != 2 {
		t.Errorf("B hit: the kernel that did not run was kept")
	}
}

// TestReleasedCodeIsAnError checks that a Run whose cached code was
// unmapped under it (which only a reference-count bug could do) returns a
// RuntimeError instead of leaving dst unwritten.
func TestReleasedCodeIsAnError(t *testing.T) {
	requireJIT(t)
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) { return plan.Code{Text: retCode(64)}, nil })
	k := compileOK(t, rowPlan(t, 2, 3))
	if err := k.units[0].e.Load().code.Release(); err != nil {
		t.Fatal(err)
	}
	if err := k.Run(make([]byte, 24), make([]byte, 8), nil); !errors.Is(err, status.RuntimeError) {
		t.Errorf("Run on released code: %v, want RuntimeError", err)
	}
}

func TestCacheByteBound(t *testing.T) {
	requireJIT(t)
	page := int64(os.Getpagesize())
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) {
		return plan.Code{Text: retCode(int(page) + 1)}, nil
	}) // two pages each
	prevE, prevB := SetCacheCapacity(100, 5*page)
	defer SetCacheCapacity(prevE, prevB)
	m0 := execmem.MappedBytes()
	for i := range int64(4) {
		compileOK(t, rowPlan(t, 2+i, 5))
	}
	s := GetCacheStats()
	if s.Entries != 2 || s.Bytes != 4*page {
		t.Fatalf("4 kernels of 2 pages under a 5-page bound: %+v, want 2 entries, %d bytes", s, 4*page)
	}
	if got := execmem.MappedBytes() - m0; got != 4*page {
		t.Errorf("mapped bytes grew by %d, want %d", got, 4*page)
	}
	// Shrinking the bounds evicts at once.
	SetCacheCapacity(100, 2*page)
	if s := GetCacheStats(); s.Entries != 1 || s.Bytes != 2*page {
		t.Errorf("after shrinking to 2 pages: %+v", s)
	}
	if got := execmem.MappedBytes() - m0; got != 2*page {
		t.Errorf("mapped bytes grew by %d after shrinking, want %d", got, 2*page)
	}
}

// TestEvictionWaitsForRuns holds a kernel's entry as a Run does, evicts it,
// and checks the code stays mapped until the hold ends; the Kernel then
// compiles it again on its next Run.
func TestEvictionWaitsForRuns(t *testing.T) {
	requireJIT(t)
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) { return plan.Code{Text: retCode(16)}, nil })
	page := int64(os.Getpagesize())
	k := compileOK(t, rowPlan(t, 3, 7))
	m0 := execmem.MappedBytes()
	e, err := k.units[0].acquire(k.isa)
	if err != nil {
		t.Fatal(err)
	}
	prevE, prevB := SetCacheCapacity(0, 0) // evicts everything
	if e.freed.Load() || execmem.MappedBytes() != m0 {
		t.Fatal("kernel unmapped while a run held it")
	}
	e.release()
	if !e.freed.Load() || execmem.MappedBytes() != m0-page {
		t.Fatalf("kernel not unmapped when its last run ended (freed %v, mapped %d, was %d)", e.freed.Load(), execmem.MappedBytes(), m0)
	}
	e.release() // a stray extra release after freeing must not free twice
	if execmem.MappedBytes() != m0-page {
		t.Fatal("second release changed the mapping count")
	}
	SetCacheCapacity(prevE, prevB)
	misses := GetCacheStats().Misses
	src, dst := make([]byte, 3*7*4), make([]byte, 3*4)
	if err := k.Run(src, dst, nil); err != nil { // the RET-only code writes nothing; only the bookkeeping matters
		t.Fatal(err)
	}
	if GetCacheStats().Misses != misses+1 || k.units[0].e.Load() == e {
		t.Error("Run of an evicted kernel did not compile it again")
	}
}

// TestCacheDisabled runs with capacity 0: kernels are compiled per use and
// still give right results.
func TestCacheDisabled(t *testing.T) {
	freshCache(t)
	prevE, prevB := SetCacheCapacity(0, 0)
	defer SetCacheCapacity(prevE, prevB)
	m0 := execmem.MappedBytes()
	r := rand.New(rand.NewPCG(21, 22))
	c := spec{dims: []int64{5, 33}, reduce: []bool{false, true}, sdt: dtypes.F16, ddt: dtypes.F16}.build(t, r)
	k := c.compile(t)
	for range 3 {
		dst := c.newDst()
		if err := k.Run(c.src, dst, nil); err != nil {
			t.Fatal(err)
		}
		checkRef(t, c, dst, "cache disabled")
	}
	if s := GetCacheStats(); s.Entries != 0 || s.Bytes != 0 {
		t.Errorf("capacity 0 but the cache holds %+v", s)
	}
	if m := execmem.MappedBytes(); m != m0 {
		t.Errorf("capacity 0 leaked executable memory: %d bytes mapped, %d before", m, m0)
	}
}

// fallbackCase runs a problem and checks the interpreter produced the
// right result and Why says why.
func fallbackCase(t *testing.T, wantWhy string) {
	t.Helper()
	r := rand.New(rand.NewPCG(31, 32))
	c := spec{dims: []int64{6, 40}, reduce: []bool{false, true}, sdt: dtypes.BF16, ddt: dtypes.F32,
		post: []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}}}.build(t, r)
	k := c.compile(t)
	if k.Impl() != "interp" || !strings.Contains(k.Why(), wantWhy) {
		t.Fatalf("Impl %q Why %q, want interp because of %q", k.Impl(), k.Why(), wantWhy)
	}
	dst := c.newDst()
	if err := k.Run(c.src, dst, c.bins); err != nil {
		t.Fatal(err)
	}
	checkRef(t, c, dst, "fallback "+wantWhy)
}

func TestFallbackISACappedToNone(t *testing.T) {
	freshCache(t)
	prev := SetMaxISA(None)
	defer SetMaxISA(prev)
	if EffectiveISA() != None {
		t.Fatalf("EffectiveISA %s under cap none", EffectiveISA())
	}
	want := "ISA capped to none"
	if DetectedISA() == None {
		want = "" // nothing to cap: the reason is the missing JIT, checked below
	}
	fallbackCase(t, want)
}

func TestFallbackEmitterUnimplemented(t *testing.T) {
	requireJIT(t)
	withEmitter(t, func(pl *plan.Plan, h kernelconf.Hints, isa ISA) (plan.Code, error) {
		return plan.Code{}, status.Errorf(status.Unimplemented, "test emitter covers no plan")
	})
	fallbackCase(t, "test emitter covers no plan")
}

func TestFallbackExecMemRefused(t *testing.T) {
	requireJIT(t)
	// The substitute code would compute nothing: a right result proves it
	// never ran and the interpreter did.
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) { return plan.Code{Text: retCode(16)}, nil })
	defer execmem.SetFailHook(func(op string) error {
		if op == "mprotect" {
			return errors.New("PROT_EXEC forbidden by policy")
		}
		return nil
	})()
	fallbackCase(t, "PROT_EXEC forbidden by policy")
}

func TestEmitterErrorIsReturned(t *testing.T) {
	requireJIT(t)
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) {
		return plan.Code{}, status.Errorf(status.InvalidArguments, "test emitter rejects the plan")
	})
	_, err := Compile(rowPlan(t, 2, 2))
	if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "rejects") {
		t.Fatalf("Compile with a failing emitter: %v, want its InvalidArguments error", err)
	}
}

// faultCode returns code that loads from an unmapped address.
func faultCode() []byte {
	switch runtime.GOARCH {
	case "amd64":
		return []byte{
			0x48, 0xb8, 0, 0, 0, 0, 0, 0x10, 0, 0, // MOVQ $0x100000000000, AX
			0x48, 0x8b, 0x00, // MOVQ (AX), AX
			0xc5, 0xf8, 0x77, 0xc3, // VZEROUPPER; RET
		}
	case "arm64":
		w := []uint32{0xd2c20001, 0xf9400022, 0xd65f03c0} // MOVZ X1, #0x1000, LSL #32; LDR X2, [X1]; RET
		var b []byte
		for _, x := range w {
			b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
		}
		return b
	}
	return []byte{0}
}

// TestKernelFaultIsAnError runs code that faults, inline and on the
// worker pool: Run must return a RuntimeError and the process live on.
func TestKernelFaultIsAnError(t *testing.T) {
	requireJIT(t)
	withEmitter(t, func(*plan.Plan, kernelconf.Hints, ISA) (plan.Code, error) { return plan.Code{Text: faultCode()}, nil })
	withBudget(t, 4096)
	for _, threads := range []int{1, 2} {
		withThreads(t, threads)
		k := compileOK(t, rowPlan(t, 1000, 100)) // 400 KB: blocks on the pool when threads > 1
		err := k.Run(make([]byte, 400000), make([]byte, 4000), nil)
		if !errors.Is(err, status.RuntimeError) || !strings.Contains(err.Error(), "kernel failed") {
			t.Errorf("threads %d: faulting kernel gave %v, want RuntimeError", threads, err)
		}
	}
}
