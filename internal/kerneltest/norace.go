//go:build !race

package kerneltest

// RaceDetector is true in a binary built with -race (race.go).
const RaceDetector = false
