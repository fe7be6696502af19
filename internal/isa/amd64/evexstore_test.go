package amd64

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// TestEVEXScalarStoreOffsets executes each one-element store the
// emitters use (store.go) from a register past X15, which only EVEX can
// name, to a one-byte displacement, which EVEX scales by the element size
// (disp8*N), and checks that the value lands where the displacement says.
// An emulator that scales by the wrong N writes elsewhere; this test
// names the instruction, where the differential tests only see a wrong
// output. (Bochs 2.7 does not scale the disp8 of VPEXTRW: disp8 3 stores
// at byte 3, not 6.)
func TestEVEXScalarStoreOffsets(t *testing.T) {
	avx512 := false
	for _, c := range isas(t) {
		avx512 = avx512 || c.o.AVX512
	}
	if !avx512 {
		t.Skip("CPU lacks AVX-512")
	}
	const val = 0x1b2c3d4e
	cases := []struct {
		name  string
		off   int64
		size  int
		store func(a *asm, x obj.Addr, m obj.Addr)
	}{
		{"VMOVSS", 12, 4, func(a *asm, x, m obj.Addr) { a.op(x86.AVMOVSS, x, m) }},
		{"VMOVD", 12, 4, func(a *asm, x, m obj.Addr) { a.op(x86.AVMOVD, x, m) }},
		{"VPEXTRD $0", 12, 4, func(a *asm, x, m obj.Addr) { a.op(x86.AVPEXTRD, imm(0), x, m) }},
		{"VPEXTRW $0", 6, 2, func(a *asm, x, m obj.Addr) { a.op(x86.AVPEXTRW, imm(0), x, m) }},
		{"VPEXTRW $0, far", 40, 2, func(a *asm, x, m obj.Addr) { a.op(x86.AVPEXTRW, imm(0), x, m) }},
	}
	for _, c := range cases {
		a := newAsm()
		a.op(x86.AMOVQ, mem(x86.REG_DI, 8), reg(x86.REG_DI)) // plan.Args.Dst
		a.op(x86.AMOVL, imm(val), reg(x86.REG_AX))
		x := reg(x86.REG_X17)
		a.op(x86.AVMOVD, reg(x86.REG_AX), x)
		c.store(a, x, mem(x86.REG_DI, c.off))
		a.op(x86.AVZEROUPPER)
		a.op(obj.ARET)
		code, err := a.Text()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		k := kerneltest.Map(t, plan.Code{Text: code})
		k.Count = &kerneltest.AVX512Calls
		dst := make([]byte, 128)
		k.Call(nil, dst, nil, 1, 0, 0, nil)
		k.Release()
		want := make([]byte, 128)
		var v [4]byte
		binary.LittleEndian.PutUint32(v[:], val)
		copy(want[c.off:], v[:c.size])
		if string(dst) != string(want) {
			t.Errorf("%s to %d(DI) from X17 (EVEX, disp8 %d): %s", c.name, c.off, c.off/int64(c.size), where(dst, v[:c.size]))
		}
	}
}

// where says at which offsets of b the bytes of v were written.
func where(b, v []byte) string {
	var at []int
	for i := 0; i+len(v) <= len(b); i++ {
		if string(b[i:i+len(v)]) == string(v) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return "value written nowhere whole"
	}
	return fmt.Sprintf("value written at offset %v", at)
}

// TestEVEXConvertToF16 executes VCVTPS2PH on a ZMM register past Z15
// with rounding to nearest even (imm8 0), as the f16 stores do, over
// random f32 values of every magnitude f16 holds (subnormals and
// overflow included), and checks every result against
// dtypes.F32ToF16. It names the instruction when an emulator rounds
// differently from the hardware (Bochs 2.7 rounds exact ties away from
// zero).
func TestEVEXConvertToF16(t *testing.T) {
	avx512 := false
	for _, c := range isas(t) {
		avx512 = avx512 || c.o.AVX512
	}
	if !avx512 {
		t.Skip("CPU lacks AVX-512")
	}
	a := newAsm()
	a.op(x86.AMOVQ, mem(x86.REG_DI, 0), reg(x86.REG_SI)) // plan.Args.Src
	a.op(x86.AMOVQ, mem(x86.REG_DI, 8), reg(x86.REG_DI)) // plan.Args.Dst
	a.op(x86.AVMOVUPS, mem(x86.REG_SI, 0), reg(x86.REG_Z16))
	a.op(x86.AVCVTPS2PH, imm(0), reg(x86.REG_Z16), reg(x86.REG_Y17))
	a.op(x86.AVMOVDQU16, reg(x86.REG_Y17), mem(x86.REG_DI, 0))
	a.op(x86.AVZEROUPPER)
	a.op(obj.ARET)
	code, err := a.Text()
	if err != nil {
		t.Fatal(err)
	}
	k := kerneltest.Map(t, plan.Code{Text: code})
	defer k.Release()
	k.Count = &kerneltest.AVX512Calls
	r := rand.New(rand.NewSource(3))
	src, dst := make([]byte, 64), make([]byte, 32)
	bad := 0
	for range 2000 {
		var in [16]float32
		for i := range in {
			// Exponents from far below the f16 subnormals to past its
			// range; random mantissas hit ties and near-ties rarely, so
			// a quarter of the values are made exact ties.
			e := r.Intn(50) - 30
			m := r.Uint32() & 0x7fffff
			if r.Intn(4) == 0 {
				m = m&^0x1fff | 0x1000 // the 13 bits f16 drops: exactly half
			}
			in[i] = math.Float32frombits(uint32(e+127)<<23 | m | uint32(r.Intn(2))<<31)
			binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(in[i]))
		}
		k.Call(src, dst, nil, 1, 0, 0, nil)
		for i, v := range in {
			got, want := binary.LittleEndian.Uint16(dst[2*i:]), dtypes.F32ToF16(v)
			if got != want && bad < 10 {
				t.Errorf("VCVTPS2PH %g (%#08x): %#04x, want %#04x", v, math.Float32bits(v), got, want)
				bad++
			}
		}
	}
}
