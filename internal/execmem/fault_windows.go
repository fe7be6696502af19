//go:build windows && amd64

package execmem

import (
	"sync"

	"golang.org/x/sys/windows"

	"github.com/gdnn/gdnn/internal/status"
)

// vehHandlerAddr is the address of vehHandler (fault_windows_amd64.s),
// the vectored exception handler that turns a kernel's fault into a
// panic on its goroutine, as a signal does on Linux and macOS.
var vehHandlerAddr uintptr

// jitFault is where vehHandler resumes a faulted kernel's thread
// (fault_windows_amd64.s); it is never called from Go.
func jitFault()

var (
	vehOnce sync.Once
	vehErr  error
)

// addVectoredExceptionHandler is kernel32's AddVectoredExceptionHandler,
// which golang.org/x/sys/windows does not wrap.
var addVectoredExceptionHandler = windows.NewLazySystemDLL("kernel32.dll").NewProc("AddVectoredExceptionHandler")

// catchKernelFaults installs vehHandler once, before the first kernel is
// mapped. Without it code still maps and runs; only a faulting kernel
// (a gdnn bug: buffer spans are checked before every call) would then
// end the process instead of failing its Run.
func catchKernelFaults() error {
	vehOnce.Do(func() {
		if err := addVectoredExceptionHandler.Find(); err != nil {
			vehErr = err
			return
		}
		if h, _, err := addVectoredExceptionHandler.Call(1, vehHandlerAddr); h == 0 {
			vehErr = err
		}
	})
	return vehErr
}

// exceptionNames names the exceptions a faulting kernel raises.
var exceptionNames = map[uintptr]string{
	0xc0000005: "access violation",
	0xc0000006: "in-page error",
	0xc000001d: "illegal instruction",
	0xc0000096: "privileged instruction",
	0xc0000094: "integer divide by zero",
	0x80000002: "misaligned data",
}

// kernelFault panics with the exception a kernel raised; jitFault calls
// it on the goroutine whose kernel faulted, and the panic unwinds to the
// kernel's caller, whose recover turns it into an error (the jit
// runtime's catchFault).
func kernelFault(code, addr uintptr) {
	name := exceptionNames[code]
	if name == "" {
		name = "exception"
	}
	panic(status.Errorf(status.RuntimeError, "execmem: kernel raised %s (%#x) at address %#x", name, code, addr))
}

// jitFault and kernelFault are called from fault_windows_amd64.s only.
var _, _ = jitFault, kernelFault
