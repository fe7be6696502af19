package execmem

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

// blob frames payload as csops returns an entitlement blob.
func blob(magic uint32, payload string) []byte {
	b := make([]byte, 8, 8+len(payload)+16)
	binary.BigEndian.PutUint32(b, magic)
	binary.BigEndian.PutUint32(b[4:], uint32(8+len(payload)))
	// csops' buffer is larger than the blob; what follows is not read.
	return append(append(b, payload...), make([]byte, 16)...)
}

// plist is an XML entitlement list of the given key/value lines.
func plist(entries string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
` + entries + `
</dict>
</plist>
`
}

// derEntry is one DER key/value pair of an entitlement set: a SEQUENCE
// of the key as a UTF8String and the BOOLEAN value.
func derEntry(key string, v bool) string {
	b := byte(0)
	if v {
		b = 0xff
	}
	pair := append(append([]byte{0x0c, byte(len(key))}, key...), 0x01, 0x01, b)
	return string(append([]byte{0x30, byte(len(pair))}, pair...))
}

// TestCodeSigningVerdict runs macOS's executable-memory decision on
// hand-made flags and entitlement blobs: the hardened runtime refuses
// unless allow-unsigned-executable-memory (or the wider
// disable-executable-page-protection) is true, in either blob; allow-jit
// alone, a false value, no entitlements, a malformed or unreadable blob
// all refuse, naming the entitlement the app needs.
func TestCodeSigningVerdict(t *testing.T) {
	const unsigned = "com.apple.security.cs.allow-unsigned-executable-memory"
	const noProtection = "com.apple.security.cs.disable-executable-page-protection"
	const allowJIT = "com.apple.security.cs.allow-jit"
	none := make([]byte, 4096) // csops' answer without entitlements: a zero header
	readErr := errors.New("EPERM")
	xmlTrue := blob(xmlEntitlementsMagic, plist("\t<key>"+unsigned+"</key>\n\t<true/>"))
	for _, c := range []struct {
		name    string
		flags   uint32
		xml     []byte
		xmlErr  error
		der     []byte
		derErr  error
		allowed bool
		say     string // in the error, besides the entitlement
	}{
		{"no hardened runtime", 0x20002, nil, readErr, nil, readErr, true, ""},
		{"hardened, XML true", csRuntime | 0x300, xmlTrue, nil, none, nil, true, ""},
		{"hardened, XML true, DER unread", csRuntime, xmlTrue, nil, nil, readErr, true, ""},
		{"hardened, page protection off", csRuntime, blob(xmlEntitlementsMagic, plist("<key>"+noProtection+"</key><true/>")), nil, none, nil, true, ""},
		{"hardened, DER true", csRuntime, none, nil, blob(derEntitlementsMagic, "\x31\x00"+derEntry(allowJIT, true)+derEntry(unsigned, true)), nil, true, ""},
		{"hardened, allow-jit only", csRuntime, blob(xmlEntitlementsMagic, plist("<key>"+allowJIT+"</key><true/>")), nil,
			blob(derEntitlementsMagic, derEntry(allowJIT, true)), nil, false, "allow-jit covers MAP_JIT"},
		{"hardened, XML false", csRuntime, blob(xmlEntitlementsMagic, plist("<key>"+unsigned+"</key>\n<false/><key>x</key><true/>")), nil, none, nil, false, ""},
		{"hardened, DER false", csRuntime, none, nil, blob(derEntitlementsMagic, derEntry(unsigned, false)), nil, false, ""},
		{"hardened, no entitlements", csRuntime, none, nil, none, nil, false, ""},
		{"hardened, unreadable", csRuntime, nil, readErr, nil, readErr, false, "EPERM"},
		{"hardened, bad magic", csRuntime, blob(0xfade0c02, plist("<key>"+unsigned+"</key><true/>")), nil, none, nil, false, "magic"},
		{"hardened, short", csRuntime, []byte{0xfa, 0xde}, nil, none, nil, false, "shorter than its header"},
		{"hardened, length past the buffer", csRuntime, xmlTrue[:40], nil, none, nil, false, "outside"},
	} {
		err := codeSigningVerdict(c.flags, c.xml, c.xmlErr, c.der, c.derErr)
		if c.allowed {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if !errors.Is(err, status.RuntimeError) || !strings.Contains(err.Error(), unsigned) || !strings.Contains(err.Error(), c.say) {
			t.Errorf("%s: %v, want RuntimeError naming %s and %q", c.name, err, unsigned, c.say)
		}
	}
}
