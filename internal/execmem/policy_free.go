//go:build (linux && (amd64 || arm64)) || (freebsd && amd64)

package execmem

// execPolicy has nothing to check on Linux and FreeBSD: whether the
// kernel allows executable memory shows in mprotect's answer (SELinux's
// execmem, PaX MPROTECT), which mapCode turns into an error.
func execPolicy() error { return nil }
