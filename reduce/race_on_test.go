//go:build race

package reduce

// raceEnabled: under the race detector sync.Pool drops buffers at random
// and instrumentation moves stack arrays to the heap, so allocation
// counts differ from a normal build.
const raceEnabled = true
