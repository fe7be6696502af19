//go:build race

package kerneltest

// RaceDetector is true in a binary built with -race. The tests of the
// runtime then run AVX-512 without AVX2 where the CPU has both: the
// detector sees only the Go code around the kernels, and the splits
// AVX2 takes otherwise (narrower whole rows, rows summed row by row)
// are the same functions, which other shapes run under the detector.
const RaceDetector = true
