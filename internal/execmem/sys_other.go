//go:build !((linux && (amd64 || arm64)) || (darwin && (amd64 || arm64)) || (freebsd && amd64) || (windows && amd64))

package execmem

import (
	"runtime"

	"github.com/gdnn/gdnn/internal/status"
)

// mapCode reports that this platform has no executable-memory support in
// gdnn; callers fall back to the interpreter.
func mapCode(code []byte) ([]byte, error) {
	return nil, status.Errorf(status.Unimplemented, "execmem: no executable memory on %s/%s (%d code bytes not mapped)",
		runtime.GOOS, runtime.GOARCH, len(code))
}

// unmap is never reached here: mapCode never succeeds on this platform.
func unmap(mem []byte) error { return nil }
