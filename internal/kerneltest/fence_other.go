//go:build !unix && !windows

package kerneltest

import (
	"fmt"
	"runtime"
)

// mapPages fails: this GOOS (wasm, plan9) gives Go no page protection,
// so there are no guard pages to place; a guard-page test fails here
// rather than passing without its fence.
func mapPages(n int) ([]byte, error) {
	return nil, fmt.Errorf("no guard pages on %s/%s (%d bytes not mapped)", runtime.GOOS, runtime.GOARCH, n)
}

// noAccess is never reached here (mapPages fails).
func noAccess(b []byte) error { return nil }

// unmapPages is never reached here (mapPages fails).
func unmapPages(m []byte) error { return nil }
