package jit

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Kernel is a compiled plan, ready to Run. It is safe for concurrent use.
//
// A Kernel does not own machine code: it names cache entries (one per
// sub-plan of its call schedule) and takes a reference on them for the
// duration of each Run. When the cache has evicted an entry, the next Run
// compiles it again, so a Kernel stays valid however long it is kept.
type Kernel struct {
	pl    *plan.Plan
	isa   ISA
	units []*unit
	dec   *decomposition

	srcBytes, dstBytes int64
	binBytes           []int64
	// inPlace[i]: binary operand i may be the dst buffer itself (see
	// InPlace).
	inPlace []bool
}

// unit is one sub-plan of a Kernel and the cache entry last seen for it.
type unit struct {
	pl    *plan.Plan
	hints kernelconf.Hints // the runtime's hints to the emitter
	key   string
	e     atomic.Pointer[entry]
}

// acquire returns the unit's entry with a reference held, re-compiling
// through the cache when the entry it knew was evicted.
func (u *unit) acquire(isa ISA) (*entry, error) {
	if e := u.e.Load(); e != nil && e.tryAcquire() {
		return e, nil
	}
	e, _, err := kernels.acquire(u.pl, u.hints, u.key, isa)
	if err != nil {
		return nil, err
	}
	u.e.Store(e)
	return e, nil
}

// Compile returns a Kernel for pl, compiled for the effective ISA. The
// plan is validated and copied (the caller may change pl afterwards); the
// copy's N and Outputs are recomputed from its loops.
// Machine code comes from the kernel cache or is emitted and mapped now;
// when the JIT cannot serve a sub-plan (no JIT ISA, the emitter does not
// cover it, executable memory refused) that sub-plan runs in the
// interpreter and Why says so. A plan the emitter refuses only for its
// post-ops still gets machine code for its reduction: the results go to
// scratch and a separate pass applies the post-ops (machine code where
// the emitter covers that pass, else the interpreter).
// Errors: an invalid plan, or an emitter failure other than
// Unimplemented.
func Compile(pl *plan.Plan) (*Kernel, error) {
	if pl == nil {
		return nil, status.Errorf(status.InvalidArguments, "jit: Compile of a nil plan")
	}
	if err := pl.Validate(); err != nil {
		return nil, err
	}
	var t0 time.Time
	if verboseLevel() > 0 {
		t0 = time.Now()
	}
	k := &Kernel{pl: pl.Clone(), isa: EffectiveISA()}
	// The schedule is cut by N and Outputs: take them from the loops, not
	// from the caller.
	if err := k.pl.SetCounts(); err != nil {
		return nil, err
	}
	var err error
	if k.srcBytes, err = k.pl.SrcBytes(); err != nil {
		return nil, err
	}
	if k.dstBytes, err = k.pl.DstBytes(); err != nil {
		return nil, err
	}
	for i := range k.pl.BinaryCount() {
		b, err := k.pl.BinBytes(i)
		if err != nil {
			return nil, err
		}
		k.binBytes = append(k.binBytes, b)
		k.inPlace = append(k.inPlace, k.pl.DstOperand(i))
	}
	if k.dec, err = decompose(k.pl, k.isa); err != nil {
		return nil, err
	}
	hits := 0
	for i, sub := range k.dec.plans {
		u := &unit{pl: sub, hints: k.dec.hints[i], key: k.dec.keys[i]}
		e, hit, err := kernels.acquire(sub, u.hints, u.key, k.isa)
		if err != nil {
			return nil, err
		}
		u.e.Store(e)
		e.release() // the cache keeps it; Run takes its own references
		if hit {
			hits++
		}
		if verboseLevel() > 1 {
			state := "miss"
			if hit {
				state = "hit"
			}
			line := "gdnn_verbose,compile_sub,cpu,reduction," + e.impl + "," + sub.String() + u.hints.String() +
				",code:" + itoa(int64(e.code.Len())) + "B cache:" + state
			if e.conf != "" {
				line += ",conf:" + e.conf
			}
			if e.why != "" {
				line += ",fallback: " + e.why
			}
			verboseln(line)
		}
		k.units = append(k.units, u)
	}
	if verboseLevel() > 0 {
		verboseln(compileLine(k.Impl(), k.pl.String(), k.schedule(), hits == len(k.units), time.Since(t0), k.Why()))
	}
	return k, nil
}

// Plan returns a copy of the plan the kernel runs.
func (k *Kernel) Plan() *plan.Plan {
	if k == nil {
		return nil
	}
	return k.pl.Clone()
}

// ISA returns the ISA the kernel was compiled for (None: interpreter, or
// a nil Kernel).
func (k *Kernel) ISA() ISA {
	if k == nil {
		return None
	}
	return k.isa
}

// Impl names the implementation: "jit:avx512", "jit:avx2" or "jit:neon"
// when machine code runs every call, "interp" when the interpreter runs
// any of them (Why says which and why). The one exception is a post-op
// pass: its interpreted calls only apply post-ops to results the machine
// code computed, so they leave Impl naming the JIT (Why still says so).
func (k *Kernel) Impl() string {
	if k == nil {
		return ""
	}
	impl := ""
	for i, u := range k.units {
		e := u.e.Load()
		if k.dec.post[i] && e != nil && e.code == nil {
			continue
		}
		if e == nil || e.code == nil {
			return "interp"
		}
		impl = e.impl
	}
	if impl == "" { // no calls at all (an empty dst): nothing runs
		if k.isa == None {
			return "interp"
		}
		return "jit:" + k.isa.String()
	}
	return impl
}

// Why says why the interpreter runs (part of) the kernel, or "".
func (k *Kernel) Why() string {
	if k == nil {
		return ""
	}
	var whys []string
	for i, u := range k.units {
		e := u.e.Load()
		if e == nil || e.why == "" {
			continue
		}
		w := e.why
		if k.dec.post[i] {
			w = "post-op pass runs on the interpreter, sub-plan " + itoa(int64(i)) + " (" + u.pl.String() + "): " + w
		} else if len(k.units) > 1 {
			w = "sub-plan " + itoa(int64(i)) + " (" + u.pl.String() + "): " + w
		}
		whys = append(whys, w)
	}
	return strings.Join(whys, "; ")
}

// schedule describes the call schedule for verbose lines.
func (k *Kernel) schedule() string {
	calls := int64(0)
	for i := range k.dec.phases {
		calls += k.dec.phases[i].calls()
	}
	split := k.dec.split
	if k.dec.postpass {
		split += "+postpass"
	}
	if k.dec.lse {
		split += "+lse"
	}
	return "split:" + split + " calls:" + itoa(calls) + " phases:" + itoa(int64(len(k.dec.phases)))
}
