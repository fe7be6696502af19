package arm64

// Raw encodings of the native kernels (native.go): integer arithmetic in
// lanes of 8, 16, 32 and 64 bits, the compares of the 64-bit max and min
// (NEON has no SMAX, UMAX on 2D), the bitwise ops, the f64 max and min,
// the byte truth test and EXT. Each is checked against binutils
// (native_test.go, TestNativeWords).

// Integer vector ops by lane width: the 16B form, with the lane's log2
// bytes in bits 22-23 (intOp). MUL and the max and min have no 2D form.
const (
	opADDB  = 0x4E208400 // Vd = Vn + Vm (wraps)
	opMULB  = 0x4E209C00 // Vd = low half of Vn * Vm
	opSMAXB = 0x4E206400 // signed max
	opSMINB = 0x4E206C00 // signed min
	opUMAXB = 0x6E206400 // unsigned max
	opUMINB = 0x6E206C00 // unsigned min
)

// intOp is the integer op base (a 16B form) for lanes of 1<<size bytes.
func intOp(base uint32, size int64) uint32 { return base | uint32(size)<<22 }

// Fixed-width ops.
const (
	opCMGT2D   = 0x4EE03400 // all-ones where signed n > m
	opCMHI2D   = 0x6EE03400 // all-ones where unsigned n > m
	opAND      = 0x4E201C00 // Vd.16B = Vn AND Vm
	opORR      = 0x4EA01C00 // Vd.16B = Vn OR Vm
	opEOR      = 0x6E201C00 // Vd.16B = Vn XOR Vm
	opFMAX2D   = 0x4E60F400 // NaN if either is NaN; max(-0, +0) = +0
	opFMIN2D   = 0x4EE0F400 // NaN if either is NaN; min(-0, +0) = -0
	opCMTST16B = 0x4E208C00 // all-ones where Vn AND Vm != 0, bytes
	opFABS2D   = 0x4EE0F800 // Vd.2D = |Vn.2D|
)

// The integer mean's (intMean): widenings to 64-bit lanes, the
// conversions and the saturating narrows (SXTL and SCVTF: enc.go).
const (
	opUXTL32   = 0x2F20A400 // Vd.2D = u64(Vn.2S)
	opFCVTZS2D = 0x4EE1B800 // Vd.2D = s64(Vn.2D) toward zero, saturating, NaN -> 0
	opFCVTZU2D = 0x6EE1B800 // Vd.2D = u64(Vn.2D) toward zero, saturating, NaN -> 0
	opSQXTN2D  = 0x0EA14800 // Vd.2S = sat s32(Vn.2D)
	opUQXTN2D  = 0x2EA14800 // Vd.2S = sat u32(u64 Vn.2D)
	opUQXTN16  = 0x2E614800 // Vd.4H = sat u16(u32 Vn.4S)
)

// The 64-bit lane multiply's parts (mul64).
const (
	opREV644S  = 0x4EA00800 // Vd.4S = Vn.4S with the two halves of each 64-bit lane swapped
	opXTN2D    = 0x0EA12800 // Vd.2S = the low halves of Vn.2D, Vd's upper half zeroed
	opUADDLP4S = 0x6EA02800 // Vd.2D = the sums of Vn.4S's pairs, unsigned (exact)
	opSHL2D32  = 0x4F605400 // Vd.2D = Vn.2D << 32
	opUMLAL2S  = 0x2EA08000 // Vd.2D += u64(Vn.2S) * u64(Vm.2S)
)

// ext encodes EXT Vd.16B, Vn.16B, Vm.16B, #b: bytes b.. of n followed by
// the first b bytes of m.
func ext(d, n, m, b int) uint32 {
	return 0x6E000000 | uint32(m&31)<<16 | uint32(b&15)<<11 | uint32(n&31)<<5 | uint32(d&31)
}
