package jit

import "sync/atomic"

// Counting machine-code calls per ISA lets a test prove which instruction
// set actually ran: CI's AVX-512 stage reports how many jit:avx512 calls
// its tests made, so a stage that silently ran the interpreter or AVX2
// shows a zero. Off (the default), a call pays one load of a flag that
// never changes.
var (
	countCalls atomic.Bool
	isaCalls   [len(isaNames)]atomic.Int64
)

// SetCallCounting turns counting of machine-code calls on or off and
// returns the previous setting. It exists for tests; counts are kept
// when counting stops.
func SetCallCounting(on bool) bool { return countCalls.Swap(on) }

// CallCount returns how many calls of machine code compiled for isa ran
// while counting was on (0 for an ISA gdnn does not know).
func CallCount(isa ISA) int64 {
	if isa < 0 || int(isa) >= len(isaCalls) {
		return 0
	}
	return isaCalls[isa].Load()
}

// countCall records one call of e's code.
func countCall(e *entry) { countISACall(e.key.isa) }

// countISACall records one call of code compiled for isa.
func countISACall(isa ISA) {
	if isa >= 0 && int(isa) < len(isaCalls) {
		isaCalls[isa].Add(1)
	}
}
