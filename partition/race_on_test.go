//go:build race

package partition

// raceEnabled: the race detector's instrumentation makes stack arrays
// escape, so allocation counts differ from a normal build.
const raceEnabled = true
