package kernelconf

import "testing"

// TestHintsKey checks that every combination of hints keys apart, and
// that no hints add nothing to a plan's key.
func TestHintsKey(t *testing.T) {
	seen := map[string]Hints{}
	for _, h := range []Hints{{}, {RowByRow: true}, {FromMemory: true}, {RowByRow: true, FromMemory: true}} {
		k := h.Key()
		if o, ok := seen[k]; ok {
			t.Errorf("hints %+v and %+v share key %q", h, o, k)
		}
		seen[k] = h
	}
	if k := (Hints{}).Key(); k != "" {
		t.Errorf("no hints give key %q", k)
	}
}
