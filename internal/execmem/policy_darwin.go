//go:build darwin && (amd64 || arm64)

package execmem

import (
	"encoding/binary"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gdnn/gdnn/internal/status"
)

// csops(2) operations (xnu's bsd/sys/codesign.h).
const (
	csOpsStatus              = 0  // CS_OPS_STATUS: the flags, a uint32
	csOpsEntitlementsBlob    = 7  // CS_OPS_ENTITLEMENTS_BLOB: the XML entitlements
	csOpsDEREntitlementsBlob = 16 // CS_OPS_DER_ENTITLEMENTS_BLOB
)

var (
	policyOnce sync.Once
	policyErr  error
)

// execPolicy reports whether macOS's code-signing policy lets this
// process run the code gdnn maps (codesign.go), asked once: the flags
// and entitlements of a process do not change while it runs.
func execPolicy() error {
	policyOnce.Do(func() { policyErr = readPolicy() })
	return policyErr
}

// readPolicy reads the process's code-signing flags and, under the
// hardened runtime, its entitlements, and decides. A failing csops
// refuses too: without the answer, running the code could be fatal.
func readPolicy() error {
	var flags uint32
	if err := csops(csOpsStatus, unsafe.Pointer(&flags), unsafe.Sizeof(flags)); err != nil {
		return status.Errorf(status.RuntimeError, "execmem: csops(CS_OPS_STATUS) cannot read the code-signing flags, so executable memory is not used: %v", err)
	}
	if flags&csRuntime == 0 {
		return nil
	}
	xml, xmlErr := entitlementBlob(csOpsEntitlementsBlob)
	der, derErr := entitlementBlob(csOpsDEREntitlementsBlob)
	return codeSigningVerdict(flags, xml, xmlErr, der, derErr)
}

// entitlementBlob reads one entitlement blob of this process: csops
// answers ERANGE to a buffer too small, with the length it needs in the
// header, and the read is tried again once with that length.
func entitlementBlob(op uintptr) ([]byte, error) {
	buf := make([]byte, 4096)
	for try := 0; ; try++ {
		err := csops(op, unsafe.Pointer(&buf[0]), uintptr(len(buf)))
		if err == nil {
			return buf, nil
		}
		need := binary.BigEndian.Uint32(buf[4:])
		if err != unix.ERANGE || try > 0 || need <= uint32(len(buf)) || need > 1<<24 {
			return nil, err
		}
		buf = make([]byte, need)
	}
}

// csops calls csops(2) on this process through libSystem, as
// golang.org/x/sys/unix calls the functions it wraps (it has no wrapper
// for csops): the runtime's syscall6 calls the C function on the system
// stack and returns errno when it returns -1. macOS's system-call
// numbers are not a stable interface; libSystem's functions are.
func csops(op uintptr, buf unsafe.Pointer, size uintptr) error {
	_, _, e := syscall_syscall6(libc_csops_trampoline_addr, uintptr(os.Getpid()), op, uintptr(buf), size, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// syscall_syscall6 is implemented in the runtime (runtime/sys_darwin.go).
//
//go:linkname syscall_syscall6 syscall.syscall6
func syscall_syscall6(fn, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err syscall.Errno)

// libc_csops_trampoline_addr is the address of a jump to libSystem's
// csops (csops_darwin.s).
var libc_csops_trampoline_addr uintptr

//go:cgo_import_dynamic libc_csops csops "/usr/lib/libSystem.B.dylib"
