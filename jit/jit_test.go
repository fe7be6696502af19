package jit

import (
	"testing"

	ijit "github.com/gdnn/gdnn/internal/jit"
)

// The settings are the runtime's own: a value set here is the one the
// runtime reads, and each setter returns the previous value.
func TestSettingsReachTheRuntime(t *testing.T) {
	prevISA := SetMaxISA(None)
	if ijit.EffectiveISA() != ijit.None || EffectiveISA() != None {
		t.Errorf("cap none: runtime uses %v", ijit.EffectiveISA())
	}
	if back := SetMaxISA(prevISA); back != None {
		t.Errorf("SetMaxISA returned %v, want none", back)
	}
	if DetectedISA() != ISA(ijit.DetectedISA()) {
		t.Errorf("DetectedISA %v, runtime %v", DetectedISA(), ijit.DetectedISA())
	}

	prevThreads := SetThreads(3)
	if ijit.Threads() != 3 || Threads() != 3 {
		t.Errorf("SetThreads(3): runtime has %d", ijit.Threads())
	}
	if back := SetThreads(prevThreads); back != 3 {
		t.Errorf("SetThreads returned %d, want 3", back)
	}

	prevVerbose := SetVerbose(0)
	if Verbose() != 0 || ijit.Verbose() != 0 {
		t.Errorf("SetVerbose(0): runtime has %d", ijit.Verbose())
	}
	SetVerbose(prevVerbose)

	e, b := SetCacheCapacity(7, 1<<20)
	if s := GetCacheStats(); s.Entries > 7 {
		t.Errorf("cache holds %d kernels past a bound of 7", s.Entries)
	}
	if e2, b2 := SetCacheCapacity(e, b); e2 != 7 || b2 != 1<<20 {
		t.Errorf("SetCacheCapacity returned %d, %d, want 7, %d", e2, b2, 1<<20)
	}
	for i, want := range map[ISA]ijit.ISA{None: ijit.None, AVX2: ijit.AVX2, AVX512: ijit.AVX512, NEON: ijit.NEON} {
		if ijit.ISA(i) != want || i.String() != want.String() {
			t.Errorf("ISA %d (%v) is the runtime's %d (%v)", int(i), i, int(want), want)
		}
	}
	if DefaultCacheEntries != ijit.DefaultCacheEntries || DefaultCacheBytes != ijit.DefaultCacheBytes {
		t.Errorf("default bounds %d, %d; the runtime's %d, %d", DefaultCacheEntries, DefaultCacheBytes,
			ijit.DefaultCacheEntries, ijit.DefaultCacheBytes)
	}
}
