//go:build !amd64 && !arm64

package dtypes

// bulkPaths: no vector code on this GOARCH; the pure-Go loops convert.
var bulkPaths []bulkKernels
