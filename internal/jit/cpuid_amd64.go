package jit

// cpuid executes the CPUID instruction for leaf and sub-leaf sub.
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// zenCore reports whether the CPU is an AMD (or Hygon) core of family
// 19h or later (Zen 3, Zen 4, Zen 5), for which the amd64 code is tuned
// otherwise than for Intel's (amd64.Options.Zen).
func zenCore() bool {
	_, b, c, d := cpuid(0, 0)
	vendor := string(le32(b)) + string(le32(d)) + string(le32(c))
	if vendor != "AuthenticAMD" && vendor != "HygonGenuine" {
		return false
	}
	a, _, _, _ := cpuid(1, 0)
	family := a >> 8 & 0xf
	if family == 0xf {
		family += a >> 20 & 0xff
	}
	return family >= 0x19
}

// le32 is v's four bytes, low first (CPUID's vendor string order).
func le32(v uint32) []byte {
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
}
