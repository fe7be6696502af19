package jit

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// withShare sets ShareBytes to n (0: the default) until the test ends.
func withShare(t testing.TB, n int64) {
	prev := SetShareBytes(n)
	t.Cleanup(func() { SetShareBytes(prev) })
}

// TestShareThreads: a run takes a thread for each whole ShareBytes it
// reads, at least one and at most the threads it may use.
func TestShareThreads(t *testing.T) {
	withShare(t, 100)
	for _, c := range []struct {
		src           int64
		threads, want int
	}{{0, 4, 1}, {99, 4, 1}, {199, 4, 1}, {200, 4, 2}, {399, 4, 3}, {1000, 4, 4}, {1 << 40, 4, 4}, {1000, 1, 1}, {1000, 0, 1}} {
		if got := shareThreads(c.src, c.threads); got != c.want {
			t.Errorf("%d bytes on up to %d threads: %d threads, want %d", c.src, c.threads, got, c.want)
		}
	}
	if prev := SetShareBytes(0); prev != 100 {
		t.Errorf("SetShareBytes(0) returned %d, want the 100 set before", prev)
	}
	def := ShareBytes()
	if def < minShare || def > maxShare {
		t.Errorf("default ShareBytes %d is outside [%d, %d]", def, minShare, maxShare)
	}
	switch l2 := cpuFeatures().l2; {
	case l2 > 0 && def != min(max(l2*3/8, minShare), maxShare):
		t.Errorf("default ShareBytes %d for an L2 of %d bytes, want 3/8 of it within [%d, %d]", def, l2, minShare, maxShare)
	case l2 == 0 && def != unknownShare:
		t.Errorf("default ShareBytes %d with no L2 size known, want %d", def, unknownShare)
	}
	t.Logf("L2 %d bytes (0: unknown), default ShareBytes %d", cpuFeatures().l2, def)
}

// TestSmallRunsOnOneThread: with the default ShareBytes S, a row sum
// that reads just under 2S, and an ArgMax whose src and rows weigh just
// under 2S (argWork), run on the calling goroutine alone, never offered
// to the pool; the same one row longer are offered to it (a parked
// worker may still come too late to take part), and so is an ArgMax of
// short rows that reads under 2S but has many of them. The results are
// the one-thread results.
func TestSmallRunsOnOneThread(t *testing.T) {
	withShare(t, 0)
	share := ShareBytes()
	offered := func(t *testing.T, run func() error) bool {
		t.Helper()
		before := offers.Load()
		if err := run(); err != nil {
			t.Fatal(err)
		}
		return offers.Load() != before
	}
	r := rand.New(rand.NewPCG(7, 8))
	const w = 4096
	// The fewest rows that weigh 2S.
	sumRows, argRows := (2*share+4*w-1)/(4*w), (2*share+4*w+argRowBytes-1)/(4*w+argRowBytes)
	for _, c := range []struct {
		rows   int64
		shared bool
	}{{sumRows - 1, false}, {sumRows, true}} {
		t.Run("sum/"+strconv.FormatInt(c.rows, 10)+" rows", func(t *testing.T) {
			tc := spec{dims: []int64{c.rows, w}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32}.build(t, r)
			k := tc.compile(t)
			got, want := tc.newDst(), tc.newDst()
			withThreads(t, 2)
			if o := offered(t, func() error { return k.Run(tc.src, got, nil) }); o != c.shared {
				t.Errorf("%d bytes offered to the pool: %v, want %v (ShareBytes %d; schedule %s)", 4*c.rows*w, o, c.shared, share, k.schedule())
			}
			withThreads(t, 1)
			if err := k.Run(tc.src, want, nil); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Error("two threads' sums differ from one thread's")
			}
			checkRef(t, tc, got, "sum")
		})
	}
	for _, c := range []struct {
		rows, w int64
		shared  bool
	}{{argRows - 1, w, false}, {argRows, w, true}, {2 * share / 1024, 256, true}} {
		t.Run("argmax/"+strconv.FormatInt(c.rows, 10)+"x"+strconv.FormatInt(c.w, 10), func(t *testing.T) {
			dims := []int64{c.rows, c.w}
			pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: dims, Axis: 1,
				SrcStrides: denseStrides(dims), DstStrides: []int64{1, 0}})
			if err != nil {
				t.Fatal(err)
			}
			k, err := CompileArg(pl)
			if err != nil {
				t.Fatal(err)
			}
			src := make([]byte, 4*c.rows*c.w)
			for i := range src {
				src[i] = byte(r.IntN(64)) // small positive floats and zeros, no NaN
			}
			got, want := make([]byte, 8*c.rows), make([]byte, 8*c.rows)
			withThreads(t, 2)
			if o := offered(t, func() error { return k.Run(src, got) }); o != c.shared {
				t.Errorf("%d bytes in %d rows offered to the pool: %v, want %v (ShareBytes %d)", len(src), c.rows, o, c.shared, share)
			}
			withThreads(t, 1)
			if err := k.Run(src, want); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Error("two threads' indices differ from one thread's")
			}
		})
	}
}
