package execmem

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/gdnn/gdnn/internal/status"
)

// TestArbitraryCodeGuard turns Arbitrary Code Guard on in a child
// process (it cannot be turned off again) and maps a kernel there: New
// must fail with a RuntimeError that names it. A Windows that does not
// enforce the policy (wine accepts the call and enforces nothing) skips.
func TestArbitraryCodeGuard(t *testing.T) {
	if os.Getenv("GDNN_ACG_CHILD") == "1" {
		acgChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestArbitraryCodeGuard$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "GDNN_ACG_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	switch s := string(out); {
	case strings.Contains(s, "acg: not enforced"):
		t.Skip("this Windows does not enforce Arbitrary Code Guard (New mapped code under it)")
	case !strings.Contains(s, "acg: refused"):
		t.Fatalf("child did not report:\n%s", s)
	}
}

// acgChild turns on ProcessDynamicCodePolicy's ProhibitDynamicCode and
// reports what New does then.
func acgChild(t *testing.T) {
	set := windows.NewLazySystemDLL("kernel32.dll").NewProc("SetProcessMitigationPolicy")
	if err := set.Find(); err != nil {
		t.Skipf("no SetProcessMitigationPolicy: %v", err)
	}
	const processDynamicCodePolicy = 2 // PROCESS_MITIGATION_POLICY
	prohibit := uint32(1)              // PROCESS_MITIGATION_DYNAMIC_CODE_POLICY.ProhibitDynamicCode
	if ok, _, err := set.Call(processDynamicCodePolicy, uintptr(unsafe.Pointer(&prohibit)), unsafe.Sizeof(prohibit)); ok == 0 {
		t.Fatalf("SetProcessMitigationPolicy(ProcessDynamicCodePolicy): %v", err)
	}
	before := MappedBytes()
	c, err := New(storeKernel(t))
	if err == nil {
		_ = c.Release()
		fmt.Println("acg: not enforced")
		return
	}
	if !errors.Is(err, status.RuntimeError) || !strings.Contains(err.Error(), "Arbitrary Code Guard") {
		t.Fatalf("New under Arbitrary Code Guard: %v, want a RuntimeError naming it", err)
	}
	if MappedBytes() != before {
		t.Errorf("MappedBytes %d after the refusal, want %d", MappedBytes(), before)
	}
	fmt.Println("acg: refused:", err)
}
