package execmem

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// memFree is VirtualQuery's State of an address no allocation holds
// (MEM_FREE, which golang.org/x/sys/windows does not define).
const memFree = 0x10000

// query returns VirtualQuery's answer for addr.
func query(t *testing.T, addr uintptr) windows.MemoryBasicInformation {
	t.Helper()
	var mbi windows.MemoryBasicInformation
	if err := windows.VirtualQuery(addr, &mbi, unsafe.Sizeof(mbi)); err != nil {
		t.Fatalf("VirtualQuery(%#x): %v", addr, err)
	}
	return mbi
}

// checkExecutable checks with VirtualQuery that each code's pages are
// committed execute+read, nothing more.
func checkExecutable(t *testing.T, codes []*Code) {
	t.Helper()
	for i, c := range codes {
		mbi := query(t, uintptr(c.entry))
		if mbi.State != windows.MEM_COMMIT || mbi.Protect != windows.PAGE_EXECUTE_READ {
			t.Errorf("code %d at %p: state %#x protect %#x, want MEM_COMMIT PAGE_EXECUTE_READ", i, c.entry, mbi.State, mbi.Protect)
		}
	}
}

// checkReleased checks with VirtualQuery that the pages at addrs are
// free again, or at least not executable (another allocation may have
// taken the address since).
func checkReleased(t *testing.T, addrs []uintptr) {
	t.Helper()
	for i, a := range addrs {
		mbi := query(t, a)
		exec := mbi.Protect&(windows.PAGE_EXECUTE|windows.PAGE_EXECUTE_READ|windows.PAGE_EXECUTE_READWRITE|windows.PAGE_EXECUTE_WRITECOPY) != 0
		if mbi.State != memFree && exec {
			t.Errorf("code %d at %#x still executable after Release: state %#x protect %#x", i, a, mbi.State, mbi.Protect)
		}
	}
}
