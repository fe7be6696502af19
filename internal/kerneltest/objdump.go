package kerneltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Objdump disassembles code, raw machine code of binutils machine
// (objdump -m), with the objdump named tool, an independent decoder, and
// returns its instruction lines split at tabs: the address, the
// encoding, then the mnemonic and operands. Without tool it skips t,
// saying how to install it (install).
func Objdump(t testing.TB, tool, install, machine string, code []byte) [][]string {
	t.Helper()
	od, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s not installed (%s)", tool, install)
	}
	f := filepath.Join(t.TempDir(), "k.bin")
	if err := os.WriteFile(f, code, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(od, "-D", "-b", "binary", "-m", machine, f).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	var ins [][]string
	for _, line := range strings.Split(string(out), "\n") {
		// "   1c:\t62 f1 7c 48 58 06 \tvaddps (%rsi),%zmm0,%zmm0"
		parts := strings.Split(line, "\t")
		if len(parts) < 3 || !strings.HasSuffix(strings.TrimSpace(parts[0]), ":") {
			continue
		}
		ins = append(ins, parts)
	}
	return ins
}
