package arm64

import (
	"errors"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// TestAssembleErrors checks that what the assembler cannot encode, and a
// literal pool it would place after the code, are errors rather than
// kernels with instructions missing.
func TestAssembleErrors(t *testing.T) {
	bad := newAsm()
	bad.op(arm64.AVMOVI, imm(1), varng(8, arr4S)) // MOVI takes a byte arrangement here
	bad.ret()
	if _, err := bad.Text(); !errors.Is(err, status.RuntimeError) {
		t.Errorf("unencodable instruction: got %v, want RuntimeError", err)
	}
	pool := newAsm()
	pool.op(arm64.AFMOVS, mem(xr(1), 12000000), reg(arm64.REG_F3)) // offset via the literal pool
	pool.ret()
	if _, err := pool.Text(); !errors.Is(err, status.RuntimeError) {
		t.Errorf("literal pool: got %v, want RuntimeError", err)
	}
	good := newAsm()
	good.op(arm64.AFMOVS, mem(xr(1), 12), reg(arm64.REG_F3))
	good.ret()
	code, err := good.Text()
	if err != nil || len(code) != 8 {
		t.Errorf("two instructions: %d bytes, %v", len(code), err)
	}
}
