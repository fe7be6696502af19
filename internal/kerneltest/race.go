//go:build race

package kerneltest

// RaceDetector is true in a binary built with -race. Tests consult it
// where the detector changes what they see:
//   - allocation counts: the instrumentation moves stack arrays to the
//     heap and sync.Pool drops buffers at random;
//   - ISAs: the tests of the runtime run AVX-512 without AVX2 where the
//     CPU has both. The detector sees only the Go code around the
//     kernels, and the splits AVX2 takes otherwise (narrower whole rows,
//     rows summed row by row) are the same functions, which other shapes
//     run under the detector;
//   - the interpreter's loops run about ten times slower.
const RaceDetector = true
