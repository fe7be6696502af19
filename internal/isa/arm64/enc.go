package arm64

// Raw encodings of the instructions the Go 1.15 assembler does not spell:
// the floating-point vector arithmetic (golang-asm's VADD/VADDP are
// integer adds), the f16/bf16 widenings and narrowing, the f32 <-> f64
// widenings and narrowings with the f64 arithmetic they serve, and the
// SIMD&FP loads and stores of 16-bit and 128-bit registers with an
// immediate offset. All vector forms use the 4S arrangement (128-bit
// register, four f32 lanes) unless the name says otherwise. Every
// encoder here is checked against binutils' disassembler (enc_test.go).
//
// d, n, m are vector register numbers (Vd, Vn, Vm); t, t2 transfer
// registers; rn a general register number used as a base address.

// Three-register float ops, Vd.4S = Vn.4S op Vm.4S.
const (
	opFADD  = 0x4E20D400
	opFSUB  = 0x4EA0D400
	opFMUL  = 0x6E20DC00
	opFDIV  = 0x6E20FC00
	opFMAX  = 0x4E20F400 // NaN if either is NaN; max(-0, +0) = +0
	opFMIN  = 0x4EA0F400 // NaN if either is NaN; min(-0, +0) = -0
	opFADDP = 0x6E20D400 // pairwise over the concatenation Vn:Vm
	opFMAXP = 0x6E20F400 // pairwise max, NaN-propagating like FMAX
	opFMINP = 0x6EA0F400 // pairwise min, NaN-propagating like FMIN
	opFCMEQ = 0x4E20E400 // all-ones where n == m (false if either is NaN)
	opFCMGT = 0x6EA0E400 // all-ones where n > m (false if either is NaN)
	opFCMGE = 0x6E20E400 // all-ones where n >= m (false if either is NaN)
	opBIC   = 0x4E601C00 // Vd.16B = Vn AND NOT Vm
)

// Two-register ops.
const (
	opFABS   = 0x4EA0F800 // 4S
	opFNEG   = 0x6EA0F800 // 4S, the sign bit flipped (a NaN too, not quietened)
	opFSQRT  = 0x6EA1F800 // 4S
	opFRINTN = 0x4E218800 // 4S, round to nearest, ties to even
	opFRINTM = 0x4E219800 // 4S, round toward -Inf (floor)
	opFCMLE0 = 0x6EA0D800 // 4S, all-ones where n <= 0 (false for NaN)
	opFCMLT0 = 0x4EA0E800 // 4S, all-ones where n < 0 (false for NaN)
	opFCVTL  = 0x0E217800 // Vd.4S = f32(Vn.4H), f16 -> f32, exact
	opFCVTL2 = 0x4E217800 // Vd.4S = f32(Vn.8H upper half)
	opFCVTN  = 0x0E216800 // Vd.4H = f16(Vn.4S), rounding per FPCR (nearest even)
	opSHLL   = 0x2E613800 // Vd.4S = Vn.4H << 16 (bf16 -> f32, exact)
	opSHLL2  = 0x6E613800 // Vd.4S = Vn.8H upper half << 16
)

// 8-bit integer conversions. The widenings are SSHLL/USHLL #0 (SXTL,
// UXTL): exact. FCVTNS rounds to nearest, ties to even, saturates to the
// s32 range and gives 0 for NaN, which is gdnn's rule for integer dst
// (dtypes.F32ToS32); the narrowings saturate: SQXTN to the signed range
// of the half-width type, SQXTUN a signed value to the unsigned range
// (negative to 0), UQXTN an unsigned value to the unsigned range.
const (
	opSXTL8    = 0x0F08A400 // Vd.8H = s16(Vn.8B)
	opSXTL8hi  = 0x4F08A400 // Vd.8H = s16(Vn.16B upper half) (SXTL2)
	opUXTL8    = 0x2F08A400 // Vd.8H = u16(Vn.8B)
	opUXTL8hi  = 0x6F08A400 // Vd.8H = u16(Vn.16B upper half) (UXTL2)
	opSXTL16   = 0x0F10A400 // Vd.4S = s32(Vn.4H)
	opSXTL16hi = 0x4F10A400 // Vd.4S = s32(Vn.8H upper half) (SXTL2)
	opUXTL16   = 0x2F10A400 // Vd.4S = u32(Vn.4H)
	opUXTL16hi = 0x6F10A400 // Vd.4S = u32(Vn.8H upper half) (UXTL2)
	opSCVTF    = 0x4E21D800 // Vd.4S = f32(s32 Vn.4S), exact below 2^24
	opUCVTF    = 0x6E21D800 // Vd.4S = f32(u32 Vn.4S)
	opFCVTNS   = 0x4E21A800 // Vd.4S = s32(Vn.4S), nearest even, saturating, NaN -> 0
	opSQXTN16  = 0x0E614800 // Vd.4H = sat s16(Vn.4S)
	opSQXTN8   = 0x0E214800 // Vd.8B = sat s8(Vn.8H)
	opSQXTUN   = 0x2E612800 // Vd.4H = sat u16(s32 Vn.4S)
	opUQXTN8   = 0x2E214800 // Vd.8B = sat u8(u16 Vn.8H)
	opSADDLP8  = 0x4E202800 // Vd.8H = pairwise sums of s8 Vn.16B (exact)
	opSADDLP16 = 0x4E602800 // Vd.4S = pairwise sums of s16 Vn.8H (exact)
	opUADDLP8  = 0x6E202800 // Vd.8H = pairwise sums of u8 Vn.16B (exact)
	opUADDLP16 = 0x6E602800 // Vd.4S = pairwise sums of u16 Vn.8H (exact)
)

// Double-precision forms (2D: two f64 lanes), for the post-ops that
// plan.Eltwise evaluates in float64 (f64.go). The widenings are exact;
// the narrowings round as FPCR says (nearest even), FCVTN writing the
// lower half of Vd (upper half zeroed) and FCVTN2 the upper half,
// keeping the lower.
const (
	opFADD2D   = 0x4E60D400 // Vd.2D = Vn.2D + Vm.2D
	opFSUB2D   = 0x4EE0D400 // Vd.2D = Vn.2D - Vm.2D
	opFRINTN2D = 0x4E618800 // Vd.2D = Vn.2D rounded to nearest, ties to even
	opSXTL32   = 0x0F20A400 // Vd.2D = s64(Vn.2S) (SSHLL #0), exact
	opSCVTF2D  = 0x4E61D800 // Vd.2D = f64(s64 Vn.2D), exact below 2^53, else rounded per FPCR (nearest even)
	opFMUL2D   = 0x6E60DC00 // Vd.2D = Vn.2D * Vm.2D
	opFDIV2D   = 0x6E60FC00 // Vd.2D = Vn.2D / Vm.2D
	opFSQRT2D  = 0x6EE1F800 // Vd.2D = sqrt(Vn.2D)
	opFCMEQ2D  = 0x4E60E400 // all-ones where n == m (false if either is NaN)
	opFCMGT2D  = 0x6EE0E400 // all-ones where n > m (false if either is NaN)
	opFCMGE2D  = 0x6E60E400 // all-ones where n >= m (false if either is NaN)
	opFCMLE02D = 0x6EE0D800 // all-ones where n <= 0 (false for NaN)
	opFCMLT02D = 0x4EE0E800 // all-ones where n < 0 (false for NaN)
	opFCVTL2D  = 0x0E617800 // Vd.2D = f64(Vn.2S), exact
	opFCVTL22D = 0x4E617800 // Vd.2D = f64(Vn.4S upper half)
	opFCVTN2D  = 0x0E616800 // Vd.2S = f32(Vn.2D), Vd's upper half zeroed
	opFCVTN22D = 0x4E616800 // Vd.4S upper half = f32(Vn.2D)
)

// sshr encodes SSHR Vd.4S, Vn.4S, #sh (arithmetic shift right, 1 <= sh
// <= 32), which golang-asm does not spell: immh:immb holds 64 - sh.
func sshr(d, n int, sh int) uint32 {
	return 0x4F000400 | uint32(64-sh)<<16 | uint32(n&31)<<5 | uint32(d&31)
}

// rrr encodes a three-register op.
func rrr(op uint32, d, n, m int) uint32 {
	return op | uint32(m&31)<<16 | uint32(n&31)<<5 | uint32(d&31)
}

// rr encodes a two-register op.
func rr(op uint32, d, n int) uint32 { return op | uint32(n&31)<<5 | uint32(d&31) }

// Loads and stores of SIMD&FP registers. size is the access size in
// bytes: 1 (B register), 2 (H register) or 16 (Q register); 4 and 8 have
// golang-asm mnemonics (FMOVS, FMOVD) and are not encoded here.

// ldstOp is the LDR/STR (unsigned offset) opcode for size bytes; the
// unscaled forms (LDUR/STUR) are the same with bit 24 clear.
func ldstOp(load bool, size int64) uint32 {
	var w uint32
	switch size {
	case 1:
		w = 0x3D000000
	case 2:
		w = 0x7D000000
	default:
		w = 0x3D800000
	}
	if load {
		w |= 0x00400000
	}
	return w
}

// ldstScaled encodes LDR/STR (immediate, unsigned offset): off must be a
// multiple of size in [0, 4095*size].
func ldstScaled(load bool, size int64, t int, rn int, off int64) uint32 {
	return ldstOp(load, size) | uint32(off/size)<<10 | uint32(rn&31)<<5 | uint32(t&31)
}

// ldstUnscaled encodes LDUR/STUR: off in [-256, 255].
func ldstUnscaled(load bool, size int64, t int, rn int, off int64) uint32 {
	return ldstOp(load, size)&^0x01000000 | uint32(off&0x1ff)<<12 | uint32(rn&31)<<5 | uint32(t&31)
}

// ldpQ encodes LDP Qt, Qt2, [Xn, #off] (signed offset): off a multiple
// of 16 in [-1024, 1008].
func ldpQ(t, t2 int, rn int, off int64) uint32 {
	return 0xAD400000 | uint32((off/16)&0x7f)<<15 | uint32(t2&31)<<10 | uint32(rn&31)<<5 | uint32(t&31)
}

// fitsScaled reports whether off is encodable as an unsigned scaled
// 12-bit offset for accesses of size bytes.
func fitsScaled(off, size int64) bool { return off >= 0 && off%size == 0 && off/size < 4096 }

// fitsUnscaled reports whether off fits LDUR/STUR's signed 9 bits.
func fitsUnscaled(off int64) bool { return off >= -256 && off <= 255 }

// fitsPairQ reports whether off fits LDP Q's scaled signed 7 bits.
func fitsPairQ(off int64) bool { return off%16 == 0 && off >= -1024 && off <= 1008 }

// Move-wide immediates (64-bit). golang-asm spells MOVZ, MOVN and MOVK
// but rejects a 16-bit chunk at bit 48 whose top bit is set (it tests
// the shifted operand as a signed value), so that one case is a raw word.
const (
	opMOVN = 0x92800000
	opMOVZ = 0xD2800000
	opMOVK = 0xF2800000
)

// movWide encodes MOVZ/MOVN/MOVK Xd, #imm16, LSL #shift.
func movWide(op uint32, rd int, imm16 uint64, shift int) uint32 {
	return op | uint32(shift/16)<<21 | uint32(imm16&0xffff)<<5 | uint32(rd&31)
}
