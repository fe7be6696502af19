//go:build !linux

package dtypes_test

// threadCPUNanos is unknown here: -1.
func threadCPUNanos() int64 { return -1 }
