package execmem

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/gdnn/gdnn/internal/status"
)

// macOS's code-signing policy for memory that gdnn makes executable.
//
// A process signed with the hardened runtime (what notarization asks
// for) runs pages that were written at run time and then made executable
// only if it holds one of the entitlements in unsignedExecEntitlements;
// without one, macOS may let the mprotect pass (some versions refuse it
// instead) and kill the process when it first executes such a page,
// which no fallback can catch. So New asks first, through csops(2): the
// process's code-signing flags say whether the hardened runtime is on
// (csRuntime), and its entitlements say whether unsigned executable
// memory is allowed. The decision is made here, in code that the tests
// run on every OS; the darwin file only reads the flags and the
// entitlement blobs.
//
// com.apple.security.cs.allow-jit is not enough: it allows MAP_JIT
// mappings, and gdnn maps without MAP_JIT (write, then read+execute,
// never both), which is what allow-unsigned-executable-memory covers.

// csRuntime is CS_RUNTIME, the hardened-runtime bit of csops'
// CS_OPS_STATUS flags (xnu's osfmk/kern/cs_blobs.h).
const csRuntime = 0x00010000

// The magic numbers of the entitlement blobs csops returns
// (CSMAGIC_EMBEDDED_ENTITLEMENTS, CSMAGIC_EMBEDDED_DER_ENTITLEMENTS).
const (
	xmlEntitlementsMagic = 0xfade7171
	derEntitlementsMagic = 0xfade7172
)

// unsignedExecEntitlements are the entitlements under which the hardened
// runtime runs pages written at run time: the one meant for it, and the
// one that turns off executable-page protection altogether.
var unsignedExecEntitlements = []string{
	"com.apple.security.cs.allow-unsigned-executable-memory",
	"com.apple.security.cs.disable-executable-page-protection",
}

// blobPayload returns the payload of an entitlement blob as csops fills
// a buffer with it: a big-endian magic and total length, then the data.
// A header of zeros is csops' answer for a process without entitlements
// (nil, no error).
func blobPayload(b []byte, magic uint32) ([]byte, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("entitlement blob of %d bytes: shorter than its header", len(b))
	}
	m, n := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	switch {
	case m == 0 && n == 0:
		return nil, nil
	case m != magic:
		return nil, fmt.Errorf("entitlement blob magic %#x, want %#x", m, magic)
	case n < 8 || uint64(n) > uint64(len(b)):
		return nil, fmt.Errorf("entitlement blob length %d outside its %d bytes", n, len(b))
	}
	return b[8:n], nil
}

// entitledXML reports whether an XML property list grants key as true:
// <key>key</key>, white space, <true/>.
func entitledXML(plist []byte, key string) bool {
	k := []byte("<key>" + key + "</key>")
	for rest := plist; ; {
		i := bytes.Index(rest, k)
		if i < 0 {
			return false
		}
		rest = rest[i+len(k):]
		if bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte("<true/>")) {
			return true
		}
	}
}

// entitledDER reports whether a DER entitlement set grants key as true:
// the key as a UTF8String (tag 0x0c, short length) followed at once by
// the BOOLEAN true (01 01 ff), the pair's value.
func entitledDER(der []byte, key string) bool {
	if len(key) > 127 {
		return false
	}
	k := append([]byte{0x0c, byte(len(key))}, key...)
	k = append(k, 0x01, 0x01, 0xff)
	return bytes.Contains(der, k)
}

// codeSigningVerdict decides, from a process's code-signing flags and
// its entitlement blobs (as read by csops, with the errors of reading
// them), whether pages gdnn writes and makes executable may run. It
// returns nil when they may, else an error saying why not and what the
// app needs; an entitlement that cannot be read counts as absent, as
// the safe answer is the interpreter.
func codeSigningVerdict(flags uint32, xml []byte, xmlErr error, der []byte, derErr error) error {
	if flags&csRuntime == 0 {
		return nil
	}
	var unread []string
	if xmlErr == nil {
		if p, err := blobPayload(xml, xmlEntitlementsMagic); err != nil {
			unread = append(unread, err.Error())
		} else {
			for _, k := range unsignedExecEntitlements {
				if entitledXML(p, k) {
					return nil
				}
			}
		}
	} else {
		unread = append(unread, "XML entitlements: "+xmlErr.Error())
	}
	if derErr == nil {
		if p, err := blobPayload(der, derEntitlementsMagic); err != nil {
			unread = append(unread, err.Error())
		} else {
			for _, k := range unsignedExecEntitlements {
				if entitledDER(p, k) {
					return nil
				}
			}
		}
	} else {
		unread = append(unread, "DER entitlements: "+derErr.Error())
	}
	why := ""
	if len(unread) > 0 {
		why = fmt.Sprintf(" (unread: %v)", unread)
	}
	return status.Errorf(status.RuntimeError, "execmem: the process runs under macOS's hardened runtime without the %s entitlement, "+
		"so macOS would refuse the code gdnn maps or kill the process at its first call (allow-jit covers MAP_JIT memory only, which gdnn does not use)%s",
		unsignedExecEntitlements[0], why)
}
