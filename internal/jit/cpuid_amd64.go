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

// l3Bytes is the size of the last-level (L3) cache CPUID reports, from
// Intel's deterministic cache parameters (leaf 4) or, on a Zen core
// (zen), AMD's cache topology (leaf 0x8000001D), which share one layout;
// 0 where neither names an L3. Under a hypervisor it is the host's
// cache, which the guest shares with other tenants.
func l3Bytes(zen bool) int64 {
	leaf, top := uint32(4), uint32(0)
	if zen {
		leaf = 0x8000001D
		top, _, _, _ = cpuid(0x80000000, 0)
	} else {
		top, _, _, _ = cpuid(0, 0)
	}
	if top < leaf {
		return 0
	}
	for sub := uint32(0); sub < 16; sub++ {
		a, b, c, _ := cpuid(leaf, sub)
		if a&0x1f == 0 { // no more caches
			break
		}
		if a>>5&7 != 3 {
			continue
		}
		ways, parts, line := int64(b>>22&0x3ff)+1, int64(b>>12&0x3ff)+1, int64(b&0xfff)+1
		return ways * parts * line * (int64(c) + 1)
	}
	return 0
}

// l2Bytes is the size of one core's L2 cache as CPUID's leaf 0x80000006
// gives it in KiB, which AMD and Intel share (hypervisors pass it on
// where they hide the cache topology leaves l3Bytes reads); 0 where the
// CPU has no such leaf.
func l2Bytes() int64 {
	if top, _, _, _ := cpuid(0x80000000, 0); top < 0x80000006 {
		return 0
	}
	_, _, c, _ := cpuid(0x80000006, 0)
	return int64(c>>16) << 10
}

// le32 is v's four bytes, low first (CPUID's vendor string order).
func le32(v uint32) []byte {
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
}
