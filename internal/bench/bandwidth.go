package bench

import (
	"cmp"
	"math/bits"
	"slices"

	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/gdnn/gdnn/internal/jit"
)

// bwProbe measures this machine's read bandwidth at a given buffer size,
// so that a problem's GB/s can be shown as a share of what reading that
// many bytes costs here. Results are cached per run in power-of-two size
// buckets.
//
// The "go" probe is a plain Go loop of 8-byte loads into eight
// independent accumulators (split across GOMAXPROCS goroutines for
// buffers of 1 MiB and more). It is an honest limit for DRAM- and
// L3-sized buffers; for cache-resident sizes vector code reads faster,
// so shares above 100% mean "faster than scalar Go can read". The "lib"
// probe times gdnn's own contiguous f32 reduction over the buffer instead:
// vector loads split across the worker threads, the same kind of probe as
// a STREAM-style read loop. "auto" (the default) uses lib when a JIT ISA is
// in force and go otherwise.
type bwProbe struct {
	mu    sync.Mutex
	cache map[int]float64
	// busy are the buckets measured under load: a problem past the caches
	// read faster than the probe there, even re-measured (checkProbe).
	busy map[int]bool
	// lib, when set, measures bytes/s for a buffer of n bytes with gdnn.
	lib  func(n int64) (float64, error)
	name string
}

func newBWProbe() *bwProbe { return &bwProbe{cache: map[int]float64{}, name: "go"} }

// bucket returns the power-of-two exponent used for n bytes (min 4 KiB,
// max 1 GiB).
func bucket(n int64) int {
	if n <= 4096 {
		return 12
	}
	b := bits.Len64(uint64(n - 1))
	if b > 30 {
		b = 30
	}
	return b
}

// readBW returns the probed read bandwidth (bytes/s) for n bytes, or 0
// if it cannot be measured.
func (p *bwProbe) readBW(n int64) float64 {
	if n <= 0 {
		return 0
	}
	b := bucket(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.cache[b]; ok {
		return v
	}
	v := p.measure(int64(1) << b)
	p.cache[b] = v
	return v
}

// measure times the probe over a buffer of size bytes.
func (p *bwProbe) measure(size int64) float64 {
	var v float64
	if p.lib != nil {
		if lv, err := p.lib(size); err == nil {
			v = lv
		}
	}
	if v == 0 {
		v = goReadBW(size)
	}
	return v
}

// points lists what the probe measured, by size.
func (p *bwProbe) points() []probePoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []probePoint
	for b, v := range p.cache {
		if v > 0 {
			out = append(out, probePoint{int64(1) << b, v / 1e9, p.busy[b]})
		}
	}
	slices.SortFunc(out, func(a, b probePoint) int { return cmp.Compare(a.bytes, b.bytes) })
	return out
}

// goReadBW times a Go read loop over a size-byte buffer: the best of
// several passes within ~30 ms.
func goReadBW(size int64) float64 {
	words := make([]uint64, size/8)
	for i := range words {
		words[i] = uint64(i)
	}
	workers := 1
	if size >= 1<<20 {
		workers = runtime.GOMAXPROCS(0)
	}
	best := 0.0
	deadline := time.Now().Add(30 * time.Millisecond)
	for rep := 0; rep < 3 || (time.Now().Before(deadline) && rep < 1000); rep++ {
		passes := 1
		if size < 1<<20 {
			passes = int((1 << 20) / size) // short buffers: enough passes for a stable time
		}
		t := time.Now()
		var wg sync.WaitGroup
		chunk := len(words) / workers
		for w := 0; w < workers; w++ {
			part := words[w*chunk : (w+1)*chunk]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < passes; k++ {
					sink(sumWords(part))
				}
			}()
		}
		wg.Wait()
		d := time.Since(t).Seconds()
		if d > 0 {
			if v := float64(int64(chunk*workers)*8*int64(passes)) / d; v > best {
				best = v
			}
		}
	}
	return best
}

// sink takes a sum so that the compiler cannot drop the reads behind it:
// a call it may not inline keeps its argument, and sink keeps nothing, so
// the goroutines that call it at once share no memory.
//
//go:noinline
func sink(uint64) {}

// sumWords reads every word with eight independent accumulators.
func sumWords(w []uint64) uint64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 uint64
	n := len(w) &^ 7
	if n > 0 {
		p := unsafe.Pointer(&w[0])
		for i := 0; i < n; i += 8 {
			q := (*[8]uint64)(unsafe.Add(p, i*8))
			a0 += q[0]
			a1 += q[1]
			a2 += q[2]
			a3 += q[3]
			a4 += q[4]
			a5 += q[5]
			a6 += q[6]
			a7 += q[7]
		}
	}
	for _, v := range w[n:] {
		a0 += v
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}

// readBW is the probed read bandwidth for n bytes with the probe chosen
// by --bw-probe.
func (r *runner) readBW(n int64) float64 {
	want := r.g.bwProbe
	if want == "auto" {
		want = "go"
		if jit.EffectiveISA() != jit.None {
			want = "lib"
		}
	}
	if r.bw.name != want {
		// A changed probe (or ISA cap under auto) starts a fresh cache.
		r.bw = newBWProbe()
		if want == "lib" {
			r.bw.lib, r.bw.name = libReadBW, "lib"
		}
	}
	return r.bw.readBW(n)
}
