package arm64

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// TestRawWords disassembles every raw instruction word gdnn emits, with
// registers and offsets that exercise every field, and compares with
// binutils' reading.
func TestRawWords(t *testing.T) {
	cases := []struct {
		w    uint32
		want string
	}{
		{rrr(opFADD, 1, 2, 3), "fadd v1.4s, v2.4s, v3.4s"},
		{rrr(opFSUB, 31, 30, 29), "fsub v31.4s, v30.4s, v29.4s"},
		{rrr(opFMUL, 0, 17, 8), "fmul v0.4s, v17.4s, v8.4s"},
		{rrr(opFDIV, 5, 5, 26), "fdiv v5.4s, v5.4s, v26.4s"},
		{rrr(opFMAX, 4, 9, 16), "fmax v4.4s, v9.4s, v16.4s"},
		{rrr(opFMIN, 4, 9, 16), "fmin v4.4s, v9.4s, v16.4s"},
		{rrr(opFADDP, 0, 1, 2), "faddp v0.4s, v1.4s, v2.4s"},
		{rrr(opFMAXP, 31, 30, 29), "fmaxp v31.4s, v30.4s, v29.4s"},
		{rrr(opFMINP, 3, 17, 8), "fminp v3.4s, v17.4s, v8.4s"},
		{rrr(opFCMEQ, 18, 3, 3), "fcmeq v18.4s, v3.4s, v3.4s"},
		{rrr(opFCMGT, 18, 27, 3), "fcmgt v18.4s, v27.4s, v3.4s"},
		{rrr(opFCMGE, 19, 4, 29), "fcmge v19.4s, v4.4s, v29.4s"},
		{rrr(opBIC, 3, 3, 18), "bic v3.16b, v3.16b, v18.16b"},
		{rrr(opORN, 3, 17, 18), "orn v3.16b, v17.16b, v18.16b"},
		{rrr(opSMAX, 21, 21, 19), "smax v21.4s, v21.4s, v19.4s"},
		{rrr(opSMIN, 1, 30, 9), "smin v1.4s, v30.4s, v9.4s"},
		{rr(opSMAXV, 21, 21), "smaxv s21, v21.4s"},
		{rr(opSMINV, 2, 30), "sminv s2, v30.4s"},
		{rr(opUXTL2S, 16, 8), "uxtl v16.2d, v8.2s"},
		{rr(opUXTL4S, 16, 15), "uxtl2 v16.2d, v15.4s"},
		{rr(opFABS, 7, 7), "fabs v7.4s, v7.4s"},
		{rr(opFNEG, 31, 16), "fneg v31.4s, v16.4s"},
		{rr(opFSQRT, 12, 13), "fsqrt v12.4s, v13.4s"},
		{rr(opFRINTN, 1, 1), "frintn v1.4s, v1.4s"},
		{rr(opFRINTM, 30, 7), "frintm v30.4s, v7.4s"},
		{rr(opFCMLE0, 16, 2), "fcmle v16.4s, v2.4s, #0.0"},
		{rr(opFCMLT0, 16, 2), "fcmlt v16.4s, v2.4s, #0.0"},
		{rr(opFCVTL, 16, 16), "fcvtl v16.4s, v16.4h"},
		{rr(opFCVTL2, 17, 16), "fcvtl2 v17.4s, v16.8h"},
		{rr(opFCVTN, 20, 3), "fcvtn v20.4h, v3.4s"},
		{rr(opSHLL, 16, 16), "shll v16.4s, v16.4h, #16"},
		{rr(opSHLL2, 17, 16), "shll2 v17.4s, v16.8h, #16"},
		{rr(opSXTL8, 16, 17), "sxtl v16.8h, v17.8b"},
		{rr(opSXTL8hi, 18, 16), "sxtl2 v18.8h, v16.16b"},
		{rr(opUXTL8, 16, 17), "uxtl v16.8h, v17.8b"},
		{rr(opUXTL8hi, 31, 0), "uxtl2 v31.8h, v0.16b"},
		{rr(opSXTL16, 20, 21), "sxtl v20.4s, v21.4h"},
		{rr(opSXTL16hi, 20, 21), "sxtl2 v20.4s, v21.8h"},
		{rr(opUXTL16, 1, 2), "uxtl v1.4s, v2.4h"},
		{rr(opUXTL16hi, 3, 4), "uxtl2 v3.4s, v4.8h"},
		{rr(opSCVTF, 5, 6), "scvtf v5.4s, v6.4s"},
		{rr(opUCVTF, 7, 8), "ucvtf v7.4s, v8.4s"},
		{rr(opFCVTNS, 17, 3), "fcvtns v17.4s, v3.4s"},
		{rrr(opFADD2D, 1, 2, 3), "fadd v1.2d, v2.2d, v3.2d"},
		{rrr(opFSUB2D, 4, 5, 31), "fsub v4.2d, v5.2d, v31.2d"},
		{rr(opFRINTN2D, 6, 7), "frintn v6.2d, v7.2d"},
		{rr(opSXTL32, 8, 9), "sxtl v8.2d, v9.2s"},
		{rr(opSCVTF2D, 10, 11), "scvtf v10.2d, v11.2d"},
		{rrr(opFMUL2D, 31, 17, 8), "fmul v31.2d, v17.2d, v8.2d"},
		{rrr(opFDIV2D, 16, 30, 25), "fdiv v16.2d, v30.2d, v25.2d"},
		{rr(opFSQRT2D, 9, 28), "fsqrt v9.2d, v28.2d"},
		{rrr(opFCMEQ2D, 11, 2, 30), "fcmeq v11.2d, v2.2d, v30.2d"},
		{rrr(opFCMGT2D, 18, 27, 3), "fcmgt v18.2d, v27.2d, v3.2d"},
		{rrr(opFCMGE2D, 19, 4, 29), "fcmge v19.2d, v4.2d, v29.2d"},
		{rr(opFCMLE02D, 20, 21), "fcmle v20.2d, v21.2d, #0.0"},
		{rr(opFCMLT02D, 7, 31), "fcmlt v7.2d, v31.2d, #0.0"},
		{rr(opFCVTL2D, 16, 3), "fcvtl v16.2d, v3.2s"},
		{rr(opFCVTL22D, 17, 30), "fcvtl2 v17.2d, v30.4s"},
		{rr(opFCVTN2D, 3, 16), "fcvtn v3.2s, v16.2d"},
		{rr(opFCVTN22D, 31, 17), "fcvtn2 v31.4s, v17.2d"},
		{sshr(16, 17, 1), "sshr v16.4s, v17.4s, #1"},
		{sshr(31, 0, 32), "sshr v31.4s, v0.4s, #32"},
		{rr(opSQXTN16, 17, 17), "sqxtn v17.4h, v17.4s"},
		{rr(opSQXTN8, 17, 18), "sqxtn v17.8b, v18.8h"},
		{rr(opSQXTUN, 19, 20), "sqxtun v19.4h, v20.4s"},
		{rr(opUQXTN8, 21, 22), "uqxtn v21.8b, v22.8h"},
		{rr(opSADDLP8, 16, 17), "saddlp v16.8h, v17.16b"},
		{rr(opSADDLP16, 16, 16), "saddlp v16.4s, v16.8h"},
		{rr(opUADDLP8, 25, 3), "uaddlp v25.8h, v3.16b"},
		{rr(opUADDLP16, 25, 25), "uaddlp v25.4s, v25.8h"},
		{ldstScaled(true, 16, 3, 1, 65520), "ldr q3, [x1, #65520]"},
		{ldstScaled(false, 16, 31, 17, 16), "str q31, [x17, #16]"},
		{ldstScaled(true, 2, 16, 2, 8190), "ldr h16, [x2, #8190]"},
		{ldstScaled(false, 2, 16, 6, 0), "str h16, [x6]"},
		{ldstUnscaled(true, 16, 3, 1, -256), "ldur q3, [x1, #-256]"},
		{ldstUnscaled(false, 16, 3, 1, 255), "stur q3, [x1, #255]"},
		{ldstUnscaled(true, 2, 9, 4, -2), "ldur h9, [x4, #-2]"},
		{ldstUnscaled(false, 2, 9, 4, 7), "stur h9, [x4, #7]"},
		{ldstScaled(true, 1, 16, 1, 4095), "ldr b16, [x1, #4095]"},
		{ldstScaled(false, 1, 21, 17, 3), "str b21, [x17, #3]"},
		{ldstUnscaled(true, 1, 9, 4, -256), "ldur b9, [x4, #-256]"},
		{ldstUnscaled(false, 1, 31, 2, 255), "stur b31, [x2, #255]"},
		{ldpQ(16, 17, 1, -1024), "ldp q16, q17, [x1, #-1024]"},
		{ldpQ(18, 19, 5, 1008), "ldp q18, q19, [x5, #1008]"},
		{movWide(opMOVZ, 16, 0x8000, 48), "mov x16, #0x8000000000000000"},
		{movWide(opMOVN, 17, 0xedcb, 48), "mov x17, #0x1234ffffffffffff"},
		{movWide(opMOVK, 9, 0xffff, 48), "movk x9, #0xffff, lsl #48"},
		{movWide(opMOVK, 9, 0x1234, 16), "movk x9, #0x1234, lsl #16"},
	}
	code := make([]byte, 4*len(cases))
	for i, c := range cases {
		binary.LittleEndian.PutUint32(code[4*i:], c.w)
	}
	ins := disassemble(t, code)
	for i, c := range cases {
		if ins[i].text != c.want {
			t.Errorf("word %08x disassembles to %q, want %q", c.w, ins[i].text, c.want)
		}
	}
}

// TestOffsetForms checks the choice of addressing form for each access
// size and offset against the instruction fields' ranges: scaled,
// unscaled, or an address computed into R17.
func TestOffsetForms(t *testing.T) {
	for _, c := range []struct {
		size, off int64
		direct    bool
	}{
		{16, 0, true}, {16, 65520, true}, {16, 65536, false}, {16, 8, true}, {16, 264, false}, {16, -256, true},
		{16, -257, false}, {2, 8190, true}, {2, 8192, false}, {2, 255, true}, {4, 16380, true}, {4, 16383, false},
		{8, 32760, true}, {8, 32768, false}, {8, -8, true},
	} {
		g := newGen(&plan.Plan{})
		base, off := g.addrFor(at(rSrc, c.off), c.size, false)
		if direct := base == rSrc && off == c.off; direct != c.direct {
			t.Errorf("%d-byte access at offset %d: direct %v, want %v", c.size, c.off, direct, c.direct)
		}
		if !c.direct && (base != rAddr || off != 0) {
			t.Errorf("%d-byte access at offset %d: base %d offset %d, want R17 offset 0", c.size, c.off, base, off)
		}
	}
}

// immediatesOut is TestImmediates' dst: a global, which never moves, as a
// stack array could before the kernel stores through the integer address
// in its argument block.
var immediatesOut [2]int64

// TestImmediates runs movImm and addImm for edge values (every 16-bit
// chunk pattern that picks MOVZ or MOVN, sign boundaries, the 12-bit and
// 24-bit ADD ranges) and random ones: a kernel computes each value into a
// register and stores it, and Go compares.
func TestImmediates(t *testing.T) {
	needARM64(t)
	vals := []int64{0, 1, -1, 0xfff, 0x1000, 0xffffff, 0x1000000, -0x1000000, 0xffff, 0x10000, -0x10000,
		0x7fffffff, -0x80000000, 0x80000000, 0xffff0000ffff, -0x123456789abc, math.MinInt64, math.MaxInt64,
		0x0000ffff00000000, -0x0000ffff00000001}
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 50; i++ {
		vals = append(vals, int64(r.Uint64()), r.Int63n(1<<30)-1<<29)
	}
	for _, v := range vals {
		g := newGen(&plan.Plan{})
		g.op(arm64.AMOVD, mem(rArgs, plan.ArgDst), reg(rDst))
		g.op(arm64.AMOVD, mem(rArgs, plan.ArgSrc), reg(xr(9)))
		g.movImm(xr(10), v)
		g.op(arm64.AMOVD, reg(xr(10)), mem(rDst, 0))
		g.addImm(xr(9), v)
		g.op(arm64.AMOVD, reg(xr(9)), mem(rDst, 8))
		g.ret()
		code, err := g.Text()
		if err != nil {
			t.Fatalf("%#x: %v", v, err)
		}
		c, err := execmem.New(code)
		if err != nil {
			t.Fatal(err)
		}
		out := &immediatesOut
		*out = [2]int64{}
		a := plan.Args{Src: 1000, Dst: uintptr(unsafe.Pointer(&out[0]))}
		c.Call(unsafe.Pointer(&a))
		_ = c.Release()
		if out[0] != v || out[1] != 1000+v {
			t.Errorf("movImm(%#x) = %#x, addImm(1000, %#x) = %#x", v, out[0], v, out[1])
		}
	}
}
