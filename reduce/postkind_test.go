package reduce

import (
	"testing"

	"github.com/gdnn/gdnn/internal/ops"
)

// postKindOf returns the PostKind of the unary plan kind k.
func postKindOf(t *testing.T, k ops.Kind) PostKind {
	t.Helper()
	for pk := PostKind(1); int(pk) < len(postKinds); pk++ {
		if postKinds[pk] == k {
			return pk
		}
	}
	t.Fatalf("no PostKind for %v", k)
	return 0
}

// TestPostKinds checks that every unary post-op kind the plan has is
// offered, once, under oneDNN Graph's name, and that no other value
// names one.
func TestPostKinds(t *testing.T) {
	seen := map[ops.Kind]PostKind{}
	for pk := PostKind(1); int(pk) < len(postKinds); pk++ {
		k, ok := pk.planKind()
		if !ok || !k.Valid() || k.IsBinary() {
			t.Fatalf("PostKind %d maps to %v", pk, k)
		}
		if prev, dup := seen[k]; dup {
			t.Fatalf("%v is both PostKind %d and %d", k, prev, pk)
		}
		seen[k] = pk
		if pk.String() != k.String() {
			t.Errorf("PostKind %d is %q, want %q", pk, pk.String(), k.String())
		}
	}
	for k := ops.Abs; k.Valid(); k++ {
		if _, ok := seen[k]; !ok && !k.IsBinary() {
			t.Errorf("unary post-op %v has no PostKind", k)
		}
	}
	for _, bad := range []PostKind{0, PostPow + 1, 255} {
		if _, ok := bad.planKind(); ok {
			t.Errorf("PostKind %d names a kind", bad)
		}
		if got, want := bad.String(), "PostKind("; len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("PostKind %d is %q", bad, got)
		}
	}
}
