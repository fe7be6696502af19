package reduce

import (
	"sync"

	"github.com/gdnn/gdnn/internal/jit"
)

// DefaultCacheCapacity is how many compiled problems the cache keeps by
// default. An entry is a jit.Kernel (a few hundred bytes of plan); its
// machine code lives in jit's own bounded kernel cache, which problems
// that canonicalise alike share.
const DefaultCacheCapacity = 4096

// compiled is one cache entry: a kernel.
type compiled struct {
	k *jit.Kernel
}

// cache maps problems to kernels. Lookups take the read lock only, so
// calls from many goroutines run side by side; a miss compiles outside
// any lock. When the cache is full, a new entry replaces one chosen at
// random (Go's map order): no bookkeeping on the hit path, and a working
// set larger than the capacity still finds most of its entries.
//
// ArgMax's and ArgMin's kernels are kept apart, in arg, under the same
// bound; when arg is full, a call past it compiles its own kernel. A
// kernel there owns its machine code, apart from jit's kernel cache, and
// unmaps it when the garbage collector frees the kernel. Both maps are
// typed: a key boxed into an interface, as a sync.Map's is, would cost
// an allocation and a hash through its type on every call.
var cache = struct {
	mu  sync.RWMutex
	m   map[key]*compiled
	arg map[argKey]*jit.ArgKernel
	cap int
}{m: map[key]*compiled{}, arg: map[argKey]*jit.ArgKernel{}, cap: DefaultCacheCapacity}

// SetCacheCapacity bounds the cache to n problems (negative counts as 0;
// 0 compiles every call) and returns the previous bound. Entries beyond
// the new bound are dropped at once. ArgMax's and ArgMin's kernels are
// cached apart, under the same bound.
func SetCacheCapacity(n int) int {
	n = max(n, 0)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	prev := cache.cap
	cache.cap = n
	for k := range cache.m {
		if len(cache.m) <= n {
			break
		}
		delete(cache.m, k)
	}
	for k := range cache.arg {
		if len(cache.arg) <= n {
			break
		}
		delete(cache.arg, k)
	}
	return prev
}

// keepArgKernel caches kern under ak if the cache has room, and only if
// no cap was set since the key's ISA was read (stamp): the compile may
// have used another (jit.ISAStamp). It holds cache.mu, as
// SetCacheCapacity does while it trims, so that stores racing each other
// or a trim never leave more kernels than the bound.
func keepArgKernel(ak argKey, kern *jit.ArgKernel, stamp int64) {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if _, ok := cache.arg[ak]; !ok && len(cache.arg) < cache.cap && jit.CapStamp() == stamp {
		cache.arg[ak] = kern
	}
}

// CacheLen returns how many problems the cache holds.
func CacheLen() int {
	cache.mu.RLock()
	defer cache.mu.RUnlock()
	return len(cache.m)
}

// lookup returns the kernel for k, compiling and caching it on a miss.
// When two goroutines miss on one key, both compile (jit's kernel cache
// shares the machine code) and the first to insert wins.
func lookup(k *key) (*compiled, error) {
	cache.mu.RLock()
	c := cache.m[*k]
	cache.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	c, err := k.compile()
	if err != nil {
		return nil, err
	}
	if c.k.ISA() != jit.ISA(k.isa) {
		// jit.SetMaxISA ran between the key and the compile: the kernel
		// serves this call, but cached under k every later call under
		// k's cap would run another ISA's code.
		return c, nil
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if other := cache.m[*k]; other != nil {
		return other, nil
	}
	if cache.cap == 0 {
		return c, nil
	}
	for victim := range cache.m {
		if len(cache.m) < cache.cap {
			break
		}
		delete(cache.m, victim)
	}
	cache.m[*k] = c
	return c, nil
}
