package bench

import (
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/layout"
)

// tagAliases maps oneDNN's named format tags to their letter form.
var tagAliases = layout.Aliases()

// Layout is a resolved memory format tag (see package layout).
type Layout = layout.Layout

// ResolveTag resolves a benchdnn format tag for a tensor of the given
// rank (package layout has the grammar): plain and permuted tags ("abx",
// "axb", "acdb", "nhwc", ...) and blocked ones ("aBx16b", "ABcd32a16b",
// "nChw16c", ...). "any" gives Any. A malformed tag, or one that does not
// fit the rank, is graph.InvalidArguments.
func ResolveTag(tag string, rank int) (Layout, error) {
	return layout.Parse(tag, rank)
}

// plainOnly refuses a blocked layout where gdnnbench takes only plain
// ones (binary post-op operands, the graph driver's --in-shapes).
func plainOnly(l Layout, what string) error {
	if l.Blocked() {
		return status.Errorf(status.Unimplemented, "%s: blocked layout %q is not supported there (strided layouts only)", what, l.Tag)
	}
	return nil
}
