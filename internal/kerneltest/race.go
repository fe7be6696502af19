//go:build race

package kerneltest

// RaceDetector is true in a binary built with -race. The tests of the
// runtime then run AVX-512 without AVX2 where the CPU has both: the
// detector sees the Go code around the kernels, which is the same for
// either, so AVX2's run would add time and find nothing new.
const RaceDetector = true
