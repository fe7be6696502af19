//go:build !linux

package reduce

// threadCPUNanos is unknown here: -1.
func threadCPUNanos() int64 { return -1 }
