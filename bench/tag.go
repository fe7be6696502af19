package bench

import (
	"strings"

	"github.com/gdnn/gdnn/graph"
)

// tagAliases maps oneDNN's named format tags to their letter form.
var tagAliases = map[string]string{
	"x": "a", "nc": "ab", "cn": "ba", "tn": "ab", "nt": "ba", "ncw": "abc", "nwc": "acb",
	"nchw": "abcd", "nhwc": "acdb", "chwn": "bcda", "ncdhw": "abcde", "ndhwc": "acdeb",
	"tnc": "abc", "ntc": "bac",
	// Blocked ones (valid input, unimplemented: see ResolveTag).
	"nCw4c": "aBc4b", "nCw8c": "aBc8b", "nCw16c": "aBc16b",
	"nChw4c": "aBcd4b", "nChw8c": "aBcd8b", "nChw16c": "aBcd16b",
	"nCdhw4c": "aBcde4b", "nCdhw8c": "aBcde8b", "nCdhw16c": "aBcde16b",
	"NCw16n16c": "ABc16a16b", "NChw16n16c": "ABcd16a16b", "NCdhw16n16c": "ABcde16a16b",
	"NChw32n32c": "ABcd32a32b", "NCdhw32n32c": "ABcde32a32b",
}

// Layout is a resolved memory format tag: the order of the dims from the
// outermost to the innermost (Order), or Any when the library chooses.
type Layout struct {
	Tag   string // as given
	Any   bool
	Order []int
}

// ResolveTag resolves a benchdnn format tag for a tensor of the given
// rank. Plain and permuted tags ("abx", "axb", "acdb", "nhwc", ...) give a
// dim order; "x" in a tag stands for the dims not named otherwise, in
// increasing order, and letters beyond the rank are dropped from such tags
// (so "axb" is "a" for rank 1 and "acdb" for rank 4). "any" gives Any.
// Blocked tags (uppercase letters with inner blocks, e.g. "aBx16b") are
// valid benchdnn input that gdnn does not implement: the error has status
// graph.Unimplemented. Anything else is graph.InvalidArguments.
func ResolveTag(tag string, rank int) (Layout, error) {
	l := Layout{Tag: tag}
	if tag == "any" {
		l.Any = true
		return l, nil
	}
	if tag == "" || tag == "undef" {
		return l, graph.Errorf(graph.InvalidArguments, "tag %q: empty or undef tag", tag)
	}
	t := tag
	if a, ok := tagAliases[t]; ok {
		t = a
	}
	// Split the outer part (letters, maybe an 'x') from inner blocks ("16b").
	outer := t
	inner := ""
	if i := strings.IndexAny(t, "0123456789"); i >= 0 {
		outer, inner = t[:i], t[i:]
	}
	blocked := inner != ""
	seen := map[int]bool{}
	upper := map[int]bool{}
	var letters []rune
	xPos := -1
	for _, c := range outer {
		switch {
		case c == 'x':
			if xPos >= 0 {
				return l, graph.Errorf(graph.InvalidArguments, "tag %q: 'x' appears twice", tag)
			}
			xPos = len(letters)
		case c >= 'a' && c <= 'l', c >= 'A' && c <= 'L':
			d := int(c - 'a')
			if c <= 'L' {
				d = int(c - 'A')
				blocked = true
				upper[d] = true
			}
			if seen[d] {
				return l, graph.Errorf(graph.InvalidArguments, "tag %q: dim %c appears twice", tag, c)
			}
			seen[d] = true
			letters = append(letters, c)
		default:
			return l, graph.Errorf(graph.InvalidArguments, "tag %q: unexpected character %q", tag, c)
		}
	}
	if err := checkBlocks(tag, inner, upper); err != nil {
		return l, err
	}
	var order []int
	if xPos >= 0 {
		var kept []int
		for _, c := range letters {
			if d := dimOf(c); d < rank {
				kept = append(kept, d)
			}
		}
		var rest []int
		for d := 0; d < rank; d++ {
			if !seen[d] {
				rest = append(rest, d)
			}
		}
		keptBefore := 0
		for _, c := range letters[:xPos] {
			if dimOf(c) < rank {
				keptBefore++
			}
		}
		order = append(append(append(order, kept[:keptBefore]...), rest...), kept[keptBefore:]...)
	} else {
		for _, c := range letters {
			order = append(order, dimOf(c))
		}
		if len(order) != rank {
			return l, graph.Errorf(graph.InvalidArguments, "tag %q describes %d dims but the tensor has rank %d", tag, len(order), rank)
		}
		for d := 0; d < rank; d++ {
			if !seen[d] {
				return l, graph.Errorf(graph.InvalidArguments, "tag %q: dim %c is missing", tag, rune('a'+d))
			}
		}
	}
	if blocked {
		return l, graph.Errorf(graph.Unimplemented, "blocked layout %q is not supported by gdnn (strided layouts only)", tag)
	}
	l.Order = order
	return l, nil
}

// dimOf returns the dim index of a tag letter of either case.
func dimOf(c rune) int {
	if c >= 'A' && c <= 'L' {
		return int(c - 'A')
	}
	return int(c - 'a')
}

// checkBlocks validates inner blocks such as "16a16b": each a positive
// size followed by the lowercase letter of a dim that the outer part
// names in uppercase.
func checkBlocks(tag, inner string, upper map[int]bool) error {
	for inner != "" {
		i := 0
		for i < len(inner) && inner[i] >= '0' && inner[i] <= '9' {
			i++
		}
		if i == 0 || i == len(inner) || inner[0] == '0' {
			return graph.Errorf(graph.InvalidArguments, "tag %q: malformed inner block %q (want SIZE then a dim letter)", tag, inner)
		}
		c := rune(inner[i])
		if c < 'a' || c > 'l' || !upper[int(c-'a')] {
			return graph.Errorf(graph.InvalidArguments, "tag %q: inner block names dim %q which the tag does not block", tag, c)
		}
		inner = inner[i+1:]
	}
	return nil
}

// Strides returns the strides (elements) of a dense tensor with the given
// dims laid out in order (outermost first).
func (l Layout) Strides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(l.Order) - 1; i >= 0; i-- {
		d := l.Order[i]
		s[d] = acc
		if dims[d] > 0 {
			acc *= dims[d]
		}
	}
	return s
}
