//go:build !linux && !windows

package execmem

import "testing"

// checkExecutable has no portable way to list a process's mappings on
// the BSDs and macOS; TestWXorXAndRelease's store probe shows the code
// is not writable, and TestCallRunsKernel that it executes.
func checkExecutable(t *testing.T, codes []*Code) {}

// checkReleased: see checkExecutable.
func checkReleased(t *testing.T, addrs []uintptr) {}
