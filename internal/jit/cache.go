package jit

import (
	"container/list"
	"os"
	"sync"
	"sync/atomic"

	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/plan"
)

// Default kernel cache bounds. A kernel is one to a few KiB of code on
// its own page, so 1024 entries is about 4 MiB of executable memory;
// the byte bound matters only when kernels grow large.
const (
	DefaultCacheEntries = 1024
	DefaultCacheBytes   = 32 << 20
)

// cacheKey identifies a compiled kernel: the plan's key and the ISA it was
// compiled for (a cap gets its own kernels; those of other ISAs stay
// valid for plans compiled before the cap changed).
type cacheKey struct {
	plan string
	isa  ISA
}

// evictedBit marks an entry's state once it has left the cache; the low
// bits count the runs holding it.
const evictedBit = int64(1) << 62

// entry is one compiled kernel: mapped code, or the interpreter with the
// reason why. Its lifetime is reference-counted instead of finalized: the
// cache's ownership is the evictedBit being clear, every Run holds a
// reference for its duration, and the code is unmapped by whoever brings
// the state to exactly evictedBit (evicted and nobody running). A
// finalizer would tie unmapping to GC timing; counting frees it
// deterministically and lets tests observe it.
type entry struct {
	key   cacheKey
	pl    *plan.Plan    // the plan the code was compiled from
	code  *execmem.Code // nil: the interpreter runs pl
	long  bool          // the code keeps running totals: call it with a LongArgs
	impl  string        // "jit:avx512", ..., or "interp"
	why   string        // why the interpreter, else ""
	conf  string        // the emitter's configuration of the code (Conf.String), else ""
	bytes int64         // executable bytes accounted (whole pages)
	state atomic.Int64  // runs holding the entry | evictedBit
	used  atomic.Bool   // run since it last reached the back of the LRU list (see trimLocked)
	freed atomic.Bool   // code released (free is idempotent)
	elem  *list.Element // position in the LRU list; guarded by cache.mu
}

// tryAcquire takes a reference unless the entry has been evicted, and
// marks the entry used. Runs do not take the cache's lock, so they do not
// move the entry in the LRU list: the mark gives it a second chance when
// it comes up for eviction. It is written only when clear, so that runs
// of one kernel on many threads share its cache line read-only.
func (e *entry) tryAcquire() bool {
	if e.state.Add(1)&evictedBit != 0 {
		e.release()
		return false
	}
	if !e.used.Load() {
		e.used.Store(true)
	}
	return true
}

// release drops a reference; the last one out of an evicted entry frees it.
func (e *entry) release() {
	if e.state.Add(-1) == evictedBit {
		e.free()
	}
}

// evict marks the entry as out of the cache; it is freed now if nobody
// runs it, else by the last release.
func (e *entry) evict() {
	if e.state.Add(evictedBit) == evictedBit {
		e.free()
	}
}

// free unmaps the code once. Several goroutines may see the state reach
// evictedBit (a failed tryAcquire bumps and drops it), hence the flag.
func (e *entry) free() {
	if e.freed.CompareAndSwap(false, true) && e.code != nil {
		_ = e.code.Release() // munmap of a mapping we own fails only on a kernel bug; nothing to undo
	}
}

// cache is the bounded LRU kernel cache.
type cache struct {
	mu         sync.Mutex
	m          map[cacheKey]*entry
	lru        list.List // front: most recently used
	maxEntries int
	maxBytes   int64
	bytes      int64
	stats      CacheStats
}

var kernels = &cache{m: map[cacheKey]*entry{}, maxEntries: DefaultCacheEntries, maxBytes: DefaultCacheBytes}

// CacheStats describes the kernel cache.
type CacheStats struct {
	Entries   int   // kernels cached now
	Bytes     int64 // executable bytes they map (whole pages)
	Hits      int64 // lookups that found a kernel
	Misses    int64 // lookups that compiled one
	Evictions int64 // kernels pushed out by the bounds
}

// GetCacheStats returns a snapshot of the kernel cache's counters.
func GetCacheStats() CacheStats {
	kernels.mu.Lock()
	defer kernels.mu.Unlock()
	s := kernels.stats
	s.Entries = len(kernels.m)
	s.Bytes = kernels.bytes
	return s
}

// SetCacheCapacity bounds the kernel cache to at most entries kernels and
// bytes of executable memory (negative values count as 0) and returns the
// previous bounds. Kernels beyond the new bounds are evicted at once,
// least recently compiled first, except that a kernel run since it last
// came up for eviction is kept once more; evicted code is unmapped as
// soon as no Run uses it. A capacity of 0 disables caching: every
// compile maps fresh code, and a Kernel whose code was evicted compiles
// it again when it next runs.
func SetCacheCapacity(entries int, bytes int64) (prevEntries int, prevBytes int64) {
	entries, bytes = max(entries, 0), max(bytes, 0)
	c := kernels
	c.mu.Lock()
	prevEntries, prevBytes = c.maxEntries, c.maxBytes
	c.maxEntries, c.maxBytes = entries, bytes
	victims := c.trimLocked()
	c.mu.Unlock()
	for _, v := range victims {
		v.evict()
	}
	return prevEntries, prevBytes
}

// trimLocked removes least recently used entries until the bounds hold
// and returns them; the caller evicts them after unlocking (eviction may
// unmap, which is a system call). An entry run since it was last at the
// back (entry.used) goes to the front once instead, at most once per
// entry per trim, so that the loop ends while Runs keep marking entries.
func (c *cache) trimLocked() []*entry {
	var victims []*entry
	chances := c.lru.Len()
	for c.lru.Len() > 0 && (c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes) {
		if back := c.lru.Back().Value.(*entry); chances > 0 && back.used.Swap(false) {
			chances--
			c.lru.MoveToFront(back.elem)
			continue
		}
		e := c.lru.Remove(c.lru.Back()).(*entry)
		delete(c.m, e.key)
		c.bytes -= e.bytes
		c.stats.Evictions++
		victims = append(victims, e)
	}
	return victims
}

// acquire returns the cached entry for (pl, isa) with a reference held for
// the caller, building it on a miss. The build runs outside the lock so
// that compiles of different plans overlap; when two goroutines build the
// same key, the first insert wins and the loser's copy is freed. hit
// reports whether the entry was found.
func (c *cache) acquire(pl *plan.Plan, h kernelconf.Hints, key string, isa ISA) (e *entry, hit bool, err error) {
	k := cacheKey{key, isa}
	c.mu.Lock()
	if e := c.m[k]; e != nil {
		e.state.Add(1) // cached entries are never evicted while c.mu is held
		c.lru.MoveToFront(e.elem)
		c.stats.Hits++
		c.mu.Unlock()
		return e, true, nil
	}
	c.stats.Misses++
	c.mu.Unlock()

	e, err = build(pl, h, isa)
	if err != nil {
		return nil, false, err
	}
	e.key = k
	e.state.Store(1) // the caller's reference

	c.mu.Lock()
	if other := c.m[k]; other != nil {
		other.state.Add(1)
		c.lru.MoveToFront(other.elem)
		c.mu.Unlock()
		e.free() // never shared: nobody else can hold it
		return other, false, nil
	}
	c.m[k] = e
	e.elem = c.lru.PushFront(e)
	c.bytes += e.bytes
	victims := c.trimLocked() // may include e itself under tiny bounds: the caller's reference keeps it alive
	c.mu.Unlock()
	for _, v := range victims {
		v.evict()
	}
	return e, false, nil
}

// pageBytes rounds n up to whole pages, the unit executable memory is
// mapped in.
func pageBytes(n int) int64 {
	p := os.Getpagesize()
	return int64((n + p - 1) / p * p)
}
