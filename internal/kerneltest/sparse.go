package kerneltest

import (
	"fmt"
	"math"
)

// Sparse maps n bytes of zeros outside the Go heap of which only the
// pages a test touches take memory, for problems whose strides put a few
// elements gigabytes apart. free unmaps it. It fails where the OS will
// not map that much address space (or an int cannot hold n); a test then
// skips, saying so.
func Sparse(n int64) (m []byte, free func(), err error) {
	if n <= 0 || n > math.MaxInt {
		return nil, nil, fmt.Errorf("sparse mapping of %d bytes: not a positive int on this GOARCH", n)
	}
	m, err = mapSparse(int(n))
	if err != nil {
		return nil, nil, err
	}
	return m, func() { _ = unmapPages(m) }, nil
}
